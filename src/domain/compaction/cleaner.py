"""One cleaning of one log, as Kafka's Cleaner.doClean does it.

1. Build the offset map over the dirty section [first dirty, first uncleanable), skipping aborted
   batches and markers; if the dedupe buffer fills, the map (and this round) stops at the last
   batch fully mapped.
2. Recopy every segment from the log's start to the end of the mapped range, in groups of
   consecutive segments whose total fits `segment.bytes` (small segments merged), each group into
   one cleaned segment named after the group's first base offset, keeping what `rules.filter_batch`
   keeps.
3. Hand each cleaned segment with the segments it replaces to `swap` (the store's swap protocol).

Returns the end of the mapped range: the next first dirty offset, for `cleaner-offset-checkpoint`.
The log comes in through the `CleanableLog` port; time (`now_ms`) and the throttle are arguments.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Mapping
from typing import Protocol

import attrs

from ..batch import BatchHeader, Checksum
from ..control import AbortedTxn, control_type
from ..retention import SegmentInfo
from .records import (
    CleanerRecord,
    Compress,
    Decompress,
    KeyScanner,
    decode_keys,
    decode_records,
    empty_batch,
    rebuild_batch,
)
from .rules import CleanedTransactions, LastRecord, OffsetMap, filter_batch, map_batch
from .selection import CompactionConfig, LogToClean, group_segments_by_size


class CleanedSegment(Protocol):
    """A segment being written by the cleaner (`<base>.log.cleaned` on the filesystem)."""

    def append(self, batch: bytes, header: BatchHeader) -> None: ...

    def set_aborted(self, aborted: list[AbortedTxn]) -> None:
        """The cleaned segment's aborted transaction index."""

    def finish(self) -> None:
        """Everything is written: make it durable (before the swap)."""

    def discard(self) -> None:
        """The cleaning was aborted: remove what was written."""


class CleanableLog(Protocol):
    """What the cleaner reads and writes of a partition log. Segments other than the active one do
    not change while the cleaner reads them; only `swap` (on the store's own thread) replaces them."""

    def segment_infos(self) -> list[SegmentInfo]: ...

    def segment_batches(self, base_offset: int) -> Iterator[tuple[BatchHeader, bytes]]:
        """Every batch of the segment that starts at `base_offset`, in order."""

    def aborted_transactions(self, start_offset: int, end_offset: int) -> list[AbortedTxn]: ...

    def cleaned_segment(self, base_offset: int) -> CleanedSegment: ...


@attrs.define
class CleanerStats:
    """Kafka's CleanerStats, the parts its metrics and log line use."""

    bytes_read: int = 0
    bytes_written: int = 0
    messages_read: int = 0
    messages_written: int = 0
    map_messages_read: int = 0
    map_bytes_read: int = 0
    buffer_utilization: float = 0.0


Swap = Callable[[CleanedSegment, list[int]], None]


def _control_type(header: BatchHeader, batch: bytes) -> int | None:
    return control_type(batch) if header.records_count > 0 else None


class _Retained:
    """The offsets that can survive in the mapped dirty section [start, latest] (each key's last)."""

    def __init__(self, offsets: list[int], start: int, latest: int, tombstone_batches: set[int]) -> None:
        self._offsets = offsets
        self._start = start
        self._latest = latest
        self._tombstone_batches = tombstone_batches

    def all_in(self, header: BatchHeader) -> bool:
        """True if every record of this data batch is its key's last and none is a tombstone, so it
        is kept as it is: as many of those offsets fall in its range as it has records."""
        if header.is_control or header.base_offset < self._start or header.last_offset > self._latest:
            return False
        if header.base_offset in self._tombstone_batches:
            return False
        low = bisect_left(self._offsets, header.base_offset)
        return bisect_right(self._offsets, header.last_offset) - low == header.records_count

    def none_in(self, header: BatchHeader) -> bool:
        """True if no record of this data batch can survive, so it need not be decoded: it lies in
        the mapped dirty section, where every keyed record outside an aborted transaction is in the
        map, and none of its offsets is a key's last. (Keyless records never survive; the records of
        an aborted transaction go whatever the map says.)"""
        if header.is_control or header.base_offset < self._start or header.last_offset > self._latest:
            return False
        i = bisect_left(self._offsets, header.base_offset)
        return i == len(self._offsets) or self._offsets[i] > header.last_offset


