"""The records of a batch as the cleaner needs them, and batches rebuilt from the records it keeps.

A record (Kafka's DefaultRecord) is: length, attributes, timestamp delta, offset delta, key, value,
headers. The cleaner keeps a batch's base offset, so a kept record's offset delta and everything
after it are copied as they are (`tail`); only the timestamp delta is written anew, against the
rebuilt batch's base timestamp. That is the first kept record's timestamp, or the delete horizon
when the batch carries one (KIP-534: attribute bit 6 set, base timestamp = horizon), as Kafka's
MemoryRecordsBuilder writes it. The batch's last offset delta is kept too (Kafka's
`overrideLastOffset`), so a producer's last sequence survives. The CRC is computed anew.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import NamedTuple

from ..batch import CRC_START, HEADER_SIZE, LOG_OVERHEAD, BatchHeader, Checksum, Compression
from ..batch_header import TimestampType
from ..errors import ErrorCode, KafkaError
from ..varint import encode_varint, read_varint

DELETE_HORIZON_FLAG = 0x40
NO_TIMESTAMP = -1
_HEADER = struct.Struct(">qiibIhiqqqhii")

Compress = Callable[[int, bytes], bytes]
Decompress = Callable[[int, bytes], bytes]


class CleanerRecord(NamedTuple):
    offset: int
    timestamp: int
    key: bytes | None
    has_value: bool
    tail: bytes  # offset delta, key, value and headers as stored


def delete_horizon(header: BatchHeader) -> int | None:
    """The batch's delete horizon (KIP-534), if the cleaner has set one."""
    return header.base_timestamp if header.attributes & DELETE_HORIZON_FLAG else None


def decode_records(batch: bytes | memoryview, header: BatchHeader, decompress: Decompress) -> list[CleanerRecord]:
    """Every record of the batch at batch[0]; CORRUPT_MESSAGE if one runs past the batch."""
    body = bytes(batch[HEADER_SIZE : header.size])
    if header.compression != Compression.NONE:
        body = decompress(header.compression, body)
    base_offset, base_timestamp = header.base_offset, header.base_timestamp
    records: list[CleanerRecord] = []
    append = records.append
    pos = 0
    size = len(body)
    try:
        for _ in range(header.records_count):
            # one-byte varints (the usual lengths and deltas) are read inline: this is the cleaner's
            # per-record loop, and a call per field would double its cost
            byte = body[pos]
            if byte < 0x80:
                length = (byte >> 1) ^ -(byte & 1)
                pos += 1
            elif body[pos + 1] < 0x80:  # two bytes: records of 64 to 8191 bytes
                raw = (byte & 0x7F) | (body[pos + 1] << 7)
                length = (raw >> 1) ^ -(raw & 1)
                pos += 2
            else:
                length, pos = read_varint(body, pos)
            end = pos + length
            if length < 0 or end > size:
                raise IndexError
            byte = body[pos + 1]
            if byte < 0x80:
                timestamp_delta = (byte >> 1) ^ -(byte & 1)
                tail_start = pos + 2
            else:
                timestamp_delta, tail_start = read_varint(body, pos + 1)
            byte = body[tail_start]
            if byte < 0x80:
                offset_delta = (byte >> 1) ^ -(byte & 1)
                p = tail_start + 1
            else:
                offset_delta, p = read_varint(body, tail_start)
            byte = body[p]
            if byte < 0x80:
                key_length = (byte >> 1) ^ -(byte & 1)
                p += 1
            else:
                key_length, p = read_varint(body, p)
            key = None
            if key_length >= 0:
                key = body[p : p + key_length]
                p += key_length
            if p >= end:
                raise IndexError
            append(
                CleanerRecord(
                    base_offset + offset_delta,
                    base_timestamp + timestamp_delta,
                    key,
                    body[p] != 1,  # a value length of -1 (zig-zag 1) is a null value
                    body[tail_start:end],
                )
            )
            pos = end
    except IndexError:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "a record runs past the end of its batch") from None
    return records


class KeyScan(NamedTuple):
    """What the offset map pass reads of a batch."""

    pairs: list[tuple[bytes, int]]  # (key, offset) of every keyed record, in order
    tombstones: bool  # a record has a null value


KeyScanner = Callable[[bytes | memoryview, BatchHeader, Decompress], KeyScan]


