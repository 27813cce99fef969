"""Producer state snapshots, `<20-digit offset>.snapshot`, in Kafka's ProducerSnapshot format.

int16 version 1, a CRC-32C of everything after the CRC field, then the producer entries. A snapshot
at offset N holds the state of every batch below N; the log after N is replayed on top of it. A
snapshot past the log end (the log was cut by recovery) or with a bad CRC is deleted, not trusted.

Which snapshots a partition keeps is Kafka's rule (ADR 100): one at each segment's base offset,
written when the segment rolls and deleted with the segment, plus the newest one when it lies past
every segment's base (the one written at shutdown); `remove_stray` drops the others when a log opens.
"""

from __future__ import annotations

import io
import os
import struct
from collections.abc import Callable

from trafka.domain.producers import ProducerSnapshotEntry

from .metadata_records import ProducerSnapshot

SUFFIX = ".snapshot"


def _path(directory: str, offset: int) -> str:
    return os.path.join(directory, f"{offset:020d}{SUFFIX}")


def snapshot_offsets(directory: str) -> list[int]:
    return sorted(
        int(n[: -len(SUFFIX)]) for n in os.listdir(directory) if n.endswith(SUFFIX) and n[: -len(SUFFIX)].isdigit()
    )


def write_snapshot(
    directory: str, offset: int, entries: list[ProducerSnapshotEntry], checksum: Callable[[memoryview], int]
) -> None:
    """`<offset>.snapshot`, replacing one of that offset, durably."""
    snapshot = ProducerSnapshot(
        version=1,
        crc=0,
        producer_entries=[
            ProducerSnapshot.ProducerEntry(
                producer_id=e.producer_id,
                epoch=e.epoch,
                last_sequence=e.last_sequence,
                last_offset=e.last_offset,
                offset_delta=e.offset_delta,
                timestamp=e.timestamp,
                coordinator_epoch=e.coordinator_epoch,
                current_txn_first_offset=e.current_txn_first_offset,
            )
            for e in entries
        ],
    )
    data = bytearray(snapshot.encode(version=1, header=True))
    struct.pack_into(">I", data, 2, checksum(memoryview(data)[6:]))
    tmp = _path(directory, offset) + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, _path(directory, offset))


def delete_snapshot(directory: str, offset: int) -> None:
    """The snapshot at `offset`, if there is one (its segment is gone: Kafka's deleteProducerSnapshots)."""
    try:
        os.remove(_path(directory, offset))
    except FileNotFoundError:
        pass


def remove_stray(directory: str, segment_bases: list[int]) -> None:
    """Kafka's ProducerStateManager.removeStraySnapshots, when a log opens: the snapshots at no segment's
    base offset go, but for the newest of them when it is past the last segment's base."""
    bases = set(segment_bases)
    stray = [offset for offset in snapshot_offsets(directory) if offset not in bases]
    keep = stray[-1] if stray and (not segment_bases or stray[-1] > max(segment_bases)) else None
    for offset in stray:
        if offset != keep:
            delete_snapshot(directory, offset)


def latest_snapshot(
    directory: str, log_end_offset: int, checksum: Callable[[memoryview], int]
) -> tuple[int, list[ProducerSnapshotEntry]] | None:
    for offset in reversed(snapshot_offsets(directory)):
        path = _path(directory, offset)
        try:
            with open(path, "rb") as f:
                data = f.read()
            (crc,) = struct.unpack_from(">I", data, 2)
            if offset > log_end_offset or checksum(memoryview(data)[6:]) != crc:
                raise ValueError("stale or corrupt")
            snapshot = ProducerSnapshot.decode(io.BytesIO(data), header=True)
        except (ValueError, struct.error, OSError):
            os.remove(path)
            continue
        return offset, [
            ProducerSnapshotEntry(
                e.producer_id,
                e.epoch,
                e.last_sequence,
                e.last_offset,
                e.offset_delta,
                e.timestamp,
                e.coordinator_epoch,
                e.current_txn_first_offset,
            )
            for e in snapshot.producer_entries
        ]
    return None
