"""Which whole segments retention deletes, by Kafka's rules (LogManager / UnifiedLog.deleteOldSegments).

Time: from the oldest segment on, every segment whose largest timestamp is older than
`now - retention.ms`. A segment's largest timestamp is its largest record timestamp or, when none of
its records has one (producers that send -1, as librdkafka's `produce(..., timestamp=-1)`), the time
it was last written (Kafka's LogSegment.largestTimestamp falls back to the file's last-modified
time), so such records live `retention.ms` after they were written; when that reaches the active (last) segment, Kafka rolls it first so it can go
too, and an idle topic empties (`active_segment_expired`). Size: from the oldest on, segments while
the log stays at or above `retention.bytes` without them. -1 disables either rule.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs


@attrs.frozen
class SegmentInfo:
    """A segment as retention and the cleaner see it. `max_timestamp` is the largest record
    timestamp (-1: no record has one); `last_modified_ms` is when the segment was last written, which
    the store knows (the file's modification time, or the broker clock at its last append)."""

    base_offset: int
    next_offset: int
    size: int
    max_timestamp: int
    last_modified_ms: int

    @property
    def largest_timestamp(self) -> int:
        """Kafka's LogSegment.largestTimestamp: the largest record timestamp, else the last write."""
        return self.max_timestamp if self.max_timestamp >= 0 else self.last_modified_ms


def active_segment_expired(segments: Sequence[SegmentInfo], retention_ms: int, now_ms: int) -> bool:
    """Every segment, the active one included, is past retention.ms: roll, so all can be deleted."""
    return (
        retention_ms >= 0
        and bool(segments)
        and segments[-1].size > 0
        and all(s.largest_timestamp < now_ms - retention_ms for s in segments)
    )


def retention_cut(segments: Sequence[SegmentInfo], retention_ms: int, retention_bytes: int, now_ms: int) -> int | None:
    """The base offset of the first segment to keep, or None when nothing is to be deleted."""
    closed = list(segments[:-1])
    doomed = 0
    if retention_ms >= 0:
        while doomed < len(closed) and closed[doomed].largest_timestamp < now_ms - retention_ms:
            doomed += 1
    if retention_bytes >= 0:
        excess = sum(s.size for s in segments) - retention_bytes
        by_size = 0
        while by_size < len(closed) and excess - closed[by_size].size >= 0:
            excess -= closed[by_size].size
            by_size += 1
        doomed = max(doomed, by_size)
    if doomed == 0:
        return None
    return segments[doomed].base_offset
