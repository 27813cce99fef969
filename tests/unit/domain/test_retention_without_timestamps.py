"""Records without a timestamp (-1) and retention (issue 44, item 1), on the in-memory adapter.

librdkafka's `produce(..., timestamp=-1)` sends batches whose records carry -1 and whose header says
MaxTimestamp 0; kafka-python's builder writes -1 in both. Kafka computes the batch's max timestamp
from its records (LogValidator), and a segment none of whose records has a timestamp is kept by the
time it was last written (LogSegment.largestTimestamp), so such records live `retention.ms` after
they were written. Time is a manual clock given to the store; nothing sleeps.
"""

from __future__ import annotations

import struct

import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.batches import make_batch
from tests.unit.conftest import sequential_ids
from trafka.adapters.compression import decompress
from trafka.adapters.memory import MemoryCatalogStore, MemoryLogStore
from trafka.domain.batch import BatchHeader
from trafka.domain.catalog import TopicCatalog
from trafka.domain.compaction.selection import cleanable_offsets
from trafka.domain.configs import BrokerPolicy
from trafka.domain.replica_manager import ReplicaManager
from trafka.domain.retention import SegmentInfo, retention_cut
from trafka.domain.topics import TopicPartition

START = 1_700_000_000_000
TP = TopicPartition("t", 0)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> int:
        return self.now


class Broker:
    """The domain on the memory store, whose segments are stamped by a manual clock."""

    def __init__(self, configs: dict[str, str]) -> None:
        self.clock = Clock()
        self.logs = MemoryLogStore(clock_ms=self.clock)
        catalog = TopicCatalog(MemoryCatalogStore(), self.logs, BrokerPolicy(), sequential_ids())
        catalog.create("t", 1, 1, configs)
        self.replicas = ReplicaManager(catalog, self.logs, BrokerPolicy(), crc32c.crc32c, decompress)

    def produce(self, batch: bytes) -> int:
        result = self.replicas.produce(TP, batch, self.clock.now)
        assert result.error == 0, result
        return result.base_offset

    def start(self) -> int:
        watermarks = self.replicas.watermarks(TP)
        assert watermarks is not None
        return watermarks[0]


def librdkafka_batch(timestamps: list[int], compression: int = 0) -> bytes:
    """A batch as librdkafka's msgset writer builds it: BaseTimestamp the first record's, MaxTimestamp
    the largest of 0 and the records' (0 when every record has -1), CRC over that."""
    batch = bytearray(make_batch([(ts, None, b"v%d" % i) for i, ts in enumerate(timestamps)], compression))
    struct.pack_into(">q", batch, 35, max([0, *timestamps]))
    struct.pack_into(">I", batch, 17, crc32c.crc32c(bytes(batch[21:])))
    return bytes(batch)


def test_a_librdkafka_batch_without_timestamps_is_stored_with_max_timestamp_minus_one():
    broker = Broker({})
    broker.produce(librdkafka_batch([-1, -1, -1]))
    stored = broker.replicas.fetch(TP, 0, 1 << 20, True).records
    header = BatchHeader.parse(stored)
    assert (header.base_timestamp, header.max_timestamp) == (-1, -1)
    assert crc32c.crc32c(stored[21:]) == header.crc
    info = broker.replicas.segment_infos(TP)
    assert info is not None and info[0].max_timestamp == -1


def test_a_compressed_librdkafka_batch_gets_the_records_max_timestamp():
    broker = Broker({})
    broker.produce(librdkafka_batch([-1, START - 5, -1], compression=1))  # gzip
    stored = broker.replicas.fetch(TP, 0, 1 << 20, True).records
    assert BatchHeader.parse(stored).max_timestamp == START - 5


