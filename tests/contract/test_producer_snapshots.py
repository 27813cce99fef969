"""Producer snapshots on disk: Kafka's format, written at each segment roll (named by the new segment's
base offset, as Kafka's UnifiedLog.roll) and at shutdown, deleted with their segments and, when a log
opens, when stray (ADR 100); trusted only when intact."""

from __future__ import annotations

import io
import os
import struct
import tempfile
import uuid

import crc32c

from tests.batches import make_batch
from tests.unit.conftest import sequential_ids
from trafka.adapters.compression import decompress
from trafka.adapters.filesystem import FileLogStore, LogDir
from trafka.adapters.filesystem.metadata_records import ProducerSnapshot
from trafka.adapters.filesystem.producer_snapshot import (
    latest_snapshot,
    remove_stray,
    snapshot_offsets,
    write_snapshot,
)
from trafka.adapters.memory import MemoryCatalogStore
from trafka.domain.catalog import TopicCatalog
from trafka.domain.configs import BrokerPolicy
from trafka.domain.errors import ErrorCode
from trafka.domain.producers import ProducerSnapshotEntry
from trafka.domain.replica_manager import ReplicaManager
from trafka.domain.topics import TopicPartition

ENTRY = ProducerSnapshotEntry(7, 2, 41, 1000, 3, 123456, 0, -1)
NOW = 1_700_000_000_000


def test_round_trip_and_layout(tmp_path):
    write_snapshot(str(tmp_path), 1001, [ENTRY], crc32c.crc32c)
    data = (tmp_path / f"{1001:020d}.snapshot").read_bytes()
    version, crc, count = struct.unpack_from(">hIi", data)
    assert (version, count) == (1, 1) and crc == crc32c.crc32c(data[6:])
    assert struct.unpack_from(">qhiqiqiq", data, 10) == (7, 2, 41, 1000, 3, 123456, 0, -1)
    assert latest_snapshot(str(tmp_path), 2000, crc32c.crc32c) == (1001, [ENTRY])


def test_every_snapshot_written_is_kept_until_its_segment_goes(tmp_path):
    for offset in (10, 20, 30):
        write_snapshot(str(tmp_path), offset, [ENTRY], crc32c.crc32c)
    assert snapshot_offsets(str(tmp_path)) == [10, 20, 30]


def test_stray_snapshots_go_but_the_newest_past_every_segment(tmp_path):
    """Kafka's removeStraySnapshots: segments at 0, 20, 40; snapshots at 5 and 30 (stray, below the last
    segment) go, 20 and 40 (segment bases) stay, 50 (stray, the newest, past every base) stays."""
    for offset in (5, 20, 30, 40, 50):
        write_snapshot(str(tmp_path), offset, [ENTRY], crc32c.crc32c)
    remove_stray(str(tmp_path), [0, 20, 40])
    assert snapshot_offsets(str(tmp_path)) == [20, 40, 50]
    remove_stray(str(tmp_path), [0, 20, 40, 60])
    assert snapshot_offsets(str(tmp_path)) == [20, 40]


class _Broker:
    """The domain on the filesystem store, with a topic whose segments roll at every other batch."""

    def __init__(self, folder: str, configs: dict[str, str]) -> None:
        self.logdir = LogDir.open(folder, 1, uuid.UUID(int=1), uuid.UUID(int=2))
        self.logs = FileLogStore(self.logdir, crc32c.crc32c, lambda: NOW)
        policy = BrokerPolicy()
        self.catalog = TopicCatalog(MemoryCatalogStore(), self.logs, policy, sequential_ids())
        self.catalog.create("t", 1, 1, configs)
        self.logdir.start()
        self.replicas = ReplicaManager(self.catalog, self.logs, policy, crc32c.crc32c, decompress)
        self.dir = os.path.join(folder, "t-0")

    def produce(self, batch: bytes) -> int:
        result = self.replicas.produce(TopicPartition("t", 0), batch, NOW)
        assert result.error == ErrorCode.NONE, result
        return result.base_offset

    def snapshots(self) -> dict[int, list[tuple[int, int, int]]]:
        """Each snapshot file: (producer id, epoch, last sequence) of its entries."""
        out = {}
        for offset in snapshot_offsets(self.dir):
            with open(os.path.join(self.dir, f"{offset:020d}.snapshot"), "rb") as f:
                snapshot = ProducerSnapshot.decode(io.BytesIO(f.read()), header=True)
            out[offset] = [(e.producer_id, e.epoch, e.last_sequence) for e in snapshot.producer_entries]
        return out

    def segment_bases(self) -> list[int]:
        return [s.base_offset for s in self.logs.get(TopicPartition("t", 0)).segment_infos()]


