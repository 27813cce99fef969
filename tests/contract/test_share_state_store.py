"""Share-partition state in `__share_group_state`, as the file store writes and replays it (Kafka's
ShareSnapshotKey / ShareSnapshotValue records; the latest snapshot per share-partition wins, a
tombstone deletes), and the memory store keeping the same contract."""

from __future__ import annotations

import io
import struct
import uuid

import crc32c
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trafka.adapters.filesystem import FileLogStore, LogDir
from trafka.adapters.filesystem.internal_log import InternalLog
from trafka.adapters.filesystem.metadata_records import ShareSnapshotKey, ShareUpdateKey, ShareUpdateValue, iter_records
from trafka.adapters.filesystem.share_state_store import FileShareStateStore, _key
from trafka.adapters.memory.share_state_store import MemoryShareStateStore
from trafka.domain.ports import ShareSnapshot
from trafka.domain.topics import TopicPartition

STATE = TopicPartition("__share_group_state", 0)
T1, T2 = uuid.UUID(int=7), uuid.UUID(int=8)


class FileStores:
    def __init__(self, path: str, updates_per_snapshot: int = 500) -> None:
        self.path = path
        self.logdir = None
        self.updates_per_snapshot = updates_per_snapshot
        self.clock = lambda: 1_000

    def open(self) -> FileShareStateStore:
        if self.logdir is not None:
            self.logs.close()
            self.logdir.unlock()
        self.logdir = LogDir.open(self.path, 1, uuid.UUID(int=1), uuid.UUID(int=2))
        self.logs = FileLogStore(self.logdir, crc32c.crc32c, lambda: 1_000)
        self.log = InternalLog(self.logs, STATE, uuid.UUID(int=3), crc32c.crc32c, lambda: 1_000)
        store = FileShareStateStore(self.log, self.clock, self.updates_per_snapshot)
        store.load()
        return store

    def written(self) -> list[tuple[int, bytes | None]]:
        """(record type, value) of every record in the log's segments (below its start offset too)."""
        return [
            (int.from_bytes(key[:2], "big"), value)
            for segment in self.log.log.segments
            for _, batch in segment.batches()
            for _, key, value in iter_records(batch)
            if key is not None
        ]


class MemoryStores:
    def __init__(self) -> None:
        self.store = MemoryShareStateStore()

    def open(self) -> MemoryShareStateStore:
        return self.store


@pytest.fixture(params=["file", "memory"])
def stores(request, tmp_path):
    return FileStores(str(tmp_path)) if request.param == "file" else MemoryStores()


def test_latest_snapshot_wins_and_tombstones_delete(stores):
    store = stores.open()
    store.write([ShareSnapshot("g", T1, 0, 5, ((5, 9, 2, 1), (10, 12, 0, 3)))], [])
    store.write([ShareSnapshot("g", T1, 0, 10, ((10, 12, 4, 5),)), ShareSnapshot("g", T2, 1, 0)], [])
    store.write([], [("g", T2, 1)])
    assert stores.open().load() == [ShareSnapshot("g", T1, 0, 10, ((10, 12, 4, 5),))]


def test_the_key_is_kafkas_share_snapshot_key():
    group = "grp"
    expected = struct.pack(">hh", 0, len(group)) + group.encode() + T1.bytes + struct.pack(">i", 3)
    assert _key(ShareSnapshotKey, 0, (group, T1, 3)) == expected
    # ShareUpdateKey: record type 1, the same fields
    assert _key(ShareUpdateKey, 1, (group, T1, 3)) == b"\x00\x01" + expected[2:]


@given(
    start=st.integers(0, 2**40),
    batches=st.lists(
        st.tuples(st.integers(0, 2**40), st.integers(0, 100), st.sampled_from([0, 2, 4]), st.integers(0, 5)), max_size=5
    ),
)
@settings(max_examples=25, deadline=None)
def test_snapshots_round_trip_through_the_file_format(tmp_path_factory, start, batches):
    store = FileStores(str(tmp_path_factory.mktemp("share"))).open()
    snapshot = ShareSnapshot("g", T1, 0, start, tuple((f, f + n, s, c) for f, n, s, c in batches))
    store.write([snapshot], [])
    assert store.load() == [snapshot]


