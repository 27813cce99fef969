"""read_committed fetches without a walk of the batches read (ADR 90), proven against the walk.

`walked_fetch` is the fetch path as it was: read the batches, walk every header of them to cut at
the last stable offset and find the last offset, then ask the transaction index. The fast path asks
the log for the batches below the last stable offset (`PartitionLog.read_below`), which finds the
cut through the offset index and the tail. Hypothesis builds logs of plain batches and transactions
(open, committed, aborted, interleaved, spanning segments), cleans some (compaction), restarts the
filesystem store from its files (cleanly or not), and every fetch from every offset, at several
`max_bytes`, both isolation levels, must answer exactly what the walk answers, on both stores.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid

import crc32c
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.batches import make_batch
from tests.unit.conftest import sequential_ids
from trafka.adapters.compression import compress, decompress
from trafka.adapters.filesystem import FileLogStore, LogDir, segment_reader
from trafka.adapters.memory import MemoryCatalogStore, MemoryLogStore
from trafka.domain.batch import iter_batches
from trafka.domain.catalog import TopicCatalog
from trafka.domain.compaction import Cleaner, CompactionConfig, cleanable_offsets, log_to_clean
from trafka.domain.configs import BrokerPolicy
from trafka.domain.errors import ErrorCode
from trafka.domain.fetch_read import FetchResult
from trafka.domain.replica_manager import ReplicaManager
from trafka.domain.topics import TopicPartition

TP = TopicPartition("t", 0)
NOW = 1_700_000_000_000
CONFIGS = {"internal.segment.bytes": "700", "index.interval.bytes": "150", "cleanup.policy": "compact"}
CLEANER = Cleaner(crc32c.crc32c, decompress, compress, 1 << 20)
COMPACTION = CompactionConfig(delete_retention_ms=1000, segment_bytes=700)


def walked_read(log, offset: int, max_bytes: int, min_one: bool) -> bytes:
    """`PartitionLog.read` by its definition: the rest of the segment from the batch holding `offset`
    (a read that needs no cut), then whole batches walked one by one while they fit."""
    rest = log.read(offset, 1 << 40, True)
    end = 0
    for pos, header in iter_batches(rest):
        if pos + header.size > max_bytes and (end or not min_one):
            break
        end = pos + header.size
    return rest[:end]


def walked_fetch(replicas: ReplicaManager, log, offset: int, max_bytes: int, min_one: bool, committed: bool):
    """The fetch as it was before ADR 90: every batch header of the range read walked in Python."""
    end, start = log.log_end_offset, log.log_start_offset
    stable = replicas.last_stable_offset(TP, log)
    if offset < start or offset > end:
        return FetchResult(ErrorCode.OFFSET_OUT_OF_RANGE, end, stable, start)
    limit = stable if committed else end
    records = walked_read(log, offset, max_bytes, min_one) if offset < limit else b""
    if not committed:
        return FetchResult(ErrorCode.NONE, end, stable, start, records)
    cut, last = 0, offset
    for pos, header in iter_batches(records):
        if header.base_offset >= stable:
            break
        cut, last = pos + header.size, header.last_offset
    records = records[:cut]
    aborted = tuple(log.aborted_transactions(offset, last)) if records else ()
    return FetchResult(ErrorCode.NONE, end, stable, start, records, aborted)


class Broker:
    """The domain on one store; the filesystem one restarts from its files."""

    def __init__(self, kind: str, configs: dict[str, str] = CONFIGS) -> None:
        self.kind = kind
        self.configs = configs
        self.catalog_store = MemoryCatalogStore()
        self.dir = tempfile.mkdtemp() if kind == "filesystem" else None
        self.open(first=True)

    def open(self, first: bool = False) -> None:
        if self.dir is None:
            self.logs = MemoryLogStore()
        else:
            self.logdir = LogDir.open(self.dir, 1, uuid.UUID(int=1), uuid.UUID(int=2))
            self.logs = FileLogStore(self.logdir, crc32c.crc32c, lambda: NOW)
        policy = BrokerPolicy()
        self.catalog = TopicCatalog(self.catalog_store, self.logs, policy, sequential_ids())
        if first:
            self.catalog.create("t", 1, 1, self.configs)
        if self.dir is not None:
            self.logdir.start()
        self.replicas = ReplicaManager(self.catalog, self.logs, policy, crc32c.crc32c, decompress)
        self.replicas.admission.transaction_check = lambda *_: ErrorCode.NONE  # the coordinator is not under test

    @property
    def log(self):
        return self.logs.get(TP)

    def restart(self, clean: bool) -> None:
        assert self.dir is not None
        if clean:
            self.replicas.snapshot_producers()
            self.logs.close()
            self.logdir.mark_clean_shutdown()
        else:  # as kill -9: no producer snapshot, no clean-shutdown marker
            for partition_log in self.logs.logs().values():
                partition_log.close()
        self.logdir.unlock()
        self.open()

    def clean(self) -> None:
        log = self.log
        segments = log.segment_infos()
        stable = self.replicas.last_stable_offset(TP, log)
        first_dirty, uncleanable, _ = cleanable_offsets(
            segments, log.log_start_offset, log.log_end_offset, None, stable, NOW, 0
        )
        CLEANER.clean(
            log,
            log_to_clean(TP, segments, first_dirty, uncleanable),
            COMPACTION,
            self.replicas.last_records_of_active_producers(TP, log),
            NOW,
            log.replace_segments,
        )

    def close(self) -> None:
        if self.dir is not None:
            for partition_log in self.logs.logs().values():
                partition_log.close()
            self.logdir.unlock()
            shutil.rmtree(self.dir)


KEYS = [b"a", b"b", b"c", b"d"]
txn_step = st.tuples(st.just("txn"), st.integers(1, 2), st.integers(1, 4), st.integers(0, 120))
end_step = st.tuples(st.just("end"), st.integers(1, 2), st.booleans())
steps = st.lists(
    st.one_of(  # transaction steps twice: open, committed and aborted transactions are the point
        txn_step,
        end_step,
        txn_step,
        end_step,
        st.tuples(st.just("plain"), st.integers(1, 4), st.integers(0, 120)),
        st.tuples(st.just("roll")),
        st.tuples(st.just("clean")),
        st.tuples(st.just("restart"), st.booleans()),
    ),
    min_size=1,
    max_size=40,
)


def build(broker: Broker, plan) -> None:
    sequences: dict[int, int] = {}
    open_txns: set[int] = set()
    for step in plan:
        kind = step[0]
        if kind in ("plain", "txn"):
            producer_id = step[1] if kind == "txn" else -1
            count, size = step[-2], step[-1]
            records = [(NOW + i, KEYS[(size + i) % len(KEYS)], b"v" * size) for i in range(count)]
            sequence = sequences.get(producer_id, 0)
            batch = make_batch(
                records,
                producer_id=producer_id,
                producer_epoch=0 if kind == "txn" else -1,
                base_sequence=sequence if kind == "txn" else -1,
                transactional=kind == "txn",
            )
            result = broker.replicas.produce(TP, batch, NOW, "tx" if kind == "txn" else None)
            assert result.error == ErrorCode.NONE, result
            if kind == "txn":
                sequences[producer_id] = sequence + count
                open_txns.add(producer_id)
        elif kind == "end" and step[1] in open_txns:
            assert broker.replicas.write_marker(TP, step[1], 0, step[2], NOW) == ErrorCode.NONE
            open_txns.discard(step[1])
        elif kind == "roll":
            broker.log.roll()
        elif kind == "clean":
            broker.clean()
        elif kind == "restart" and broker.dir is not None:
            broker.restart(step[1])


def assert_every_fetch_agrees(broker: Broker) -> int:
    log = broker.log
    compared = 0
    for offset in range(log.log_start_offset - 1, log.log_end_offset + 2):
        for max_bytes in (1, 100, 300, 1000, 1 << 20):
            for min_one in (True, False):
                for committed in (True, False):
                    fast = broker.replicas.fetch(TP, offset, max_bytes, min_one, committed)
                    walked = walked_fetch(broker.replicas, log, offset, max_bytes, min_one, committed)
                    assert fast == walked, (offset, max_bytes, min_one, committed)
                    compared += 1
    return compared


@pytest.mark.parametrize("kind", ["memory", "filesystem"])
@settings(
    max_examples=int(os.environ.get("TRAFKA_FETCH_EXAMPLES", "80")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(plan=steps)
def test_read_committed_fetch_answers_what_the_walk_answers(kind, plan):
    broker = Broker(kind)
    try:
        build(broker, plan)
        assert assert_every_fetch_agrees(broker) > 0
    finally:
        broker.close()


@pytest.mark.parametrize("kind", ["memory", "filesystem"])
def test_a_layout_with_every_kind_of_transaction(kind):
    """One fixed log that holds each case at once: a committed and an aborted transaction spanning
    segments, interleaved producers, a compacted prefix, a restart, and one transaction left open."""
    plan = [
        ("plain", 3, 50),
        ("txn", 1, 2, 80),
        ("plain", 2, 10),
        ("txn", 2, 3, 60),
        ("roll",),
        ("txn", 1, 1, 90),
        ("end", 1, False),
        ("plain", 4, 20),
        ("end", 2, True),
        ("roll",),
        ("clean",),
        ("restart", False),
        ("txn", 3, 2, 40),
        ("plain", 2, 30),
        ("txn", 1, 2, 70),
        ("plain", 1, 5),
    ]
    broker = Broker(kind)
    try:
        build(broker, plan)
        stable = broker.replicas.last_stable_offset(TP, broker.log)
        assert stable < broker.log.log_end_offset  # producer 3's transaction is still open
        assert broker.log.aborted_transactions(0, 1 << 62)  # producer 1's first one was aborted
        assert len(stored_offsets(broker.log)) < broker.log.log_end_offset  # the cleaner removed records
        assert assert_every_fetch_agrees(broker) > 0
    finally:
        broker.close()


def stored_offsets(log) -> set[int]:
    """The offsets the log's batches cover, read segment after segment."""
    covered: set[int] = set()
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        batches = [header for _, header in iter_batches(log.read(offset, 1 << 30, True))]
        if not batches:
            break
        covered.update(o for header in batches for o in range(header.base_offset, header.last_offset + 1))
        offset = batches[-1].last_offset + 1
    return covered


