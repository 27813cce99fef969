"""Group metadata in `__consumer_offsets`, as the file store writes and replays it: Kafka's
GroupMetadataKey v2 / GroupMetadataValue v3 bytes, every value version Kafka has written read back,
tombstones that keep a deleted group gone, and the log cleaner's compaction keeping the live groups
(start-up replays the log as it is, rewriting nothing). The memory store keeps the same contract."""

from __future__ import annotations

import struct
import uuid

import crc32c
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trafka.adapters.compression import compress, decompress
from trafka.adapters.compression.keys import scan_keys
from trafka.adapters.filesystem import FileLogStore, LogDir
from trafka.adapters.filesystem.internal_log import InternalLog
from trafka.adapters.filesystem.metadata_records import GroupMetadataValue, encode_versioned, iter_records
from trafka.adapters.filesystem.offset_store import FileOffsetStore, _decode_group, _group_value
from trafka.adapters.memory.offset_store import MemoryOffsetStore
from trafka.domain.compaction import Cleaner, CompactionConfig, cleanable_offsets, log_to_clean
from trafka.domain.groups.group_metadata import CommittedOffset, GroupMetadata, MemberMetadata
from trafka.domain.topics import TopicPartition

OFFSETS = TopicPartition("__consumer_offsets", 0)
MEMBER = MemberMetadata("m-1", "instance-1", "client", "/10.0.0.1", 300_000, 45_000, b"\x00\x01sub", b"\x00\x01asg")
STABLE = GroupMetadata("consumer", 7, "range", "m-1", 1_700_000_000_000, (MEMBER,))
CHURN = 1000


def clean(log) -> None:
    """What the log cleaner does to `__consumer_offsets-0` (broker.compact): roll, clean everything."""
    log.roll()
    segments = log.segment_infos()
    end = log.log_end_offset
    first, uncleanable, _ = cleanable_offsets(segments, log.log_start_offset, end, None, end, 1_000, 0)
    cleaner = Cleaner(crc32c.crc32c, decompress, compress, 1 << 20, scan_keys=scan_keys)
    cleaner.clean(
        log, log_to_clean(OFFSETS, segments, first, uncleanable), CompactionConfig(), {}, 1_000, log.replace_segments
    )


def record_count(log) -> int:
    return sum(header.records_count for header in log.batch_headers(0))


class FileStores:
    def __init__(self, path: str) -> None:
        self.path = path
        self.logdir = None

    def open(self) -> FileOffsetStore:
        if self.logdir is not None:
            self.logs.close()
            self.logdir.unlock()
        self.logdir = LogDir.open(self.path, 1, uuid.UUID(int=1), uuid.UUID(int=2))
        self.logs = FileLogStore(self.logdir, crc32c.crc32c, lambda: 1_000)
        self.log = InternalLog(self.logs, OFFSETS, uuid.UUID(int=3), crc32c.crc32c, lambda: 1_000)
        return FileOffsetStore(self.log)


@pytest.fixture
def stores(tmp_path):
    stores = FileStores(str(tmp_path / "logs"))
    yield stores
    if stores.logdir is not None:
        stores.logs.close()
        stores.logdir.unlock()


def test_a_groups_metadata_is_written_as_kafkas_records_and_read_back_after_a_restart(stores):
    store = stores.open()
    store.store_group("g", GroupMetadata("consumer", 6, None, None, 5, ()))
    store.store_group("g", STABLE)
    [(_, key, value)] = [r for _, batch in stores.log.batches() for r in iter_records(batch)][-1:]
    assert key == b"\x00\x02" + struct.pack(">h", 1) + b"g"  # GroupMetadataKey v2: int16 version, group
    assert value[:2] == b"\x00\x03"  # GroupMetadataValue v3, the version Kafka 4 writes
    assert stores.open().group_metadata() == {"g": STABLE}