def test_the_snapshot_value_is_kafka_42s_layout_byte_for_byte(tmp_path):
    stores = FileStores(str(tmp_path))
    store = stores.open()
    store.write([ShareSnapshot("g", T1, 0, 5, ((5, 9, 2, 1), (10, 12, 0, 3)))], [])
    [(record_type, value)] = stores.written()
    # ShareSnapshotValue v0 (flexible), fields in Kafka 4.2's order; DeliveryCompleteCount (KIP-1226)
    # is tagged field 0 (int32): five offsets (5-9) acknowledged
    batch = struct.pack(">qqbh", 5, 9, 2, 1) + b"\x00" + struct.pack(">qqbh", 10, 12, 0, 3) + b"\x00"
    expected = (
        struct.pack(">h", 0)  # value version
        + struct.pack(">iiiq", 0, 0, 0, 5)  # SnapshotEpoch, StateEpoch, LeaderEpoch, StartOffset
        + struct.pack(">qq", 1_000, 1_000)  # CreateTimestamp, WriteTimestamp
        + b"\x03"  # StateBatches: compact array of 2
        + batch
        + b"\x01\x00\x04"  # one tagged field: tag 0, 4 bytes
        + struct.pack(">i", 5)
    )
    assert (record_type, value) == (0, expected)


def test_updates_carry_what_changed_between_snapshots_and_replay_lays_them_over(tmp_path):
    stores = FileStores(str(tmp_path), updates_per_snapshot=2)
    store = stores.open()
    states = [
        ShareSnapshot("g", T1, 0, 0, ((0, 9, 0, 1),)),
        ShareSnapshot("g", T1, 0, 0, ((0, 3, 2, 1), (4, 9, 0, 1))),
        ShareSnapshot("g", T1, 0, 4, ((4, 6, 4, 2), (7, 9, 0, 1), (10, 14, 0, 1))),
        ShareSnapshot("g", T1, 0, 7, ((7, 14, 0, 1),)),
        ShareSnapshot("g", T1, 0, 7, ((7, 7, 2, 1), (8, 14, 0, 1))),
    ]
    for state in states:
        store.write([state], [])
    written = stores.written()
    assert [t for t, _ in written] == [0, 1, 1, 0, 1]  # a snapshot, two updates, a snapshot again
    update = ShareUpdateValue.decode(io.BytesIO(written[2][1]), header=True)
    assert update.start_offset == 4
    assert [(b.first_offset, b.last_offset, b.delivery_state) for b in update.state_batches] == [
        (4, 6, 4),
        (7, 9, 0),  # a batch the update cut out of an earlier one
        (10, 14, 0),
    ]
    assert stores.open().load() == [states[-1]]


def test_a_restart_between_updates_keeps_counting_towards_the_next_snapshot(tmp_path):
    stores = FileStores(str(tmp_path), updates_per_snapshot=2)
    store = stores.open()
    store.write([ShareSnapshot("g", T1, 0, 0, ((0, 1, 0, 1),))], [])
    store.write([ShareSnapshot("g", T1, 0, 0, ((0, 0, 2, 1), (1, 1, 0, 1)))], [])
    store = stores.open()
    assert store.load() == [ShareSnapshot("g", T1, 0, 0, ((0, 0, 2, 1), (1, 1, 0, 1)))]
    store.write([ShareSnapshot("g", T1, 0, 1, ((1, 1, 2, 1),))], [])
    store.write([ShareSnapshot("g", T1, 0, 2)], [])
    assert [t for t, _ in stores.written()] == [0, 1, 1, 0]
    assert stores.open().load() == [ShareSnapshot("g", T1, 0, 2)]


def test_a_state_reset_backwards_is_a_new_snapshot(tmp_path):
    stores = FileStores(str(tmp_path))
    store = stores.open()
    store.write([ShareSnapshot("g", T1, 0, 10, ((10, 19, 2, 1),))], [])
    store.write([ShareSnapshot("g", T1, 0, 3)], [])  # AlterShareGroupOffsets moved it back
    assert [t for t, _ in stores.written()] == [0, 0]
    assert stores.open().load() == [ShareSnapshot("g", T1, 0, 3)]