class CountingStruct:
    """A struct.Struct that counts its unpacks: the per-batch work of a walk."""

    def __init__(self, real, calls: list[int]) -> None:
        self.real, self.calls = real, calls

    def unpack(self, *args):
        self.calls.append(1)
        return self.real.unpack(*args)

    def unpack_from(self, *args):
        self.calls.append(1)
        return self.real.unpack_from(*args)


@pytest.mark.parametrize("max_bytes", [1 << 20, 20_000])
def test_a_read_committed_fetch_walks_no_batch_of_the_range(monkeypatch, max_bytes):
    """A fetch over hundreds of small batches, below an open transaction or with none, reads a
    bounded number of batch lengths (from the offset index entry or the tail on), whatever the
    range: the walk of every header is gone. Both a sealed segment (index only) and the active one
    (index and tail)."""
    broker = Broker("filesystem", {"segment.bytes": str(1 << 20), "index.interval.bytes": "4096"})
    try:
        for _ in range(600):
            assert broker.replicas.produce(TP, make_batch([(NOW, b"k", b"v" * 20)]), NOW).error == 0
        broker.log.roll()
        for _ in range(600):
            assert broker.replicas.produce(TP, make_batch([(NOW, b"k", b"v" * 20)]), NOW).error == 0
        open_txn = make_batch([(NOW, b"k", b"t")], producer_id=7, producer_epoch=0, base_sequence=0, transactional=True)
        assert broker.replicas.produce(TP, open_txn, NOW, "tx").error == 0
        for _ in range(100):
            assert broker.replicas.produce(TP, make_batch([(NOW, b"k", b"v" * 20)]), NOW).error == 0
        calls: list[int] = []
        for name in ("_LENGTH", "_LENGTH_AND_DELTA"):
            monkeypatch.setattr(segment_reader, name, CountingStruct(getattr(segment_reader, name), calls))
        for offset in (0, 300, 600, 900):
            calls.clear()
            fetched = broker.replicas.fetch(TP, offset, max_bytes, True, read_committed=True)
            batches = len(list(iter_batches(fetched.records)))
            assert batches > 100 and fetched.aborted == ()
            # At most two walks of one index interval (the cut's batch, the batch before it) and a few
            # lookups, however many batches the range holds.
            assert len(calls) <= 2 * (4096 // 85 + 1) + 4, (offset, len(calls), batches)
    finally:
        broker.close()
