"""Partition logs held in memory: one bytes object per batch, indexed by last offset.

Reads binary-search the batch that contains the fetch offset and the last batch that fits (each
batch's end in bytes is kept as a running sum), and join whole batches; nothing looks inside a
batch, and no read walks the batches it returns (ADR 90). Segments are kept as boundaries in the
batch list, rolled at `segment.bytes`, so retention deletes the same whole segments the filesystem
store deletes. Each segment remembers when it was last appended to, by the clock the store is given
(what a file's modification time is to the filesystem store).
"""

from __future__ import annotations

import bisect
import itertools
import struct
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence

from trafka.domain.batch import BatchHeader
from trafka.domain.compaction import CleanedSegment
from trafka.domain.configs import TOPIC_CONFIG_DEFAULTS, segment_size
from trafka.domain.control import AbortedTxn
from trafka.domain.log_dirs import LogDirUsage
from trafka.domain.ports import PartitionLog
from trafka.domain.producers import ProducerSnapshotEntry
from trafka.domain.retention import SegmentInfo
from trafka.domain.topics import Topic, TopicPartition

_BASE_OFFSET = struct.Struct(">q")


def _segment_bytes(topic: Topic, defaults: Mapping[str, str]) -> int:
    configs = topic.configs
    return segment_size(
        configs, configs.get("segment.bytes", defaults.get("segment.bytes", TOPIC_CONFIG_DEFAULTS["segment.bytes"][0]))
    )


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class MemoryPartitionLog:
    def __init__(self, segment_bytes: int = 1 << 30, clock_ms: Callable[[], int] = _wall_clock_ms) -> None:
        self.segment_bytes = segment_bytes
        self._clock_ms = clock_ms
        self._batches: list[bytes] = []
        self._last_offsets: list[int] = []
        self._ends: list[int] = []  # each batch's end: the bytes of the batches up to it (a running sum)
        self._max_timestamps: list[int] = []
        self._segment_starts: list[int] = [0]  # index into _batches where each segment begins
        self._segment_bases: list[int] = [0]  # base offset of each segment
        self._segment_modified: list[int] = [clock_ms()]  # when each segment was last appended to
        self._active_size = 0
        self._log_start_offset = 0
        self._log_end_offset = 0
        self._aborted: list[AbortedTxn] = []
        self._snapshot: tuple[int, list[ProducerSnapshotEntry]] | None = None
        self._lock = threading.Lock()  # segment list surgery vs the cleaner thread's reads
        self._leader_epochs: list[tuple[int, int]] = []
        self.on_roll: Callable[[int], None] | None = None  # told the base offset of each new segment

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._log_end_offset

    def append(self, batches: bytes | bytearray, headers: Sequence[BatchHeader]) -> None:
        if headers and headers[0].base_offset != self._log_end_offset:
            raise ValueError(f"append at offset {headers[0].base_offset} but the log ends at {self._log_end_offset}")
        if self._active_size and self._active_size + len(batches) > self.segment_bytes:
            self.roll()
        self._active_size += len(batches)
        self._segment_modified[-1] = self._clock_ms()
        view = memoryview(batches)
        pos = 0
        written = self._ends[-1] if self._ends else 0
        for header in headers:
            self._batches.append(bytes(view[pos : pos + header.size]))
            written += header.size
            self._ends.append(written)
            self._last_offsets.append(header.last_offset)
            self._max_timestamps.append(header.max_timestamp)
            pos += header.size
            self._log_end_offset = header.next_offset

    def _first_batch_at(self, offset: int) -> int:
        return bisect.bisect_left(self._last_offsets, offset)

    def read(self, offset: int, max_bytes: int, min_one_batch: bool) -> bytes:
        """Whole batches from the one holding `offset`, within one segment (as Kafka reads)."""
        index = self._first_batch_at(offset)
        return b"".join(self._batches[index : self._fitting(index, self._segment_end(index), max_bytes, min_one_batch)])

    def read_below(self, offset: int, max_bytes: int, min_one_batch: bool, stop_offset: int) -> tuple[bytes, int]:
        index = self._first_batch_at(offset)
        end = self._segment_end(index)
        stop = bisect.bisect_left(self._last_offsets, stop_offset, index, end)  # the batch holding it, or after
        if stop < end and _BASE_OFFSET.unpack_from(self._batches[stop])[0] < stop_offset:
            stop += 1  # it starts below the stop offset: it is read, as a walk of the batches would
        fitting = self._fitting(index, stop, max_bytes, min_one_batch)
        if fitting == index:
            return b"", -1
        return b"".join(self._batches[index:fitting]), self._last_offsets[fitting - 1]

    def _segment_end(self, index: int) -> int:
        """The index past the last batch of the segment holding batch `index`."""
        following = bisect.bisect_right(self._segment_starts, index)
        return self._segment_starts[following] if following < len(self._segment_starts) else len(self._batches)

    def _fitting(self, index: int, end: int, max_bytes: int, min_one_batch: bool) -> int:
        """The index past the last of the batches from `index` (before `end`) whose bytes add up to at
        most `max_bytes` (at least one with `min_one_batch`): a bisect of the running sums."""
        if index >= end:
            return index
        ends = self._ends
        fitting = bisect.bisect_right(ends, ends[index] - len(self._batches[index]) + max_bytes, index, end)
        return index + 1 if fitting == index and min_one_batch else fitting

    def batches_from_timestamp(self, timestamp: int) -> Iterator[bytes]:
        for index in range(self._first_batch_at(self._log_start_offset), len(self._batches)):
            if self._max_timestamps[index] >= timestamp:
                yield from self._batches[index:]
                return

    def batch_with_max_timestamp(self) -> bytes | None:
        start = self._first_batch_at(self._log_start_offset)
        if start >= len(self._batches):
            return None
        best = max(range(start, len(self._batches)), key=lambda i: (self._max_timestamps[i], -i))
        return self._batches[best]

    def batch_headers(self, from_offset: int = 0) -> Iterator[BatchHeader]:
        for batch in self._batches[self._first_batch_at(max(from_offset, self._log_start_offset)) :]:
            yield BatchHeader.parse(batch)

    def write_producer_snapshot(self, offset: int, entries: list[ProducerSnapshotEntry]) -> None:
        self._snapshot = (offset, list(entries))

    def latest_producer_snapshot(self) -> tuple[int, list[ProducerSnapshotEntry]] | None:
        return self._snapshot

    def record_aborted_transaction(self, aborted: AbortedTxn) -> None:
        self._aborted.append(aborted)

    def aborted_transactions(self, start_offset: int, end_offset: int) -> list[AbortedTxn]:
        return [a for a in self._aborted if a.last_offset >= start_offset and a.first_offset <= end_offset]

    def roll(self) -> None:
        if len(self._batches) > self._segment_starts[-1]:
            self._segment_starts.append(len(self._batches))
            self._segment_bases.append(self._log_end_offset)
            self._segment_modified.append(self._clock_ms())
            self._active_size = 0
            if self.on_roll is not None:
                self.on_roll(self._log_end_offset)

    def segment_infos(self) -> list[SegmentInfo]:
        infos = []
        bounds = self._segment_starts + [len(self._batches)]
        for i, base in enumerate(self._segment_bases):
            start, end = bounds[i], bounds[i + 1]
            next_offset = self._segment_bases[i + 1] if i + 1 < len(self._segment_bases) else self._log_end_offset
            infos.append(
                SegmentInfo(
                    base,
                    next_offset,
                    sum(len(b) for b in self._batches[start:end]),
                    max(self._max_timestamps[start:end], default=-1),
                    self._segment_modified[i],
                )
            )
        return infos

    def delete_segments_before(self, base_offset: int) -> None:
        with self._lock:
            self._delete_segments_before(base_offset)

    def _delete_segments_before(self, base_offset: int) -> None:
        while len(self._segment_bases) > 1 and self._segment_bases[1] <= base_offset:
            cut = self._segment_starts[1]
            del self._batches[:cut], self._last_offsets[:cut], self._max_timestamps[:cut], self._ends[:cut]
            self._segment_starts = [s - cut for s in self._segment_starts[1:]]
            self._segment_bases.pop(0)
            self._segment_modified.pop(0)
        self._log_start_offset = max(self._log_start_offset, self._segment_bases[0])

    def advance_log_start_offset(self, offset: int) -> None:
        self._log_start_offset = max(self._log_start_offset, min(offset, self._log_end_offset))
        self.delete_segments_before(self._log_start_offset)

    def leader_epoch_entries(self) -> list[tuple[int, int]]:
        return list(self._leader_epochs)

    def record_leader_epoch_entries(self, entries: Sequence[tuple[int, int]]) -> None:
        self._leader_epochs = list(entries)

    # -- the cleaner's view (the domain's CleanableLog) ------------------------------------------------

    def _segment_bounds(self, base_offset: int) -> tuple[int, int]:
        i = self._segment_bases.index(base_offset)
        end = self._segment_starts[i + 1] if i + 1 < len(self._segment_starts) else len(self._batches)
        return self._segment_starts[i], end

    def segment_batches(self, base_offset: int) -> Iterator[tuple[BatchHeader, bytes]]:
        """Called on the cleaner's thread: the segment's batches are taken under the lock that
        retention's and the swap's list surgery hold, so the slice is one segment's."""
        with self._lock:
            start, end = self._segment_bounds(base_offset)
            batches = self._batches[start:end]
        for batch in batches:
            yield BatchHeader.parse(batch), batch

    def first_batch_timestamps(self) -> list[int]:
        """Each segment's first batch's max timestamp (-1 for an empty one): max.compaction.lag.ms."""
        bounds = self._segment_starts + [len(self._batches)]
        return [self._max_timestamps[bounds[i]] if bounds[i] < bounds[i + 1] else -1 for i in range(len(bounds) - 1)]

    def cleaned_segment(self, base_offset: int) -> MemoryCleanedSegment:
        return MemoryCleanedSegment(base_offset)

    def replace_segments(
        self, cleaned: CleanedSegment, old_bases: list[int], deferred: list[Callable[[], None]] | None = None
    ) -> None:
        """Swap the cleaned segment in for the consecutive segments starting at `old_bases` (they must
        still be there, none of them the active one)."""
        assert isinstance(cleaned, MemoryCleanedSegment)
        with self._lock:
            self._replace_segments(cleaned, old_bases)

    def _replace_segments(self, cleaned: MemoryCleanedSegment, old_bases: list[int]) -> None:
        first = self._segment_bases.index(old_bases[0])
        last = first + len(old_bases) - 1
        if self._segment_bases[first : last + 1] != old_bases or last == len(self._segment_bases) - 1:
            raise ValueError(f"segments {old_bases} are not the log's closed segments any more")
        start = self._segment_starts[first]
        end = self._segment_starts[last + 1]
        end_offset = self._segment_bases[last + 1]
        self._batches[start:end] = [batch for batch, _ in cleaned.batches]
        self._last_offsets[start:end] = [header.last_offset for _, header in cleaned.batches]
        self._max_timestamps[start:end] = [header.max_timestamp for _, header in cleaned.batches]
        self._ends = list(itertools.accumulate(len(batch) for batch in self._batches))
        shift = len(cleaned.batches) - (end - start)
        starts = self._segment_starts
        self._segment_starts = starts[:first] + [start] + [s + shift for s in starts[last + 1 :]]
        self._segment_bases[first : last + 1] = [old_bases[0]]
        self._segment_modified[first : last + 1] = [self._segment_modified[last]]  # Kafka's Cleaner keeps it
        self._aborted = sorted(
            [a for a in self._aborted if not old_bases[0] <= a.last_offset < end_offset] + cleaned.aborted,
            key=lambda a: a.last_offset,
        )