class Cleaner:
    def __init__(
        self,
        checksum: Checksum,
        decompress: Decompress,
        compress: Compress,
        dedupe_buffer_bytes: int,
        throttle: Callable[[int], None] = lambda _: None,
        load_factor: float = 0.9,
        scan_keys: KeyScanner = decode_keys,
    ) -> None:
        """`scan_keys`: how the offset map pass reads a batch's keys (a compiled scanner may be
        passed in; the domain's own is pure Python)."""
        self._checksum = checksum
        self._decompress = decompress
        self._compress = compress
        self._buffer_bytes = dedupe_buffer_bytes
        self._load_factor = load_factor
        self._throttle = throttle
        self._scan_keys = scan_keys

    def clean(
        self,
        log: CleanableLog,
        to_clean: LogToClean,
        config: CompactionConfig,
        last_records: Mapping[int, LastRecord],
        now_ms: int,
        swap: Swap,
    ) -> tuple[int, CleanerStats]:
        stats = CleanerStats()
        start, end = to_clean.first_dirty_offset, to_clean.first_uncleanable_offset
        if start >= end:
            return start, stats
        tombstone_batches: set[int] = set()
        offset_map = self._build_offset_map(log, start, end, stats, tombstone_batches)
        end_offset = offset_map.latest_offset + 1
        if end_offset <= 0:
            return start, stats
        segments = [s for s in log.segment_infos() if s.base_offset < end_offset]
        transactions = CleanedTransactions()
        retained = _Retained(offset_map.retained_offsets(), start, offset_map.latest_offset, tombstone_batches)
        for group in group_segments_by_size(segments, config.segment_bytes, end):
            self._clean_group(
                log, group, offset_map, retained, transactions, last_records, end, now_ms, config, stats, swap
            )
        stats.buffer_utilization = offset_map.utilization
        return end_offset, stats

    def _build_offset_map(
        self, log: CleanableLog, start: int, end: int, stats: CleanerStats, tombstone_batches: set[int]
    ) -> OffsetMap:
        """The offset map of the dirty section; `tombstone_batches` gets the base offsets of the
        mapped batches that hold a keyed tombstone."""
        offset_map = OffsetMap(self._buffer_bytes, self._load_factor)
        transactions = CleanedTransactions(log.aborted_transactions(start, end))
        dirty = [s for s in log.segment_infos()[:-1] if s.next_offset > start and s.base_offset < end]
        for i, segment in enumerate(dirty):
            for header, batch in log.segment_batches(segment.base_offset):
                if header.last_offset < start:
                    continue
                if header.base_offset >= end:
                    break
                self._throttle(header.size)
                stats.map_bytes_read += header.size
                stats.map_messages_read += header.records_count
                pairs = None
                kind = None
                if header.is_control:
                    kind = _control_type(header, batch)
                else:
                    pairs, tombstones = self._scan_keys(batch, header, self._decompress)
                    if tombstones:
                        tombstone_batches.add(header.base_offset)
                if map_batch(offset_map, header, pairs, start, transactions, kind):
                    return offset_map
            # offsets removed earlier leave gaps: the mapped range reaches to the next segment
            following = dirty[i + 1].base_offset if i + 1 < len(dirty) else end
            offset_map.update_latest_offset(following - 1)
        return offset_map

    def _clean_group(
        self,
        log: CleanableLog,
        group: list[SegmentInfo],
        offset_map: OffsetMap,
        retained: _Retained,
        transactions: CleanedTransactions,
        last_records: Mapping[int, LastRecord],
        round_end: int,
        now_ms: int,
        config: CompactionConfig,
        stats: CleanerStats,
        swap: Swap,
    ) -> None:
        cleaned = log.cleaned_segment(group[0].base_offset)
        try:
            self._recopy(
                log, group, cleaned, offset_map, retained, transactions, last_records, round_end, now_ms, config, stats
            )
        except BaseException:
            cleaned.discard()
            raise
        swap(cleaned, [s.base_offset for s in group])

    def _recopy(
        self,
        log: CleanableLog,
        group: list[SegmentInfo],
        cleaned: CleanedSegment,
        offset_map: OffsetMap,
        retained: _Retained,
        transactions: CleanedTransactions,
        last_records: Mapping[int, LastRecord],
        round_end: int,
        now_ms: int,
        config: CompactionConfig,
        stats: CleanerStats,
    ) -> None:
        transactions.kept_aborted = []
        for segment in group:
            transactions.add_aborted(log.aborted_transactions(segment.base_offset, segment.next_offset))
            for header, batch in log.segment_batches(segment.base_offset):
                self._throttle(header.size)
                stats.bytes_read += header.size
                stats.messages_read += header.records_count
                records: list[CleanerRecord] | None
                if not header.records_count or retained.none_in(header):
                    records = []
                elif retained.all_in(header):
                    records = None  # every record kept: no decode
                else:
                    records = decode_records(batch, header, self._decompress)
                kind = _control_type(header, batch) if header.is_control else None
                outcome = filter_batch(
                    header,
                    records,
                    kind,
                    offset_map,
                    transactions,
                    last_records,
                    round_end,
                    now_ms,
                    config.delete_retention_ms,
                )
                if outcome.dropped:
                    continue
                if outcome.unchanged:
                    out = batch
                elif outcome.empty:
                    out = empty_batch(header, self._checksum)
                else:
                    out = rebuild_batch(header, outcome.kept, outcome.horizon_ms, self._compress, self._checksum)
                stats.bytes_written += len(out)
                stats.messages_written += header.records_count if outcome.unchanged else len(outcome.kept)
                cleaned.append(out, BatchHeader.parse(out))
                self._throttle(len(out))
        cleaned.set_aborted(list(transactions.kept_aborted))
        cleaned.finish()
