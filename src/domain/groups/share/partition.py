"""One share-partition (KIP-932): which records of a topic partition a share group has delivered, to
whom, how often, and which it is done with (Kafka's SharePartition, without its I/O).

The share-partition start offset (SPSO) is the first offset the group is not done with; every offset
below it was acknowledged or archived. The in-flight records run from the SPSO to the end offset
(SPEO, exclusive): each is AVAILABLE (released, to be delivered again), ACQUIRED by one member until
its lock deadline, ACKNOWLEDGED or ARCHIVED. Offsets at or past the end offset were never delivered.

State is kept per run of consecutive offsets that share it (state, delivery count, holder, lock
deadline), not per record: a fetch of 500 records acquires one run, an acknowledgement of them
turns it into one ACKNOWLEDGED run, and the start offset then jumps past it. A run is split only where
an acknowledgement, a release or an expiry covers part of it, and merged back with equal neighbours.

Transitions (all in `_apply`, the one table):

    AVAILABLE   --acquire-->                  ACQUIRED (delivery count + 1, lock until now + lock ms)
    ACQUIRED    --ACCEPT-->                   ACKNOWLEDGED
    ACQUIRED    --REJECT / GAP-->             ARCHIVED
    ACQUIRED    --RELEASE / lock expiry / member gone-->
                                              AVAILABLE, or ARCHIVED once the delivery count reached
                                              `group.share.delivery.count.limit`
    ACQUIRED    --RENEW-->                    ACQUIRED (lock until now + lock ms)

Acknowledging an offset that the member does not hold is INVALID_RECORD_STATE, and nothing of that
acknowledgement is applied (Kafka's rollback). Time is an argument (`now`, milliseconds).
"""

from __future__ import annotations

import bisect
import enum
from collections.abc import Iterator, Sequence

import attrs

from ...errors import ErrorCode


class RecordState(enum.IntEnum):
    """Kafka's RecordState ids (also the delivery states of the share-group state records)."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AckType(enum.IntEnum):
    """Acknowledge types of ShareFetch and ShareAcknowledge (v2 adds RENEW, KIP-1222)."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


_ACK_TYPES = frozenset(int(t) for t in AckType)


@attrs.frozen
class ShareSettings:
    """Kafka's `group.share.*` record configs."""

    record_lock_duration_ms: int = 30_000
    delivery_count_limit: int = 5
    partition_max_record_locks: int = 2_000
    # the bounds of a group's own share.record.lock.duration.ms (Kafka's GroupConfig.validateValues)
    min_record_lock_duration_ms: int = 15_000
    max_record_lock_duration_ms: int = 60_000


@attrs.define
class Run:
    """Offsets `first`..`last` (inclusive) in one state."""

    first: int
    last: int
    state: RecordState
    delivery_count: int = 0
    member: str | None = None
    deadline: int | None = None  # lock deadline while ACQUIRED

    def same_as(self, other: Run) -> bool:
        return (self.state, self.delivery_count, self.member, self.deadline) == (
            other.state,
            other.delivery_count,
            other.member,
            other.deadline,
        )


@attrs.frozen
class Acquired:
    """A range handed to a member in one fetch (ShareFetch's AcquiredRecords)."""

    first: int
    last: int
    delivery_count: int


@attrs.frozen
class Archived:
    """A range archived without being accepted: for the dead-letter topic and the metrics."""

    first: int
    last: int
    delivery_count: int
    reason: str  # "reject", "gap" (a record the client never saw) or "limit" (the delivery count limit)


INITIAL_READ_BYTES_PER_RECORD = 1024


