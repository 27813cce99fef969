"""Reading the records inside one batch, for the few paths that need record-level answers.

Only ListOffsets by timestamp needs this (the first offset whose timestamp is >= a target, or the
offset of the largest timestamp), exactly where Kafka also iterates a batch's records. Produce and
fetch never call it. Compressed batches are inflated by a `Decompress` function passed in by the
composition root.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from .batch import HEADER_SIZE, BatchHeader, Compression, TimestampType
from .varint import read_varint

Decompress = Callable[[int, bytes], bytes]


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
