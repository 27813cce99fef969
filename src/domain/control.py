"""Transaction markers: control batches, in the fixed format Kafka writes them.

A marker is a transactional control batch (attributes 0x30) holding one record whose key is
(version int16 = 0, type int16: 0 abort, 1 commit) and whose value is (version int16 = 0, coordinator
epoch int32). `control_type` reads the type back from a stored control batch.
"""

from __future__ import annotations

import struct

import attrs

from .batch import CRC_START, HEADER_SIZE, LOG_OVERHEAD, BatchHeader, Checksum

ABORT = 0
COMMIT = 1
_CONTROL_ATTRIBUTES = 0x30  # transactional | control
_HEADER = struct.Struct(">qiibIhiqqqhii")


def _zigzag_varint(value: int) -> bytes:
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def marker_batch(
    producer_id: int, producer_epoch: int, commit: bool, timestamp_ms: int, checksum: Checksum, coordinator_epoch: int = 0
) -> bytes:
    key = struct.pack(">hh", 0, COMMIT if commit else ABORT)
    value = struct.pack(">hi", 0, coordinator_epoch)
    body = (
        b"\x00"  # record attributes
        + _zigzag_varint(0)  # timestamp delta
        + _zigzag_varint(0)  # offset delta
        + _zigzag_varint(len(key)) + key
        + _zigzag_varint(len(value)) + value
        + _zigzag_varint(0)  # headers
    )
    record = _zigzag_varint(len(body)) + body
    batch_length = HEADER_SIZE - LOG_OVERHEAD + len(record)
    header = bytearray(
        _HEADER.pack(0, batch_length, 0, 2, 0, _CONTROL_ATTRIBUTES, 0, timestamp_ms, timestamp_ms,
                     producer_id, producer_epoch, -1, 1)
    )
    batch = header + record
    struct.pack_into(">I", batch, 17, checksum(memoryview(batch)[CRC_START:]))
    return bytes(batch)


def _skip_varint(buf: bytes, pos: int) -> int:
    while buf[pos] & 0x80:
        pos += 1
    return pos + 1


def control_type(batch: bytes) -> int:
    """ABORT or COMMIT for a control batch (the type in its first record's key)."""
    pos = _skip_varint(batch, HEADER_SIZE) + 1  # record length, then the attributes byte
    for _ in range(3):  # timestamp delta, offset delta, key length
        pos = _skip_varint(batch, pos)
    return struct.unpack_from(">h", batch, pos + 2)[0]


@attrs.frozen
class AbortedTxn:
    """An entry of the aborted transaction index (Kafka's `.txnindex`)."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


def is_marker(header: BatchHeader) -> bool:
    return header.is_control and header.is_transactional