class MemoryCleanedSegment:
    """A segment the cleaner writes, swapped in by `MemoryPartitionLog.replace_segments`."""

    def __init__(self, base_offset: int) -> None:
        self.base_offset = base_offset
        self.batches: list[tuple[bytes, BatchHeader]] = []
        self.aborted: list[AbortedTxn] = []

    def append(self, batch: bytes, header: BatchHeader) -> None:
        self.batches.append((batch, header))

    def set_aborted(self, aborted: list[AbortedTxn]) -> None:
        self.aborted = list(aborted)

    def finish(self) -> None:
        """Nothing to make durable in memory."""

    def discard(self) -> None:
        self.batches = []


MEMORY_LOG_DIR = "memory"
"""The log dir's name in DescribeLogDirs: the memory store has no path."""


class MemoryLogStore:
    def __init__(
        self, topic_defaults: Mapping[str, str] | None = None, clock_ms: Callable[[], int] = _wall_clock_ms
    ) -> None:
        self._logs: dict[TopicPartition, MemoryPartitionLog] = {}
        self._clock_ms = clock_ms  # stamps each segment's last append
        self._topic_defaults = dict(topic_defaults or {})  # the broker's defaults for topic configs
        self._roll_observer: Callable[[TopicPartition, PartitionLog, int], None] | None = None

    def create(self, tp: TopicPartition, topic: Topic) -> MemoryPartitionLog:
        log = self._logs[tp] = MemoryPartitionLog(_segment_bytes(topic, self._topic_defaults), self._clock_ms)
        self._observe(tp, log)
        return log

    def observe_rolls(self, observer: Callable[[TopicPartition, PartitionLog, int], None]) -> None:
        self._roll_observer = observer
        for tp, log in self._logs.items():
            self._observe(tp, log)

    def _observe(self, tp: TopicPartition, log: MemoryPartitionLog) -> None:
        observer = self._roll_observer
        if observer is not None:
            log.on_roll = lambda base_offset: observer(tp, log, base_offset)

    def reconfigure(self, tp: TopicPartition, topic: Topic) -> None:
        if tp in self._logs:
            self._logs[tp].segment_bytes = _segment_bytes(topic, self._topic_defaults)

    def set_topic_defaults(self, defaults: Mapping[str, str]) -> None:
        self._topic_defaults = dict(defaults)

    def open(self, tp: TopicPartition, topic: Topic) -> MemoryPartitionLog:
        return self._logs.get(tp) or self.create(tp, topic)

    def get(self, tp: TopicPartition) -> MemoryPartitionLog | None:
        return self._logs.get(tp)

    def delete(self, tp: TopicPartition) -> None:
        self._logs.pop(tp, None)

    def log_dir(self) -> LogDirUsage:
        """No directory: a log dir named `memory`, on a volume of unknown size."""
        return LogDirUsage(MEMORY_LOG_DIR)
