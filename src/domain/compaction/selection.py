"""Which log the cleaner takes next and how far it may clean it (Kafka's LogCleanerManager).

A compacted log has a clean section (below the first dirty offset, from `cleaner-offset-checkpoint`)
and a dirty one. The dirty section is cleanable up to the first uncleanable offset: never past the
last stable offset, never into the active segment, never into a segment whose largest timestamp (its last write when
no record has one) is within `min.compaction.lag.ms` of now. Logs are taken dirtiest first, by cleanable bytes over total
bytes, if that ratio passes `min.cleanable.dirty.ratio`, or if `max.compaction.lag.ms` has passed
since the first batch of a dirty segment was written (and there is something to clean).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from ..retention import SegmentInfo
from ..topics import TopicPartition


@attrs.frozen
class CompactionConfig:
    """A compacted topic's settings, as the cleaner reads them."""

    min_cleanable_ratio: float = 0.5
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = 2**63 - 1
    delete_retention_ms: int = 86_400_000
    segment_bytes: int = 1_073_741_824
    max_message_bytes: int = 1_048_588


@attrs.frozen
class LogToClean:
    tp: TopicPartition
    first_dirty_offset: int
    first_uncleanable_offset: int  # the base offset of the first segment not cleaned
    clean_bytes: int
    cleanable_bytes: int
    needs_compaction_now: bool = False
    force_checkpoint: bool = False  # the checkpointed offset was invalid and is reset

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float:
        return self.cleanable_bytes / self.total_bytes if self.total_bytes else 0.0


def cleanable_offsets(
    segments: Sequence[SegmentInfo],
    log_start_offset: int,
    log_end_offset: int,
    checkpoint: int | None,
    last_stable_offset: int,
    now_ms: int,
    min_compaction_lag_ms: int,
) -> tuple[int, int, bool]:
    """(first dirty offset, first uncleanable dirty offset, whether the checkpoint was reset)."""
    first_dirty = log_start_offset if checkpoint is None else checkpoint
    force = False
    if first_dirty < log_start_offset or first_dirty > log_end_offset:
        first_dirty, force = log_start_offset, checkpoint is not None
    limits = [last_stable_offset, segments[-1].base_offset]
    lag = max(min_compaction_lag_ms, 0)
    if lag > 0:
        for segment in _non_active_from(segments, first_dirty):
            if segment.largest_timestamp > now_ms - lag:  # the last write when no record has a timestamp
                limits.append(segment.base_offset)
                break
    return first_dirty, max(first_dirty, min(limits)), force


def _non_active_from(segments: Sequence[SegmentInfo], offset: int) -> list[SegmentInfo]:
    """The segments that hold offsets from `offset` on, the active one excluded (Kafka's
    nonActiveLogSegmentsFrom: from the segment containing `offset`)."""
    return [s for s in segments[:-1] if s.next_offset > offset]


def max_compaction_delay(
    segments: Sequence[SegmentInfo],
    first_batch_timestamps: Sequence[int],
    first_dirty_offset: int,
    now_ms: int,
    max_compaction_lag_ms: int,
) -> int:
    """How long past `max.compaction.lag.ms` the oldest dirty non-active segment is (0: not yet).
    `first_batch_timestamps[i]` is segment i's first batch's max timestamp (-1 if none)."""
    dirty = [
        first_batch_timestamps[i]
        for i, s in enumerate(segments[:-1])
        if s.next_offset > first_dirty_offset and first_batch_timestamps[i] > 0
    ]
    if not dirty:
        return 0
    clean_until = now_ms - max(max_compaction_lag_ms, 0)
    earliest = min(dirty)
    return clean_until - earliest if earliest < clean_until else 0


def log_to_clean(
    tp: TopicPartition,
    segments: Sequence[SegmentInfo],
    first_dirty_offset: int,
    uncleanable_offset: int,
    needs_compaction_now: bool = False,
    force_checkpoint: bool = False,
) -> LogToClean:
    """Kafka's LogToClean: clean bytes below the first dirty offset; cleanable bytes from there to the
    first segment that starts at or after the uncleanable offset (or the active segment)."""
    first_uncleanable = _first_uncleanable_segment_base(segments, uncleanable_offset)
    lower = min(first_dirty_offset, first_uncleanable)
    cleanable = sum(s.size for s in segments if s.next_offset > lower and s.base_offset < first_uncleanable)
    clean = sum(s.size for s in segments if s.base_offset < first_dirty_offset)  # Kafka's logSegments(-1, dirty)
    return LogToClean(
        tp, first_dirty_offset, first_uncleanable, clean, cleanable, needs_compaction_now, force_checkpoint
    )


def _first_uncleanable_segment_base(segments: Sequence[SegmentInfo], uncleanable_offset: int) -> int:
    """Kafka's calculateCleanableBytes: the first non-active segment from the one holding
    `uncleanable_offset`, else the active segment."""
    for s in segments[:-1]:
        if s.next_offset > uncleanable_offset:
            return s.base_offset
    return segments[-1].base_offset


def is_cleanable(candidate: LogToClean, min_cleanable_ratio: float) -> bool:
    """Kafka's grabFilthiestCompactedLog filter: forced by max.compaction.lag.ms with bytes to clean,
    or dirtier than min.cleanable.dirty.ratio."""
    if candidate.total_bytes <= 0:
        return False
    return (candidate.needs_compaction_now and candidate.cleanable_bytes > 0) or (
        candidate.cleanable_ratio > min_cleanable_ratio
    )


def group_segments_by_size(
    segments: Sequence[SegmentInfo], max_size: int, first_uncleanable_offset: int
) -> list[list[SegmentInfo]]:
    """Kafka's groupSegmentsBySize: consecutive segments merged while their total size stays within
    `segment.bytes` and their offsets within a relative offset's range (the index size bound is the
    same check on index files, which trafka's sparse indexes never reach first)."""
    groups: list[list[SegmentInfo]] = []
    remaining = list(segments)
    while remaining:
        group = [remaining.pop(0)]
        size = group[0].size
        while remaining:
            nxt = remaining[0]
            last_offset = remaining[1].base_offset - 1 if len(remaining) > 1 else first_uncleanable_offset - 1
            if size + nxt.size > max_size or (nxt.size != 0 and last_offset - group[0].base_offset > 2**31 - 1):
                break
            group.append(remaining.pop(0))
            size += nxt.size
        groups.append(group)
    return groups
