"""Producer snapshots on disk: Kafka's format, written at shutdown, trusted only when intact."""

from __future__ import annotations

import os
import struct

import crc32c

from trafka.adapters.filesystem.producer_snapshot import latest_snapshot, snapshot_offsets, write_snapshot
from trafka.domain.producers import ProducerSnapshotEntry

ENTRY = ProducerSnapshotEntry(7, 2, 41, 1000, 3, 123456, 0, -1)


def test_round_trip_and_layout(tmp_path):
    write_snapshot(str(tmp_path), 1001, [ENTRY], crc32c.crc32c)
    data = (tmp_path / f"{1001:020d}.snapshot").read_bytes()
    version, crc, count = struct.unpack_from(">hIi", data)
    assert (version, count) == (1, 1) and crc == crc32c.crc32c(data[6:])
    assert struct.unpack_from(">qhiqiqiq", data, 10) == (7, 2, 41, 1000, 3, 123456, 0, -1)
    assert latest_snapshot(str(tmp_path), 2000, crc32c.crc32c) == (1001, [ENTRY])


def test_only_the_latest_two_are_kept(tmp_path):
    for offset in (10, 20, 30):
        write_snapshot(str(tmp_path), offset, [ENTRY], crc32c.crc32c)
    assert snapshot_offsets(str(tmp_path)) == [20, 30]


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