def test_value_v3_bytes_are_laid_out_as_kafkas_schema_says():
    raw = _group_value(STABLE)

    def string(s: str) -> bytes:
        return struct.pack(">h", len(s)) + s.encode()

    expected = (
        struct.pack(">h", 3)
        + string("consumer")
        + struct.pack(">i", 7)
        + string("range")
        + string("m-1")
        + struct.pack(">q", 1_700_000_000_000)
        + struct.pack(">i", 1)
        + string("m-1")
        + string("instance-1")
        + string("client")
        + string("/10.0.0.1")
        + struct.pack(">ii", 300_000, 45_000)
        + struct.pack(">i", 5)
        + b"\x00\x01sub"
        + struct.pack(">i", 5)
        + b"\x00\x01asg"
    )
    assert raw == expected


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_every_value_version_kafka_wrote_is_read_with_the_schemas_defaults(version):
    member = GroupMetadataValue.MemberMetadata(
        version=version,
        member_id="m",
        group_instance_id="i" if version >= 3 else None,
        client_id="c",
        client_host="h",
        rebalance_timeout=9 if version >= 1 else -1,
        session_timeout=6,
        subscription=b"s",
        assignment=b"a",
    )
    value = GroupMetadataValue(
        version=version,
        protocol_type="consumer",
        generation=3,
        protocol="range",
        leader="m",
        current_state_timestamp=42 if version >= 2 else -1,
        members=[member],
    )
    decoded = _decode_group(encode_versioned(value, version))
    assert decoded.generation_id == 3 and decoded.protocol_name == "range"
    assert decoded.current_state_timestamp_ms == (42 if version >= 2 else -1)
    assert decoded.members[0].rebalance_timeout_ms == (9 if version >= 1 else -1)
    assert decoded.members[0].group_instance_id == ("i" if version >= 3 else None)


texts = st.text(max_size=20)


@given(
    st.builds(
        GroupMetadata,
        texts,
        st.integers(0, 2**31 - 1),
        st.none() | texts,
        st.none() | texts,
        st.integers(-1, 2**62),
        st.lists(
            st.builds(
                MemberMetadata,
                texts,
                st.none() | texts,
                texts,
                texts,
                st.integers(-1, 2**31 - 1),
                st.integers(0, 2**31 - 1),
                st.binary(max_size=40),
                st.binary(max_size=40),
            ),
            max_size=4,
        ).map(tuple),
    )
)
def test_the_value_codec_round_trips(metadata):
    assert _decode_group(_group_value(metadata)) == metadata


def test_a_deleted_group_leaves_tombstones_and_stays_gone(stores):
    store = stores.open()
    store.store_group("g", STABLE)
    store.commit("g", {TopicPartition("t", 0): CommittedOffset(5)})
    store.delete_group("g")
    last = [(k, v) for _, batch in stores.log.batches() for _, k, v in iter_records(batch)][-2:]
    assert [v for _, v in last] == [None, None] and last[-1][0][:2] == b"\x00\x02"
    reopened = stores.open()
    assert reopened.group_metadata() == {} and reopened.groups() == []


def test_startup_rewrites_nothing_and_the_cleaner_keeps_every_live_groups_metadata(stores):
    store = stores.open()
    store.store_group("kept", STABLE)
    for n in range(CHURN):
        store.store_group("churn", GroupMetadata("consumer", n, None, None, n, ()))
    store.delete_group("churn")
    written = record_count(stores.log.log)
    reopened = stores.open()  # start-up replays the log as it is: no compaction of its own
    assert (stores.log.log.log_start_offset, record_count(stores.log.log)) == (0, written)
    assert reopened.group_metadata() == {"kept": STABLE}
    clean(stores.log.log)
    assert record_count(stores.log.log) < 5  # "kept", the churn group's tombstone (and its offsets')
    assert stores.open().group_metadata() == {"kept": STABLE}


def test_the_memory_store_keeps_the_same_contract():
    store = MemoryOffsetStore()
    store.store_group("g", STABLE)
    assert store.group_metadata() == {"g": STABLE}
    store.delete_group("g")
    assert store.group_metadata() == {}


def test_a_newer_coordinators_records_are_skipped(stores):
    store = stores.open()
    # 100: a record type of a coordinator newer than trafka (it keeps Kafka 4.2's, streams groups' included)
    stores.log.append([(struct.pack(">h", 100) + b"future-record", b"\x00\x00value")])
    store.store_group("g", STABLE)
    assert stores.open().group_metadata() == {"g": STABLE}  # read past the unknown key version
