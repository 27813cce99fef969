"""Transaction markers: control batches, in the fixed format Kafka writes them.

A marker is a transactional control batch (attributes 0x30) holding one record whose key is
(version int16 = 0, type int16: 0 abort, 1 commit) and whose value is (version int16 = 0, coordinator
epoch int32). `control_type` reads the type back from a stored control batch.
"""

from __future__ import annotations

import struct

import attrs

from .batch import CRC_START, HEADER_SIZE, LOG_OVERHEAD, Checksum
from .varint import encode_varint, read_varint

ABORT = 0
COMMIT = 1
_CONTROL_ATTRIBUTES = 0x30  # transactional | control
_HEADER = struct.Struct(">qiibIhiqqqhii")


def marker_batch(
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    timestamp_ms: int,
    checksum: Checksum,
    coordinator_epoch: int = 0,
) -> bytes:
    key = struct.pack(">hh", 0, COMMIT if commit else ABORT)
    value = struct.pack(">hi", 0, coordinator_epoch)
    body = (
        b"\x00"  # record attributes
        + encode_varint(0)  # timestamp delta
        + encode_varint(0)  # offset delta
        + encode_varint(len(key))
        + key
        + encode_varint(len(value))
        + value
        + encode_varint(0)  # headers
    )
    record = encode_varint(len(body)) + body
    batch_length = HEADER_SIZE - LOG_OVERHEAD + len(record)
    header = bytearray(
        _HEADER.pack(
            0,
            batch_length,
            0,
            2,
            0,
            _CONTROL_ATTRIBUTES,
            0,
            timestamp_ms,
            timestamp_ms,
            producer_id,
            producer_epoch,
            -1,
            1,
        )
    )
    batch = header + record
    struct.pack_into(">I", batch, 17, checksum(memoryview(batch)[CRC_START:]))
    return bytes(batch)


def control_type(batch: bytes) -> int:
    """ABORT or COMMIT for a control batch (the type in its first record's key)."""
    pos = read_varint(batch, HEADER_SIZE)[1] + 1  # record length, then the attributes byte
    for _ in range(3):  # timestamp delta, offset delta, key length
        pos = read_varint(batch, pos)[1]
    kind: int = struct.unpack_from(">h", batch, pos + 2)[0]
    return kind


@attrs.frozen
class AbortedTxn:
    """An entry of the aborted transaction index (Kafka's `.txnindex`)."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
