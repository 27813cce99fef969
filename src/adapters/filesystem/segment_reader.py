"""Reading one log segment: where a batch is, and its stored bytes (the read side of `segment.Segment`).

Reads look the fetch offset up in the offset index (and the active segment's tail, ADR 57) and walk
batch headers from that position; the bytes are served as stored. Where a read ends is found the same
way, from the last batch start the index or the tail knows before the end of the bytes read, never by
walking the whole range (ADR 90). Nothing here decodes records.

Each read is a byte range of the `.log` file found first, then `pread`: a read handed to the socket
(sendfile) takes the same range from here and the segment's descriptor.
"""

from __future__ import annotations

import bisect
import os
import struct
from array import array
from collections.abc import Callable, Iterator

from trafka.domain.batch import CRC_START, HEADER_SIZE, LOG_OVERHEAD, MIN_BATCH_LENGTH, BatchHeader
from trafka.domain.control import control_type

_LENGTH_AND_DELTA = struct.Struct(">qiibIhi")  # base offset .. last offset delta (27 bytes)
_LENGTH = struct.Struct(">i")
TAIL_LIMIT = 1024  # batches remembered past the last index entry (16 bytes each); past it, reads scan


def _position(entry: tuple[int, int]) -> int:
    return entry[1]


class SegmentReader:
    """The read side of a segment, over the state its writer (`segment.Segment`) keeps."""

    _log_fd: int
    size: int
    base_offset: int
    next_offset: int
    _index: list[tuple[int, int]]  # (relative offset, position)
    _time_index: list[tuple[int, int]]  # (timestamp, relative offset)
    _tail_offsets: array
    _tail_positions: array

    def _scan(
        self, start: int, checksum: Callable[[memoryview], int] | None = None
    ) -> Iterator[tuple[int, BatchHeader]]:
        """Batches from `start` to the first incomplete or invalid one (CRC checked with `checksum`)."""
        pos = start
        expected = self.base_offset  # offsets only grow within a segment
        while self.size - pos >= HEADER_SIZE:
            raw = os.pread(self._log_fd, HEADER_SIZE, pos)
            if len(raw) < HEADER_SIZE:
                return
            header = BatchHeader.parse(raw)
            if header.magic != 2 or header.batch_length < MIN_BATCH_LENGTH or pos + header.size > self.size:
                return
            if header.base_offset < expected or header.last_offset_delta < 0:
                return
            expected = header.next_offset
            if checksum is not None:
                body = os.pread(self._log_fd, header.size - CRC_START, pos + CRC_START)
                if checksum(memoryview(body)) != header.crc:
                    return
            yield pos, header
            pos += header.size

    def position_of(self, offset: int) -> int | None:
        """Position of the batch containing `offset` (or the first after it); None past the end."""
        i = bisect.bisect_right(self._index, (offset - self.base_offset, 2**31)) - 1
        start = self._index[i][1] if i >= 0 else 0
        tail = self._tail_offsets
        if tail and i == len(self._index) - 1:  # at or past the last index entry: the tail has it
            j = bisect.bisect_left(tail, offset)
            if j < len(tail):
                return self._tail_positions[j]
            if len(tail) < TAIL_LIMIT:
                return None
            start = self._tail_positions[-1]  # a tail cut at its limit: scan on from its last batch
        pos = start
        while self.size - pos >= LOG_OVERHEAD + 15:
            base, length, _, _, _, _, delta = _LENGTH_AND_DELTA.unpack(os.pread(self._log_fd, 27, pos))
            if base + delta >= offset:
                return pos
            pos += LOG_OVERHEAD + length
        return None

    def read_from(self, pos: int, max_bytes: int, min_one_batch: bool) -> bytes:
        """Whole batches from `pos`, up to max_bytes (at least one with min_one_batch)."""
        return self._read(pos, max_bytes, min_one_batch, self.size)[0]

    def read_below(self, pos: int, max_bytes: int, min_one_batch: bool, stop_offset: int) -> tuple[bytes, int]:
        """`read_from`, less the batches from the first whose base offset is `stop_offset` or more; and
        the last offset of the last batch returned (-1 if none).

        The cut is found as Kafka finds the last stable offset's position, through the offset index
        and the tail, so reading below an open transaction walks no batch of the range read."""
        limit = self.size if stop_offset >= self.next_offset else self._first_batch_from(stop_offset)
        data, last_start = self._read(pos, max_bytes, min_one_batch, limit)
        if not data:
            return b"", -1
        end = pos + len(data)
        if end == self.size:
            return data, self.next_offset - 1
        if last_start < 0:
            last_start = self._last_batch_before(end)
        if last_start >= pos:
            base, _, _, _, _, _, delta = _LENGTH_AND_DELTA.unpack_from(data, last_start - pos)
        else:  # cannot happen: the last batch returned starts at `pos` or after; read it all the same
            base, _, _, _, _, _, delta = _LENGTH_AND_DELTA.unpack(os.pread(self._log_fd, 27, last_start))
        return data, base + delta

    def _read(self, pos: int, max_bytes: int, min_one_batch: bool, limit: int) -> tuple[bytes, int]:
        """Whole batches from `pos`, up to max_bytes (at least one with min_one_batch) and not past
        `limit` (where a batch starts, or the segment's end); and where the last one starts, when the
        read learnt it on the way (-1 otherwise).

        The end is found without walking the range: a read that reaches `limit` ends there, and
        otherwise the lengths are walked from the last batch start the offset index or the tail knows
        at or before the end of the bytes read (at most `index.interval.bytes` of batches, as Kafka's
        own lookups walk from an index entry)."""
        available = limit - pos
        if available < LOG_OVERHEAD:
            return b"", -1
        chunk = os.pread(self._log_fd, min(max(max_bytes, LOG_OVERHEAD), available), pos)
        length = len(chunk)
        if length < LOG_OVERHEAD:
            return b"", -1
        first_size = LOG_OVERHEAD + _LENGTH.unpack_from(chunk, 8)[0]
        if first_size > max_bytes:
            return (os.pread(self._log_fd, first_size, pos), pos) if min_one_batch else (b"", -1)
        if length == available:
            return chunk, -1
        end = self._batch_start_at_or_before(pos + length) - pos
        if end < 0:
            end = 0
        last = -1
        while length - end >= LOG_OVERHEAD:
            size = LOG_OVERHEAD + _LENGTH.unpack_from(chunk, end + 8)[0]
            if end + size > length:
                break
            last = end
            end += size
        return chunk[:end], -1 if last < 0 else pos + last

    def _batch_start_at_or_before(self, pos: int) -> int:
        """The last batch start at or before `pos` that the tail or the offset index knows (0 if none)."""
        tail = self._tail_positions
        if tail and tail[0] <= pos:
            return tail[bisect.bisect_right(tail, pos) - 1]
        i = bisect.bisect_right(self._index, pos, key=_position) - 1
        return self._index[i][1] if i >= 0 else 0

    def _last_batch_before(self, end: int) -> int:
        """Where the batch that ends at `end` (a batch boundary past 0) starts: a walk of the lengths
        from the last batch start known before `end`."""
        pos = self._batch_start_at_or_before(end - 1)
        while True:
            size = LOG_OVERHEAD + _LENGTH.unpack(os.pread(self._log_fd, 4, pos + 8))[0]
            if pos + size >= end:
                return pos
            pos += size

    def _first_batch_from(self, offset: int) -> int:
        """Where the first batch whose base offset is `offset` or more starts (the size if none)."""
        pos = self.position_of(offset)
        if pos is None:
            return self.size
        base, length, _, _, _, _, _ = _LENGTH_AND_DELTA.unpack(os.pread(self._log_fd, 27, pos))
        return pos if base >= offset else pos + LOG_OVERHEAD + length

    def headers(self, start: int = 0) -> Iterator[tuple[int, BatchHeader]]:
        """(position, header) of each batch from `start`, reading headers only."""
        return self._scan(start)

    def control_type_at(self, pos: int, header: BatchHeader) -> int:
        """ABORT or COMMIT: the type of the control batch at `pos`."""
        return control_type(os.pread(self._log_fd, header.size, pos))

    def batches(self, start: int = 0) -> Iterator[tuple[int, bytes]]:
        """(position, bytes) of each batch from `start`."""
        for pos, header in self._scan(start):
            yield pos, os.pread(self._log_fd, header.size, pos)

    def position_for_timestamp(self, timestamp: int) -> int:
        """Where to start scanning for the first record with timestamp >= `timestamp` (time index)."""
        i = bisect.bisect_left(self._time_index, (timestamp, -(2**31)))
        if i == 0:
            return 0
        rel = self._time_index[i - 1][1]
        found = self.position_of(self.base_offset + rel)
        return found if found is not None else 0