def _idempotent(sequence: int, records: int = 1) -> bytes:
    values = [(NOW, b"k", b"v" * 100)] * records
    return make_batch(values, producer_id=42, producer_epoch=0, base_sequence=sequence)


def test_each_roll_snapshots_the_producers_below_the_new_segment():
    """As Kafka's UnifiedLog.roll: `<base offset of the new segment>.snapshot`, holding the state of
    every batch below it (not the batch whose append rolled); none at a log's first segment."""
    with tempfile.TemporaryDirectory() as folder:
        broker = _Broker(folder, {"internal.segment.bytes": "300"})
        plain = make_batch([(NOW, b"p", b"x" * 100)])
        broker.produce(plain)  # 0
        broker.produce(_idempotent(0, 2))  # 1-2: rolls (the segment at 0 is full)
        broker.produce(_idempotent(2))  # 3: rolls
        broker.produce(plain)  # 4: rolls
        assert broker.segment_bases() == [0, 1, 3, 4]
        assert broker.snapshots() == {1: [], 3: [(42, 0, 1)], 4: [(42, 0, 2)]}


def test_snapshots_go_with_their_segments_and_stray_ones_when_the_log_opens():
    with tempfile.TemporaryDirectory() as folder:
        broker = _Broker(folder, {"internal.segment.bytes": "300"})
        for sequence in range(4):
            broker.produce(_idempotent(sequence))
        assert broker.segment_bases() == [0, 1, 2, 3]
        assert sorted(broker.snapshots()) == [1, 2, 3]
        assert broker.replicas.delete_records(TopicPartition("t", 0), 2).error == ErrorCode.NONE
        assert broker.segment_bases() == [2, 3]
        assert sorted(broker.snapshots()) == [2, 3]  # the segment at 1 went, and its snapshot with it
        broker.replicas.snapshot_producers()  # at shutdown: at the log end, 4, past every segment's base
        write_snapshot(broker.dir, 1, [ENTRY], crc32c.crc32c)  # stray, below the last segment's base
        topic = broker.catalog.get("t")
        broker.logs.close()
        broker.logdir.mark_clean_shutdown()
        broker.logdir.unlock()
        logdir = LogDir.open(folder, 1, uuid.UUID(int=1), uuid.UUID(int=2))
        FileLogStore(logdir, crc32c.crc32c, lambda: NOW).open(TopicPartition("t", 0), topic)
        assert snapshot_offsets(broker.dir) == [2, 3, 4]
        logdir.unlock()


def test_a_corrupt_or_stale_snapshot_is_deleted_and_an_older_one_used(tmp_path):
    write_snapshot(str(tmp_path), 10, [ENTRY], crc32c.crc32c)
    write_snapshot(str(tmp_path), 20, [ENTRY], crc32c.crc32c)
    path = tmp_path / f"{20:020d}.snapshot"
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    assert latest_snapshot(str(tmp_path), 100, crc32c.crc32c)[0] == 10
    assert not path.exists()
    assert latest_snapshot(str(tmp_path), 5, crc32c.crc32c) is None  # past the log end: not trusted
    assert os.listdir(tmp_path) == []