def test_records_before_every_share_partitions_latest_snapshot_are_dropped(tmp_path):
    stores = FileStores(str(tmp_path), updates_per_snapshot=2)
    store = stores.open()
    store.write([ShareSnapshot("g", T1, 0, 0, ((0, 0, 0, 1),)), ShareSnapshot("g", T2, 0, 0)], [])  # 0, 1
    for n in range(1, 6):  # T1: update, update, snapshot (5), update, update
        store.write([ShareSnapshot("g", T1, 0, 0, ((0, n, 0, 1),))], [])
    # T1's second snapshot (4) made 0 redundant; T2's only snapshot, at 1, holds the rest
    assert stores.log.log.log_start_offset == 1
    store.write([ShareSnapshot("g", T2, 0, 3)], [])  # 7: an update of T2 moves nothing
    assert stores.log.log.log_start_offset == 1
    store.write([], [("g", T2, 0)])  # 8: T2 deleted: only T1's snapshot at 4 is needed now
    assert stores.log.log.log_start_offset == 4
    assert stores.open().load() == [ShareSnapshot("g", T1, 0, 0, ((0, 5, 0, 1),))]


def test_redundant_segments_are_deleted_once_they_roll(tmp_path):
    stores = FileStores(str(tmp_path), updates_per_snapshot=1)
    store = stores.open()
    store._segment_bytes = 1  # every write that snapshots rolls the segment
    for n in range(6):
        store.write([ShareSnapshot("g", T1, 0, n)], [])
    # snapshots at 0, 2 and 4 (updates between): the segments wholly before 4 are deleted
    assert stores.log.log.log_start_offset == 4
    assert [seg.base_offset for seg in stores.log.log.segments] == [3, 5]
    assert stores.open().load() == [ShareSnapshot("g", T1, 0, 5)]


run = st.tuples(st.integers(1, 4), st.sampled_from([0, 2, 4]), st.integers(0, 3))
state = st.tuples(st.integers(0, 30), st.lists(run, max_size=5))
step = st.one_of(
    st.tuples(st.just("write"), st.sampled_from([T1, T2]), state),
    st.tuples(st.just("delete"), st.sampled_from([T1, T2]), st.none()),
    st.tuples(st.just("restart"), st.none(), st.none()),
)


def _snapshot(topic_id, start, runs) -> ShareSnapshot:
    batches, offset = [], start
    for length, delivery_state, count in runs:
        batches.append((offset, offset + length - 1, delivery_state, count))
        offset += length
    return ShareSnapshot("g", topic_id, 0, start, tuple(batches))


@given(steps=st.lists(step, max_size=25), per_snapshot=st.integers(0, 3))
@settings(max_examples=40, deadline=None)
def test_any_sequence_of_writes_restarts_and_deletes_replays_to_the_last_state(tmp_path_factory, steps, per_snapshot):
    """Snapshots, updates (whatever moved), pruning and tombstones: a replay always gives each
    share-partition's last written state, as the memory store keeps it."""
    stores = FileStores(str(tmp_path_factory.mktemp("share")), updates_per_snapshot=per_snapshot)
    store = stores.open()
    store._segment_bytes = 300  # small segments: pruning deletes some
    memory = MemoryShareStateStore()
    for kind, topic_id, value in steps:
        if kind == "write":
            snapshot = _snapshot(topic_id, *value)
            store.write([snapshot], [])
            memory.write([snapshot], [])
        elif kind == "delete":
            store.write([], [("g", topic_id, 0)])
            memory.write([], [("g", topic_id, 0)])
        else:
            store = stores.open()
            store._segment_bytes = 300
    replayed = sorted(stores.open().load(), key=lambda s: s.topic_id)
    assert replayed == sorted(memory.load(), key=lambda s: s.topic_id)


def test_an_idle_share_partition_is_snapshotted_again_so_it_does_not_hold_the_log_back(tmp_path):
    now = [1_000]
    stores = FileStores(str(tmp_path), updates_per_snapshot=1)
    stores.clock = lambda: now[0]
    store = stores.open()
    store.write([ShareSnapshot("g", T2, 0, 7, ((7, 8, 2, 1),))], [])  # 0: T2, then idle
    for n in range(4):  # T1: snapshot 1, update 2, snapshot 3, update 4
        store.write([ShareSnapshot("g", T1, 0, n)], [])
    assert stores.log.log.log_start_offset == 0  # T2's snapshot at 0 holds the log
    now[0] += 300_000  # Kafka's share.coordinator.cold.partition.snapshot.interval.ms
    store.write([ShareSnapshot("g", T1, 0, 4)], [])  # 5: T1's snapshot, 6: T2's again
    assert stores.log.log.log_start_offset == 5
    replayed = sorted(stores.open().load(), key=lambda s: s.topic_id)
    assert replayed == [ShareSnapshot("g", T1, 0, 4), ShareSnapshot("g", T2, 0, 7, ((7, 8, 2, 1),))]