def decode_keys(batch: bytes | memoryview, header: BatchHeader, decompress: Decompress) -> KeyScan:
    """(key, offset) of every keyed record of the batch, in order: all the offset map needs (the
    pairs go into it as they are), with no copy of values or headers, and whether a record has a
    null value (so a batch whose records all survive, none a tombstone, is copied without a decode);
    CORRUPT_MESSAGE if a record runs past the batch. The cleaner may be given a compiled scanner with
    the same contract."""
    body = bytes(batch[HEADER_SIZE : header.size])
    if header.compression != Compression.NONE:
        body = decompress(header.compression, body)
    base_offset = header.base_offset
    keys: list[tuple[bytes, int]] = []
    tombstones = False
    pos = 0
    size = len(body)
    try:
        for _ in range(header.records_count):
            byte = body[pos]
            if byte < 0x80:
                length = (byte >> 1) ^ -(byte & 1)
                pos += 1
            elif body[pos + 1] < 0x80:  # two bytes: records of 64 to 8191 bytes
                raw = (byte & 0x7F) | (body[pos + 1] << 7)
                length = (raw >> 1) ^ -(raw & 1)
                pos += 2
            else:
                length, pos = read_varint(body, pos)
            end = pos + length
            if length < 0 or end > size:
                raise IndexError
            p = pos + 1
            while body[p] & 0x80:  # timestamp delta
                p += 1
            p += 1
            byte = body[p]
            if byte < 0x80:
                offset_delta = (byte >> 1) ^ -(byte & 1)
                p += 1
            else:
                offset_delta, p = read_varint(body, p)
            byte = body[p]
            if byte < 0x80:
                key_length = (byte >> 1) ^ -(byte & 1)
                p += 1
            else:
                key_length, p = read_varint(body, p)
            if key_length >= 0:
                if p + key_length >= end:
                    raise IndexError
                keys.append((body[p : p + key_length], base_offset + offset_delta))
                if body[p + key_length] == 1:  # a value length of -1 (zig-zag 1): a tombstone
                    tombstones = True
            elif p >= end:
                raise IndexError
            elif body[p] == 1:  # a keyless null value (such a batch is never kept whole anyway)
                tombstones = True
            pos = end
    except IndexError:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "a record runs past the end of its batch") from None
    return KeyScan(keys, tombstones)


def rebuild_batch(
    header: BatchHeader,
    records: Sequence[CleanerRecord],
    horizon_ms: int | None,
    compress: Compress,
    checksum: Checksum,
) -> bytes:
    """A batch of `records` (at least one) with `header`'s base offset, last offset, producer fields
    and codec, and the delete horizon flag and base timestamp when `horizon_ms` is set."""
    log_append = header.timestamp_type is TimestampType.LOG_APPEND_TIME
    base_timestamp = horizon_ms if horizon_ms is not None else records[0].timestamp
    parts = []
    max_timestamp = NO_TIMESTAMP
    for record in records:
        body = b"\x00" + encode_varint(record.timestamp - base_timestamp) + record.tail
        parts.append(encode_varint(len(body)))
        parts.append(body)
        if record.timestamp > max_timestamp:
            max_timestamp = record.timestamp
    if log_append:
        max_timestamp = header.max_timestamp
    payload = b"".join(parts)
    if header.compression != Compression.NONE:
        payload = compress(header.compression, payload)
    attributes = header.attributes & ~DELETE_HORIZON_FLAG
    if horizon_ms is not None:
        attributes |= DELETE_HORIZON_FLAG
    batch = bytearray(
        _HEADER.pack(
            header.base_offset,
            HEADER_SIZE - LOG_OVERHEAD + len(payload),
            header.partition_leader_epoch,
            2,
            0,
            attributes,
            header.last_offset_delta,
            base_timestamp,
            max_timestamp,
            header.producer_id,
            header.producer_epoch,
            header.base_sequence,
            len(records),
        )
    )
    batch += payload
    struct.pack_into(">I", batch, 17, checksum(memoryview(batch)[CRC_START:]))
    return bytes(batch)


def empty_batch(header: BatchHeader, checksum: Checksum) -> bytes:
    """Kafka's DefaultRecordBatch.writeEmptyHeader: no records, no codec, base timestamp -1, the
    original offsets, producer fields, timestamp type, transactional and control bits."""
    attributes = header.attributes & 0x38  # timestamp type, transactional, control
    batch = bytearray(
        _HEADER.pack(
            header.base_offset,
            HEADER_SIZE - LOG_OVERHEAD,
            header.partition_leader_epoch,
            2,
            0,
            attributes,
            header.last_offset_delta,
            NO_TIMESTAMP,
            header.max_timestamp,
            header.producer_id,
            header.producer_epoch,
            header.base_sequence,
            0,
        )
    )
    struct.pack_into(">I", batch, 17, checksum(memoryview(batch)[CRC_START:]))
    return bytes(batch)