def test_records_without_a_timestamp_live_retention_ms_after_they_were_written():
    broker = Broker({"retention.ms": "60000", "internal.segment.bytes": "100"})
    for _ in range(3):
        broker.produce(librdkafka_batch([-1] * 5))  # each batch over 100 bytes: a segment each
    broker.clock.now += 120_000  # the next retention check, as in the issue: nothing has expired
    broker.produce(make_batch([(-1, None, b"late")]))  # kafka-python: -1 in the header too
    assert broker.replicas.enforce_retention(broker.clock.now - 60_000) == {}
    assert broker.replicas.enforce_retention(broker.clock.now) == {TP: 15}  # the first three: 2 min old
    assert broker.start() == 15
    broker.clock.now += 60_000
    assert broker.replicas.enforce_retention(broker.clock.now) == {}  # exactly retention.ms: kept
    broker.clock.now += 1
    assert broker.replicas.enforce_retention(broker.clock.now) == {TP: 16}  # the active one rolls and goes


def test_retention_cut_falls_back_to_the_last_write_only_without_record_timestamps():
    now = 1_000_000
    segments = [SegmentInfo(0, 10, 100, -1, now - 500), SegmentInfo(10, 20, 100, 0, now), SegmentInfo(20, 30, 1, -1, 0)]
    assert retention_cut(segments, 1000, -1, now) is None  # written 500 ms ago: kept, and so is what follows
    assert retention_cut(segments, 400, -1, now) == 20  # a record timestamp of 0 is old, whatever the write time


def test_min_compaction_lag_counts_from_the_last_write_without_record_timestamps():
    now = 1_000_000
    segments = [SegmentInfo(0, 10, 100, -1, now - 500), SegmentInfo(10, 20, 100, -1, now)]
    assert cleanable_offsets(segments, 0, 20, None, 20, now, 1000)[1] == 0  # too recent to clean
    assert cleanable_offsets(segments, 0, 20, None, 20, now, 400)[1] == 10  # the active segment is never


timestamps = st.lists(st.one_of(st.just(-1), st.integers(0, START + 30_000)), min_size=1, max_size=4)
steps = st.lists(
    st.one_of(
        st.tuples(
            st.just("produce"), timestamps, st.sampled_from(["librdkafka", "kafka-python"]), st.sampled_from([0, 1])
        ),
        st.tuples(st.just("advance"), st.integers(0, 40_000)),
        st.tuples(st.just("retention")),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(
    retention_ms=st.one_of(st.just(-1), st.integers(0, 30_000)),
    segment_bytes=st.integers(80, 600),
    steps=steps,
)
def test_no_record_is_deleted_before_its_segment_is_past_retention_ms(retention_ms, segment_bytes, steps):
    """Property: whatever the mix of record timestamps (-1 included), batch shapes, codecs, segment
    sizes and retention.ms, retention deletes a record only when `retention.ms` has passed since
    - its segment's largest record timestamp (so since its own timestamp too), or
    - when no record of its segment has a timestamp, the time it was written.
    Kafka keeps a segment by its largest record timestamp whenever one record has a timestamp
    (LogSegment.largestTimestamp); records without one that share a segment with timestamped records
    follow those."""
    broker = Broker({"retention.ms": str(retention_ms), "internal.segment.bytes": str(segment_bytes)})
    written: dict[int, tuple[int, int]] = {}  # offset -> (record timestamp, when it was written)
    for step in steps:
        if step[0] == "produce":
            _, stamps, shape, codec = step
            if shape == "librdkafka":
                batch = librdkafka_batch(stamps, codec)
            else:
                batch = make_batch([(ts, None, b"v") for ts in stamps], codec)
            base = broker.produce(batch)
            for i, ts in enumerate(stamps):
                written[base + i] = (ts, broker.clock.now)
        elif step[0] == "advance":
            broker.clock.now += step[1]
        else:
            now = broker.clock.now
            before = broker.replicas.segment_infos(TP)
            assert before is not None
            start = broker.start()
            broker.replicas.enforce_retention(now)
            for segment in before:
                offsets = [o for o in range(segment.base_offset, segment.next_offset) if o < broker.start()]
                if not offsets or segment.base_offset < start:
                    continue
                records = [written[o] for o in range(segment.base_offset, segment.next_offset)]
                largest = max(ts for ts, _ in records)
                if largest >= 0:
                    assert now - largest > retention_ms >= 0
                else:  # no record of the segment has a timestamp: each lived retention.ms since written
                    assert all(now - at > retention_ms >= 0 for _, at in records)