class SharePartition:
    def __init__(self, start_offset: int, settings: ShareSettings) -> None:
        self.settings = settings
        self.start_offset = start_offset
        self.end_offset = start_offset  # exclusive: offsets from here were never delivered
        self.runs: list[Run] = []  # sorted, contiguous from start_offset to end_offset
        self.archived_total = 0  # records archived without acceptance, since this partition was loaded
        self.acknowledged_total = 0
        # what a fetch reads per record it may acquire: twice the stored bytes per record last seen
        self.read_bytes_per_record = INITIAL_READ_BYTES_PER_RECORD
        self.archived_log: list[Archived] = []  # drained by `take_archived`

    # -- reading -----------------------------------------------------------------------------------

    def state_of(self, offset: int) -> Run | None:
        """The run holding `offset`, None below the start or at/after the end offset."""
        if not self.start_offset <= offset < self.end_offset:
            return None
        i = bisect.bisect_right(self._firsts(), offset) - 1
        return self.runs[i]

    def _firsts(self) -> list[int]:
        return [r.first for r in self.runs]

    def acquired_count(self) -> int:
        return sum(r.last - r.first + 1 for r in self.runs if r.state is RecordState.ACQUIRED)

    def in_flight_count(self) -> int:
        return self.end_offset - self.start_offset

    def held_by(self, member: str) -> Iterator[Run]:
        return (r for r in self.runs if r.state is RecordState.ACQUIRED and r.member == member)

    def first_acquirable(self) -> int | None:
        """The lowest offset a fetch could acquire: a released record, else the end offset if there is
        room for more records in flight."""
        for run in self.runs:
            if run.state is RecordState.AVAILABLE:
                return run.first
        if self.in_flight_count() >= self.settings.partition_max_record_locks:
            return None
        return self.end_offset

    def next_deadline(self) -> int | None:
        return min((r.deadline for r in self.runs if r.deadline is not None), default=None)

    # -- acquisition -------------------------------------------------------------------------------

    def acquire(
        self, member: str, fetch_end: int, max_records: int, now: int, log_start: int | None = None
    ) -> list[Acquired]:
        """Acquire up to `max_records` records for `member`: released records first (in offset order),
        then records never delivered, all below `fetch_end` (the high watermark, the last stable
        offset under read_committed, or the end of the bytes read), within
        `group.share.partition.max.record.locks` in flight."""
        if log_start is not None and log_start > self.start_offset:
            self.move_start(log_start)
        if max_records <= 0:
            return []
        deadline = now + self.settings.record_lock_duration_ms
        result: list[Acquired] = []
        remaining = max_records
        i = 0
        while i < len(self.runs) and remaining > 0 and self.runs[i].first < fetch_end:
            run = self.runs[i]
            if run.state is RecordState.AVAILABLE:
                if run.last >= fetch_end:
                    self._split(i, fetch_end)
                    run = self.runs[i]
                if run.last - run.first + 1 > remaining:
                    self._split(i, run.first + remaining)
                    run = self.runs[i]
                run.state = RecordState.ACQUIRED
                run.delivery_count += 1
                run.member = member
                run.deadline = deadline
                result.append(Acquired(run.first, run.last, run.delivery_count))
                remaining -= run.last - run.first + 1
            i += 1
        room = self.settings.partition_max_record_locks - self.in_flight_count()
        new = min(remaining, fetch_end - self.end_offset, room)
        if new > 0:
            run = Run(self.end_offset, self.end_offset + new - 1, RecordState.ACQUIRED, 1, member, deadline)
            self.runs.append(run)
            self.end_offset += new
            result.append(Acquired(run.first, run.last, 1))
        self._merge()
        return coalesce(result)

    # -- acknowledgement ---------------------------------------------------------------------------

    def acknowledge(self, member: str, batches: Sequence[tuple[int, int, Sequence[int]]], now: int) -> ErrorCode:
        """Apply acknowledgement batches (first, last, types: one type for the whole batch or one per
        offset). All or nothing: INVALID_REQUEST for a malformed batch, or batches out of order or
        overlapping (Kafka's validateAcknowledgementBatches); INVALID_RECORD_STATE if any offset is not
        held by `member`. The cheap checks come first: a batch's shape and the member's ownership of
        its range (a few bisects), before anything is done per offset (issue 42)."""
        after = -1
        for first, last, types in batches:
            if first > last or first <= after or not types or (len(types) != 1 and len(types) != last - first + 1):
                return ErrorCode.INVALID_REQUEST
            after = last
        for first, last, _ in batches:
            if not self._held(member, first, last):
                return ErrorCode.INVALID_RECORD_STATE
        plan: list[tuple[int, int, AckType]] = []
        for first, last, types in batches:
            if not _ACK_TYPES.issuperset(types):
                return ErrorCode.INVALID_REQUEST
            kinds = [AckType(types[0])] if len(types) == 1 else [AckType(t) for t in types]
            if len(kinds) == 1:
                plan.append((first, last, kinds[0]))
            else:
                plan += _ranges_of(first, kinds)
        for first, last, kind in plan:
            self._apply(first, last, kind, now)
        self._merge()
        self._advance()
        return ErrorCode.NONE

    def _held(self, member: str, first: int, last: int) -> bool:
        if first < self.start_offset or last >= self.end_offset:
            return False
        i = bisect.bisect_right(self._firsts(), first) - 1
        while i < len(self.runs) and self.runs[i].first <= last:
            run = self.runs[i]
            if run.state is not RecordState.ACQUIRED or run.member != member:
                return False
            i += 1
        return True

    def _apply(self, first: int, last: int, kind: AckType, now: int) -> None:
        for run in self._isolate(first, last):
            if kind is AckType.ACCEPT:
                self._set(run, RecordState.ACKNOWLEDGED)
                self.acknowledged_total += run.last - run.first + 1
            elif kind in (AckType.REJECT, AckType.GAP):
                self._archive(run, "reject" if kind is AckType.REJECT else "gap")
            elif kind is AckType.RELEASE:
                self._release(run)
            else:  # RENEW
                run.deadline = now + self.settings.record_lock_duration_ms

    @staticmethod
    def _set(run: Run, state: RecordState) -> None:
        run.state = state
        run.member = None
        run.deadline = None

    def _archive(self, run: Run, reason: str) -> None:
        self._set(run, RecordState.ARCHIVED)
        self.archived_total += run.last - run.first + 1
        self.archived_log.append(Archived(run.first, run.last, run.delivery_count, reason))

    def _release(self, run: Run) -> None:
        if run.delivery_count >= self.settings.delivery_count_limit:
            self._archive(run, "limit")
        else:
            self._set(run, RecordState.AVAILABLE)

    # -- releases ----------------------------------------------------------------------------------

    def expire(self, now: int) -> int:
        """Release every record whose lock expired; the number released."""
        released = 0
        for run in self.runs:
            if run.state is RecordState.ACQUIRED and run.deadline is not None and run.deadline <= now:
                released += run.last - run.first + 1
                self._release(run)
        if released:
            self._merge()
            self._advance()
        return released

    def release_member(self, member: str) -> int:
        """Release what `member` holds (it left, was fenced, or closed its share session)."""
        released = 0
        for run in self.runs:
            if run.state is RecordState.ACQUIRED and run.member == member:
                released += run.last - run.first + 1
                self._release(run)
        if released:
            self._merge()
            self._advance()
        return released

    def take_archived(self) -> list[Archived]:
        taken, self.archived_log = self.archived_log, []
        return taken

    # -- the start offset --------------------------------------------------------------------------

    def move_start(self, offset: int) -> None:
        """Move the start offset to `offset` (the log start moved past it, or AlterShareGroupOffsets):
        what lies below is forgotten; moving it back resets the in-flight records."""
        if offset <= self.start_offset:
            self.start_offset = self.end_offset = offset
            self.runs = []
            return
        if offset >= self.end_offset:
            self.start_offset = self.end_offset = offset
            self.runs = []
            return
        self._split_at(offset)
        self.runs = [r for r in self.runs if r.first >= offset]
        self.start_offset = offset

    def _advance(self) -> None:
        """The start offset moves past the acknowledged and archived records at the front."""
        done = 0
        for run in self.runs:
            if run.state not in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED):
                break
            done += 1
        if done:
            self.start_offset = self.runs[done - 1].last + 1
            del self.runs[:done]

    # -- runs --------------------------------------------------------------------------------------

    def _split(self, i: int, at: int) -> None:
        """Split run i so that a new run starts at `at` (first < at <= last)."""
        run = self.runs[i]
        tail = attrs.evolve(run, first=at)
        run.last = at - 1
        self.runs.insert(i + 1, tail)

    def _split_at(self, offset: int) -> None:
        if not self.start_offset < offset < self.end_offset:
            return
        i = bisect.bisect_right(self._firsts(), offset) - 1
        if self.runs[i].first != offset:
            self._split(i, offset)

    def _isolate(self, first: int, last: int) -> list[Run]:
        """The runs covering exactly first..last, split where needed."""
        self._split_at(first)
        self._split_at(last + 1)
        lo = bisect.bisect_left(self._firsts(), first)
        hi = bisect.bisect_right(self._firsts(), last)
        return self.runs[lo:hi]

    def _merge(self) -> None:
        merged: list[Run] = []
        for run in self.runs:
            if merged and merged[-1].same_as(run) and merged[-1].last + 1 == run.first:
                merged[-1].last = run.last
            else:
                merged.append(run)
        self.runs = merged

    # -- durability --------------------------------------------------------------------------------

    def state_batches(self) -> list[tuple[int, int, int, int]]:
        """(first, last, delivery state, delivery count) of every in-flight run, as Kafka's persister
        writes them: an acquired record is stored as AVAILABLE (its lock does not survive)."""
        return [
            (
                r.first,
                r.last,
                int(RecordState.AVAILABLE if r.state is RecordState.ACQUIRED else r.state),
                r.delivery_count,
            )
            for r in self.runs
        ]

    @classmethod
    def restore(
        cls, start_offset: int, batches: Sequence[tuple[int, int, int, int]], settings: ShareSettings
    ) -> SharePartition:
        """A share-partition as persisted: batches below the start offset are dropped, gaps between
        batches are AVAILABLE records never delivered, acquisitions are AVAILABLE again."""
        partition = cls(start_offset, settings)
        offset = start_offset
        for first, last, state, count in sorted(batches):
            first = max(first, offset)
            if last < first:
                continue
            if first > offset:
                partition.runs.append(Run(offset, first - 1, RecordState.AVAILABLE))
            kind = RecordState(state)
            if kind is RecordState.ACQUIRED:
                kind = RecordState.AVAILABLE
            partition.runs.append(Run(first, last, kind, count))
            offset = last + 1
        partition.end_offset = offset
        partition._merge()
        partition._advance()
        return partition


def _ranges_of(first: int, kinds: Sequence[AckType]) -> list[tuple[int, int, AckType]]:
    ranges: list[tuple[int, int, AckType]] = []
    for i, kind in enumerate(kinds):
        offset = first + i
        if ranges and ranges[-1][2] is kind:
            ranges[-1] = (ranges[-1][0], offset, kind)
        else:
            ranges.append((offset, offset, kind))
    return ranges


def coalesce(acquired: list[Acquired]) -> list[Acquired]:
    """Adjacent acquired ranges with the same delivery count as one."""
    result: list[Acquired] = []
    for a in acquired:
        if result and result[-1].last + 1 == a.first and result[-1].delivery_count == a.delivery_count:
            result[-1] = Acquired(result[-1].first, a.last, a.delivery_count)
        else:
            result.append(a)
    return result
