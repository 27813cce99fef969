"""Kafka's record batch v2, read and written whole: the records' keys, values, timestamps and headers.

The broker's hot paths never come here (they read and patch batch headers, `trafka.domain.batch`);
this is for the few that want every field of every record and are not hot: `Broker.records()`, the
console's message browser, the share groups' dead-letter copies, the internal logs and `_schemas`,
the operator commands (`trafka consume`, `trafka produce`, `dump-log`) and Spark's reader. One reader
and one builder for all of them (ADR 101), in this leaf package so that adapters and the operator
commands share it without importing each other.

A batch is the 61-byte header (`BatchHeader`, the broker's own: `trafka.domain.batch_header`, ADR 112), then `records_count` records, compressed together
when the header's codec says so. A record is: length (varint), attributes (int8, unused), timestamp
delta (varint), offset delta (varint), key length (varint, -1 null) and key, value length and value,
header count (varint), then each header's key length and key (UTF-8) and value length and value.
Compression and the CRC-32C come in as functions (`Decompress`, `Compress`, `Checksum`), so this
module imports no C extension and each caller picks its bound (the broker's inflation is bounded,
ADR 69).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple

from trafka.domain.batch_header import (
    CRC_START,
    HEADER_SIZE,
    HEADER_STRUCT,
    LOG_OVERHEAD,
    TRANSACTIONAL_FLAG,
    BatchHeader,
)

NO_COMPRESSION = 0

Decompress = Callable[[int, bytes], bytes]
Compress = Callable[[int, bytes], bytes]
Checksum = Callable[[memoryview], int]
Buffer = bytes | bytearray | memoryview
Headers = tuple[tuple[str, bytes | None], ...]


class CorruptBatch(ValueError):
    """A batch or record that runs past its end, or a codec this reader was not given."""


class Record(NamedTuple):
    """One record with its absolute offset and timestamp (the batch's max timestamp for LogAppendTime)."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: Headers


def iter_batches(buf: Buffer) -> Iterator[tuple[BatchHeader, memoryview]]:
    """Each whole v2 batch in `buf` with its bytes; a partial batch at the end (a fetch's cut) is left out."""
    view = memoryview(buf)
    pos = 0
    while pos + HEADER_SIZE <= len(view):
        header = BatchHeader.parse(view, pos)
        end = pos + header.size
        if header.batch_length < HEADER_SIZE - LOG_OVERHEAD or end > len(view):
            return
        yield header, view[pos:end]
        pos = end


def _uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        byte = buf[pos]  # IndexError past the end: a corrupt record
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise CorruptBatch("varint too long")


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    raw, pos = _uvarint(buf, pos)
    return (raw >> 1) ^ -(raw & 1), pos


def _bytes(buf: bytes, pos: int) -> tuple[bytes | None, int]:
    length, pos = _varint(buf, pos)
    if length < 0:
        return None, pos
    end = pos + length
    if end > len(buf):
        raise IndexError
    return buf[pos:end], end


def decode_records(batch: Buffer, decompress: Decompress | None = None) -> list[Record]:
    """Every record of the batch at batch[0] (a control batch's too: its key says abort or commit).
    CorruptBatch if a record runs past the batch, or if it is compressed and no `decompress` was given."""
    header = BatchHeader.parse(batch)
    body = bytes(memoryview(batch)[HEADER_SIZE : header.size])
    if header.compression != NO_COMPRESSION:
        if decompress is None:
            raise CorruptBatch(f"a batch compressed with codec {header.compression} and no decompressor")
        body = decompress(header.compression, body)
    log_append = header.is_log_append_time
    out: list[Record] = []
    pos = 0
    try:
        for _ in range(header.records_count):
            length, pos = _varint(body, pos)
            end = pos + length
            if length < 0 or end > len(body):
                raise IndexError
            pos += 1  # attributes
            timestamp_delta, pos = _varint(body, pos)
            offset_delta, pos = _varint(body, pos)
            key, pos = _bytes(body, pos)
            value, pos = _bytes(body, pos)
            count, pos = _varint(body, pos)
            headers = []
            for _ in range(count):
                name, pos = _bytes(body, pos)
                data, pos = _bytes(body, pos)
                headers.append(((name or b"").decode("utf-8", errors="replace"), data))
            if pos > end:
                raise IndexError
            timestamp = header.max_timestamp if log_append else header.base_timestamp + timestamp_delta
            out.append(Record(header.base_offset + offset_delta, timestamp, key, value, tuple(headers)))
            pos = end
    except IndexError:
        raise CorruptBatch("a record runs past the end of its batch") from None
    return out


def read_records(buf: Buffer, decompress: Decompress | None = None, controls: bool = False) -> Iterator[Record]:
    """The records of every whole batch in `buf`, control batches' only with `controls`."""
    for header, batch in iter_batches(buf):
        if header.is_control and not controls:
            continue
        yield from decode_records(batch, decompress)


def _varint_bytes(value: int) -> bytes:
    raw = (value << 1) ^ (value >> 63)
    out = bytearray()
    while True:
        byte = raw & 0x7F
        raw >>= 7
        if raw:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(data: bytes | None) -> bytes:
    return b"\x01" if data is None else _varint_bytes(len(data)) + data


class NewRecord(NamedTuple):
    """A record to build: its timestamp, key, value and headers."""

    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: Iterable[tuple[str, bytes | None]] = ()


def build_batch(
    records: Sequence[NewRecord],
    checksum: Checksum,
    *,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
    compression: int = NO_COMPRESSION,
    compress: Compress | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
) -> bytes:
    """A batch of `records` (at least one) at offset deltas 0..n-1, CreateTime, as Kafka's
    MemoryRecordsBuilder writes it: the base timestamp is the first record's, the max the largest."""
    base_timestamp = records[0].timestamp
    parts = []
    for delta, record in enumerate(records):
        headers = list(record.headers)
        body = b"".join(
            [
                b"\x00",
                _varint_bytes(record.timestamp - base_timestamp),
                _varint_bytes(delta),
                _field(record.key),
                _field(record.value),
                _varint_bytes(len(headers)),
                *(_field(name.encode()) + _field(data) for name, data in headers),
            ]
        )
        parts.append(_varint_bytes(len(body)) + body)
    payload = b"".join(parts)
    if compression != NO_COMPRESSION:
        if compress is None:
            raise ValueError(f"codec {compression} needs a compressor")
        payload = compress(compression, payload)
    attributes = compression | (TRANSACTIONAL_FLAG if transactional else 0)
    batch = bytearray(
        HEADER_STRUCT.pack(
            base_offset,
            HEADER_SIZE - LOG_OVERHEAD + len(payload),
            partition_leader_epoch,
            2,
            0,
            attributes,
            len(records) - 1,
            base_timestamp,
            max(r.timestamp for r in records),
            producer_id,
            producer_epoch,
            base_sequence,
            len(records),
        )
    )
    batch += payload
    struct.pack_into(">I", batch, 17, checksum(memoryview(batch)[CRC_START:]))
    return bytes(batch)
