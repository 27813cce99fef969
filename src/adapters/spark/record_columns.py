"""Decoding the records of a stored record batch (magic v2) into `RecordColumns`.

Segment files hold batches exactly as producers sent them, so the data-dir source decodes records
itself: the batch header with the domain's `BatchHeader`, a compressed body inflated with
kafka-python's `kafka.codec` (gzip, snappy raw or xerial-framed, LZ4 frame, zstd), then each record's
varint fields (the domain's `read_varint`). This loop is the export's hot path; written out here it
decodes about three times faster than iterating kafka-python's `DefaultRecordBatch`, which builds an
object per record.

Control batches (transaction markers) hold no user records and are skipped, as Kafka consumers do.
Records outside the requested offset range (below the log start, or past the range end) are skipped
while the rest of their batch is read.
"""

from __future__ import annotations

from collections.abc import Callable

from kafka import codec

from trafka.domain.batch import HEADER_SIZE, BatchHeader, Compression
from trafka.domain.batch_header import TimestampType
from trafka.domain.errors import KafkaError
from trafka.domain.varint import read_varint

from .errors import SourceError
from .schema import RecordColumns

_INFLATE: dict[int, Callable[[bytes], bytes]] = {  # Compression is an IntEnum: keyed by the header's int
    Compression.GZIP: codec.gzip_decode,
    Compression.SNAPPY: codec.snappy_decode,
    Compression.LZ4: codec.lz4_decode,
    Compression.ZSTD: codec.zstd_decode,
}


def batch_body(batch: bytes | memoryview, header: BatchHeader) -> bytes:
    """The records of the batch, inflated if the batch is compressed."""
    body = bytes(batch[HEADER_SIZE : header.size])
    if header.compression == Compression.NONE:
        return body
    inflate = _INFLATE.get(header.compression)
    if inflate is None:
        raise SourceError(f"batch at offset {header.base_offset} uses unknown compression codec {header.compression}")
    try:
        return inflate(body)
    except Exception as exc:  # each codec library raises its own error types
        raise SourceError(f"cannot decompress the batch at offset {header.base_offset}: {exc}") from exc


def append_batch(batch: bytes | memoryview, columns: RecordColumns, from_offset: int, until_offset: int) -> int:
    """Append the batch's records with offsets in [from_offset, until_offset); return how many."""
    header = BatchHeader.parse(batch)
    if header.magic != 2:
        raise SourceError(f"batch at offset {header.base_offset} has message format v{header.magic}; only v2 is read")
    if header.is_control or header.last_offset < from_offset or header.base_offset >= until_offset:
        return 0
    body = batch_body(batch, header)
    try:
        return _append_records(body, header, columns, from_offset, until_offset)
    except (IndexError, ValueError, UnicodeDecodeError, KafkaError) as exc:
        raise SourceError(f"the batch at offset {header.base_offset} holds a malformed record: {exc}") from exc


def _append_records(
    buf: bytes, header: BatchHeader, columns: RecordColumns, from_offset: int, until_offset: int
) -> int:
    base_offset = header.base_offset
    log_append_time = header.timestamp_type is TimestampType.LOG_APPEND_TIME
    base_timestamp = header.max_timestamp if log_append_time else header.base_timestamp
    timestamp_type = int(header.timestamp_type)
    want_headers = columns.include_headers
    append = columns.append
    appended = 0
    pos = 0
    for _ in range(header.records_count):
        length, pos = read_varint(buf, pos)
        end = pos + length
        pos += 1  # record attributes: unused
        timestamp_delta, pos = read_varint(buf, pos)
        offset_delta, pos = read_varint(buf, pos)
        offset = base_offset + offset_delta
        if offset < from_offset or offset >= until_offset:
            pos = end
            continue
        key_length, pos = read_varint(buf, pos)
        if key_length >= 0:
            key: bytes | None = buf[pos : pos + key_length]
            pos += key_length
        else:
            key = None
        value_length, pos = read_varint(buf, pos)
        if value_length >= 0:
            value: bytes | None = buf[pos : pos + value_length]
            pos += value_length
        else:
            value = None
        headers: list[tuple[str, bytes | None]] | None = None
        if want_headers:
            count, pos = read_varint(buf, pos)
            if count:
                headers = []
                for _ in range(count):
                    name_length, pos = read_varint(buf, pos)
                    name = buf[pos : pos + name_length].decode()
                    pos += name_length
                    header_length, pos = read_varint(buf, pos)
                    if header_length >= 0:
                        headers.append((name, buf[pos : pos + header_length]))
                        pos += header_length
                    else:
                        headers.append((name, None))
        if pos > end or end > len(buf):
            raise ValueError(f"record at offset {offset} overruns its length")
        timestamp = base_timestamp if log_append_time else base_timestamp + timestamp_delta
        append(offset, timestamp, timestamp_type, key, value, headers)
        appended += 1
        pos = end
    return appended
