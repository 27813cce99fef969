"""A view of Kafka record batches (magic v2) that reads and patches headers, never records.

The 61-byte header's layout and fields are `batch_header.py`'s (ADR 112).

The produce path validates each batch's header and CRC and then patches `base_offset` and
`partition_leader_epoch` in place. The CRC does not cover those fields, so the bytes clients sent are
stored as they came, compressed or not. The checksum function comes in as an argument so the domain
stays free of C extensions.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Callable, Iterator
from typing import NamedTuple

from .batch_header import CRC_START, HEADER_SIZE, LOG_OVERHEAD, BatchHeader
from .errors import ErrorCode, KafkaError

# The header's names are re-exported: the hot paths name a batch and its header in one place.
__all__ = [
    "CRC_START",
    "HEADER_SIZE",
    "LOG_OVERHEAD",
    "MIN_BATCH_LENGTH",
    "MIN_RECORD_SIZE",
    "BatchHeader",
    "Checksum",
    "Compression",
    "ValidatedBatches",
    "assign_offsets",
    "iter_batches",
    "place_batch",
    "set_max_timestamp",
    "validate_batches",
    "validate_one_batch",
]

MIN_BATCH_LENGTH = HEADER_SIZE - LOG_OVERHEAD
MIN_RECORD_SIZE = 7  # length, attributes, timestamp delta, offset delta, key length, value length, header count

Checksum = Callable[[bytes | bytearray | memoryview], int]  # CRC32C of any buffer

_SLICE_BELOW = 2048  # a batch this small is checked on a copy of its bytes: cheaper than a view

_HEADER = struct.Struct(">qiibIhiqqqhii")
_ATTRIBUTES = struct.Struct(">h")
_MAX_TIMESTAMP = struct.Struct(">q")
_CRC = struct.Struct(">I")
_PLACEMENT = struct.Struct(">qii")  # base_offset, batch_length, partition_leader_epoch: one pack
_new = tuple.__new__  # a header built per batch without its named tuple's Python-level __new__


class Compression(enum.IntEnum):
    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


def iter_batches(buf: bytes | bytearray | memoryview) -> Iterator[tuple[int, BatchHeader]]:
    """Yield (position, header) for each complete batch in `buf`; stop at a partial tail."""
    pos = 0
    end = len(buf)
    while end - pos >= HEADER_SIZE:
        header = BatchHeader.parse(buf, pos)
        if header.batch_length < MIN_BATCH_LENGTH or pos + header.size > end:
            return
        yield pos, header
        pos += header.size


class ValidatedBatches(NamedTuple):
    """Record batches from a produce request that passed validation, ready for offset assignment."""

    buffer: bytearray
    headers: tuple[tuple[int, BatchHeader], ...]


def validate_batches(
    records: bytes | bytearray | memoryview,
    checksum: Checksum,
    max_batch_bytes: int,
    now_ms: int | None = None,
    timestamp_after_max_ms: int | None = None,
) -> ValidatedBatches:
    """Check every batch a producer sent the way Kafka's LogValidator does, per batch.

    Raises KafkaError with CORRUPT_MESSAGE (bad length or CRC, trailing bytes), INVALID_RECORD
    (wrong magic, record count that disagrees with last_offset_delta), MESSAGE_TOO_LARGE (a batch
    over `max_batch_bytes`) or INVALID_TIMESTAMP (a CreateTime too far in the future).

    This runs once per produced partition on the hot path: the header's fields are unpacked into
    locals rather than read through the named tuple's properties.
    """
    buf = bytearray(records)
    end = len(buf)
    if end == 0:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "empty record set")
    latest = None if now_ms is None or timestamp_after_max_ms is None else now_ms + timestamp_after_max_ms
    headers = []
    pos = 0
    with memoryview(buf) as view:
        while pos < end:
            if end - pos < HEADER_SIZE:
                if end - pos < LOG_OVERHEAD + 5:
                    raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "record set ends in a truncated batch")
                if buf[pos + 16] != 2:
                    raise _wrong_magic(buf[pos + 16])
                raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "record batch header is truncated")
            fields = _HEADER.unpack_from(buf, pos)
            (
                _,
                batch_length,
                _,
                magic,
                crc,
                attributes,
                last_offset_delta,
                _,
                max_timestamp,
                _,
                _,
                _,
                records_count,
            ) = fields
            if magic != 2:
                raise _wrong_magic(magic)
            if batch_length < MIN_BATCH_LENGTH:
                raise KafkaError(ErrorCode.CORRUPT_MESSAGE, f"batch length {batch_length} is too small")
            size = LOG_OVERHEAD + batch_length
            if pos + size > end:
                raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "record set ends in a truncated batch")
            if size > max_batch_bytes:
                raise KafkaError(
                    ErrorCode.MESSAGE_TOO_LARGE, f"batch of {size} bytes exceeds the maximum of {max_batch_bytes}"
                )
            if checksum(view[pos + CRC_START : pos + size]) != crc:
                raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "record batch CRC does not match its contents")
            if not attributes & 0x07 and records_count * MIN_RECORD_SIZE > batch_length - MIN_BATCH_LENGTH:
                raise KafkaError(
                    ErrorCode.INVALID_RECORD, f"{records_count} records cannot fit in a batch of {size} bytes"
                )
            if last_offset_delta < 0 or records_count != last_offset_delta + 1:
                raise KafkaError(
                    ErrorCode.INVALID_RECORD,
                    f"record count {records_count} does not match last offset delta {last_offset_delta}",
                )
            if latest is not None and not attributes & 0x08 and max_timestamp > latest:  # CreateTime
                raise KafkaError(ErrorCode.INVALID_TIMESTAMP, "record timestamp is too far in the future")
            headers.append((pos, tuple.__new__(BatchHeader, fields)))
            pos += size
    return ValidatedBatches(buf, tuple(headers))


def validate_one_batch(
    records: bytes | bytearray | memoryview, checksum: Checksum, max_batch_bytes: int, latest_timestamp: int
) -> tuple[bytearray, BatchHeader] | None:
    """The produce path's common case: a record set that is exactly one valid batch, returned as a
    patchable copy and its header. None for anything else (no batch, several, a truncated or invalid
    one): `validate_batches` then says what is wrong, in the same words as always.

    The checks are `validate_batches`'s, on one header unpacked once; `latest_timestamp` is the newest
    CreateTime accepted (now + message.timestamp.after.max.ms)."""
    end = len(records)
    if end < HEADER_SIZE:
        return None
    fields = _HEADER.unpack_from(records, 0)
    (_, batch_length, _, magic, crc, attributes, last_offset_delta, _, max_timestamp, _, _, _, records_count) = fields
    if (
        magic != 2
        or LOG_OVERHEAD + batch_length != end
        or batch_length < MIN_BATCH_LENGTH
        or end > max_batch_bytes
        or last_offset_delta < 0
        or records_count != last_offset_delta + 1
        or (not attributes & 0x07 and records_count * MIN_RECORD_SIZE > batch_length - MIN_BATCH_LENGTH)
        or (not attributes & 0x08 and max_timestamp > latest_timestamp)
    ):
        return None
    # A small batch's CRC on a slice (a short copy costs less than a view); a large one on a view,
    # released with the call (no export kept)
    if checksum(records[CRC_START:] if end < _SLICE_BELOW else memoryview(records)[CRC_START:]) != crc:
        return None
    return bytearray(records), _new(BatchHeader, fields)


def _wrong_magic(magic: int) -> KafkaError:
    return KafkaError(
        ErrorCode.INVALID_RECORD, f"produce requests must contain record batches with magic 2, found magic {magic}"
    )


def assign_offsets(
    batches: ValidatedBatches,
    base_offset: int,
    leader_epoch: int,
    checksum: Checksum,
    log_append_time_ms: int | None = None,
) -> list[BatchHeader]:
    """Patch each batch's base offset and leader epoch in place; return the patched headers.

    With `log_append_time_ms` (topics with message.timestamp.type=LogAppendTime) the timestamp type
    bit and max timestamp are set too, and since the CRC covers them it is recomputed.
    """
    patched = []
    next_offset = base_offset
    for pos, header in batches.headers:
        header = place_batch(batches.buffer, pos, header, next_offset, leader_epoch, checksum, log_append_time_ms)
        patched.append(header)
        next_offset += header[6] + 1  # last_offset_delta + 1
    return patched


def set_max_timestamp(buf: bytearray, header: BatchHeader, max_timestamp: int, checksum: Checksum) -> BatchHeader:
    """Kafka's DefaultRecordBatch.setMaxTimestamp on the batch at buf[0]: the field rewritten and the
    CRC, which covers it, recomputed; the header as it now reads."""
    _MAX_TIMESTAMP.pack_into(buf, 35, max_timestamp)
    with memoryview(buf) as view:
        crc = checksum(view[CRC_START : header.size])
    _CRC.pack_into(buf, 17, crc)
    return header._replace(max_timestamp=max_timestamp, crc=crc)


def place_batch(
    buf: bytearray,
    pos: int,
    header: BatchHeader,
    base_offset: int,
    leader_epoch: int,
    checksum: Checksum,
    log_append_time_ms: int | None = None,
) -> BatchHeader:
    """Patch the batch at `pos` with its base offset and leader epoch (and LogAppendTime, CRC
    recomputed); the header as it now reads."""
    _PLACEMENT.pack_into(buf, pos, base_offset, header.batch_length, leader_epoch)  # the length as it was
    if log_append_time_ms is not None:
        attributes = header.attributes | 0x08
        _ATTRIBUTES.pack_into(buf, pos + 21, attributes)
        _MAX_TIMESTAMP.pack_into(buf, pos + 35, log_append_time_ms)
        with memoryview(buf) as view:
            crc = checksum(view[pos + CRC_START : pos + header.size])
        _CRC.pack_into(buf, pos + 17, crc)
        header = header._replace(attributes=attributes, max_timestamp=log_append_time_ms, crc=crc)
    return _new(BatchHeader, (base_offset, header[1], leader_epoch, *header[3:]))
