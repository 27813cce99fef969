"""Reading the records inside one batch, for the few paths that need record-level answers.

ListOffsets by timestamp needs this (the first offset whose timestamp is >= a target, or the
offset of the largest timestamp), exactly where Kafka also iterates a batch's records; so does
produce on a topic with broker-side schema validation turned on (`schema_validation.py`), on a
compacted topic (keys), and for a batch whose first record has no timestamp (its max timestamp). Fetch
never calls it. Compressed batches are inflated by a `Decompress` function passed in by the composition
root, which bounds what a batch may inflate to (ADR 69).

The produce-time readers (keys of a compacted topic, schema validation) read exactly the batch's
declared record count and refuse a batch whose records end before its body does (INVALID_RECORD, as
Kafka's "Incorrect declared batch size, records still remaining") or run past it (CORRUPT_MESSAGE).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from .batch import HEADER_SIZE, BatchHeader, Compression
from .batch_header import TimestampType
from .errors import ErrorCode, KafkaError
from .varint import read_varint

Decompress = Callable[[int, bytes], bytes]
Buffer = bytes | bytearray | memoryview


def record_timestamps(batch: bytes, decompress: Decompress) -> Iterator[tuple[int, int]]:
    """Yield (offset, timestamp) for every record of the batch that starts at batch[0]."""
    header = BatchHeader.parse(batch)
    if header.timestamp_type is TimestampType.LOG_APPEND_TIME:
        for delta in range(header.last_offset_delta + 1):
            yield header.base_offset + delta, header.max_timestamp
        return
    body = bytes(batch[HEADER_SIZE : header.size])
    if header.compression != Compression.NONE:
        body = decompress(header.compression, body)
    pos = 0
    for _ in range(header.records_count):
        length, pos = read_varint(body, pos)
        end = pos + length
        pos += 1  # attributes
        timestamp_delta, pos = read_varint(body, pos)
        offset_delta, pos = read_varint(body, pos)
        yield header.base_offset + offset_delta, header.base_timestamp + timestamp_delta
        pos = end


def records_max_timestamp(batch: Buffer, decompress: Decompress) -> int:
    """The largest record timestamp of a CreateTime batch, -1 when no record has one (Kafka's
    LogValidator computes it so for every batch it stores). A record that runs past its batch is
    CORRUPT_MESSAGE."""
    largest = -1
    try:
        for _, timestamp in record_timestamps(bytes(batch), decompress):
            if timestamp > largest:
                largest = timestamp
    except IndexError:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "a record runs past the end of its batch") from None
    return largest


def record_keys_values(
    batch: Buffer, decompress: Decompress, limit: int | None = None
) -> Iterator[tuple[bytes | None, bytes | None]]:
    """Yield (key, value) for every record of the batch that starts at batch[0]; None for a null one.

    With `limit`, keys and values are cut to their first `limit` bytes (what a caller that only looks
    at a prefix needs, without copying the rest). A record that runs past its batch is CORRUPT_MESSAGE.
    Varints are read inline when they fit in one byte (offset deltas, and lengths under 64): this is
    a per-record loop, and a call per field would double its cost."""
    header = BatchHeader.parse(batch)
    body = bytes(batch[HEADER_SIZE : header.size])
    if header.compression != Compression.NONE:
        body = decompress(header.compression, body)
    try:
        yield from _keys_values(body, header.records_count, limit)
    except IndexError:  # a varint or field past the end of the records
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "a record runs past the end of its batch") from None


def _left_over(body: bytes, pos: int, count: int) -> None:
    if pos != len(body):
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            f"Incorrect declared batch size, records still remaining in the batch after {count} records",
        )


def _keys_values(body: bytes, count: int, limit: int | None) -> Iterator[tuple[bytes | None, bytes | None]]:
    size = len(body)
    pos = 0
    for _ in range(count):
        length, pos = read_varint(body, pos)
        end = pos + length
        if length < 0 or end > size:
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "a record runs past the end of its batch")
        pos += 1  # attributes
        while body[pos] & 0x80:  # timestamp delta
            pos += 1
        pos += 1
        while body[pos] & 0x80:  # offset delta
            pos += 1
        pos += 1
        byte = body[pos]
        if byte < 0x80:
            key_length = (byte >> 1) ^ -(byte & 1)
            pos += 1
        else:
            key_length, pos = read_varint(body, pos)
        key = None
        if key_length >= 0:
            key = body[pos : pos + (key_length if limit is None else min(key_length, limit))]
            pos += key_length
        byte = body[pos]
        if byte < 0x80:
            value_length = (byte >> 1) ^ -(byte & 1)
            pos += 1
        else:
            value_length, pos = read_varint(body, pos)
        value = None
        if value_length >= 0:
            value = body[pos : pos + (value_length if limit is None else min(value_length, limit))]
            pos += value_length
        if pos > end:
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "a record's key or value runs past the record")
        yield key, value
        pos = end
    _left_over(body, pos, count)


def keyless_record_indexes(batch: Buffer, decompress: Decompress) -> list[int]:
    """The index in the batch of every record without a key (key length -1).

    Kafka's LogValidator.validateKey refuses those on a compacted topic; it reads each record's key
    length there (a compressed batch is inflated for it), and so does this, only for compacted
    topics. A record that runs past its batch is CORRUPT_MESSAGE."""
    header = BatchHeader.parse(batch)
    body = bytes(batch[HEADER_SIZE : header.size])
    if header.compression != Compression.NONE:
        body = decompress(header.compression, body)
    size = len(body)
    keyless = []
    pos = 0
    try:
        for index in range(header.records_count):
            length, pos = read_varint(body, pos)
            end = pos + length
            if length < 0 or end > size:
                raise IndexError
            pos += 1  # attributes
            while body[pos] & 0x80:  # timestamp delta
                pos += 1
            pos += 1
            while body[pos] & 0x80:  # offset delta
                pos += 1
            pos += 1
            if body[pos] == 1:  # zig-zag -1: a null key
                keyless.append(index)
            pos = end
    except IndexError:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "a record runs past the end of its batch") from None
    _left_over(body, pos, header.records_count)
    return keyless
