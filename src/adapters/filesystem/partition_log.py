"""A partition's log directory: `<topic>-<partition>/` with segments and `partition.metadata`.

Implements the domain's `PartitionLog` port. Appends go to the active (last) segment, which rolls
when it would exceed `segment.bytes` or is older than `segment.ms`. `flush.messages` fsyncs after
that many messages (1 fsyncs every batch before the acknowledgement); otherwise the page cache
holds acknowledged data, which survives a process crash as in Kafka. The cleaner's segments and their
swap into the log are `segment_swap`.
"""

from __future__ import annotations

import bisect
import os
import uuid
from collections.abc import Callable, Iterator, Sequence

import attrs

from trafka.domain.batch import BatchHeader
from trafka.domain.compaction import CleanedSegment
from trafka.domain.control import AbortedTxn
from trafka.domain.producers import ProducerSnapshotEntry
from trafka.domain.retention import SegmentInfo

from . import segment_swap
from .fileio import LogDirHealth, fsync_dir
from .layout import kafka_uuid, parse_kafka_uuid
from .leader_epoch_checkpoint import read_leader_epochs, write_leader_epochs
from .producer_snapshot import delete_snapshot, latest_snapshot, remove_stray, write_snapshot
from .segment import Segment
from .txn_recovery import TransactionIndexRebuild, rebuild_transaction_indexes

PARTITION_METADATA = "partition.metadata"
MAX_RELATIVE_OFFSET = 2**31 - 1


@attrs.frozen
class LogConfig:
    segment_bytes: int = 1073741824
    segment_ms: int = 604800000
    index_interval_bytes: int = 4096
    flush_messages: int = 2**63 - 1
    flush_ms: int = 2**63 - 1


def write_partition_metadata(directory: str, topic_id: uuid.UUID) -> None:
    """`partition.metadata` as Kafka writes it (no trailing newline), atomically and durably."""
    path = os.path.join(directory, PARTITION_METADATA)
    with open(path + ".tmp", "w") as f:
        f.write(f"version: 0\ntopic_id: {kafka_uuid(topic_id)}")
        f.flush()
        os.fsync(f.fileno())
    os.replace(path + ".tmp", path)
    fsync_dir(directory)


def read_partition_metadata(directory: str) -> uuid.UUID | None:
    """The topic id recorded for a partition dir; None if the file is missing or unreadable."""
    try:
        with open(os.path.join(directory, PARTITION_METADATA)) as f:
            fields = dict(line.split(": ", 1) for line in f.read().splitlines() if ": " in line)
        return parse_kafka_uuid(fields["topic_id"])
    except (OSError, KeyError, ValueError):
        return None


class FilePartitionLog:
    def __init__(
        self,
        directory: str,
        config: LogConfig,
        checksum: Callable[[memoryview], int],
        clock_ms: Callable[[], int],
        log_start_offset: int = 0,
        on_log_start_moved: Callable[[], None] = lambda: None,
        health: LogDirHealth | None = None,
    ) -> None:
        self.directory = directory
        self._health = health if health is not None else LogDirHealth(os.path.dirname(directory))
        self.config = config
        self._checksum = checksum
        self._clock_ms = clock_ms
        self._segments: list[Segment] = []
        self._log_start_offset = log_start_offset
        self._on_log_start_moved = on_log_start_moved
        self._unflushed_messages = 0
        self._last_flush_ms = clock_ms()
        self.truncated_bytes = 0
        self._leader_epochs: list[tuple[int, int]] | None = None  # read from the checkpoint when first asked
        self.on_roll: Callable[[int], None] | None = None  # told the base offset of each new segment

    # -- opening -----------------------------------------------------------------------------------

    def open(self, recovery_point: int | None) -> None:
        """Open every segment; scan and repair those past `recovery_point` (None: all of them).

        A cleaning interrupted by a crash is finished or undone first (`complete_interrupted_swaps`);
        if a swap was completed, every segment is recovered."""
        if segment_swap.complete_interrupted_swaps(self.directory):
            recovery_point = None
        bases = sorted(
            int(name[:-4]) for name in os.listdir(self.directory) if name.endswith(".log") and name[:-4].isdigit()
        )
        for name in os.listdir(self.directory):
            if name.endswith((".index", ".timeindex", ".txnindex")) and int(name.split(".")[0]) not in bases:
                os.remove(os.path.join(self.directory, name))
        corrupt = False
        # After an unclean shutdown every segment is recovered: the .txnindex rebuild rides along the scan.
        txn_replay = TransactionIndexRebuild() if recovery_point is None else None
        for i, base in enumerate(bases):
            segment = Segment(self.directory, base, self.config.index_interval_bytes)
            if corrupt:  # everything after a corrupt segment is gone, as in Kafka's recovery
                segment.delete()
                continue
            next_base = bases[i + 1] if i + 1 < len(bases) else None
            recover = recovery_point is None or next_base is None or next_base > recovery_point
            if txn_replay is None:
                truncated = segment.load(recover, self._checksum)
            else:
                truncated = segment.load(recover, self._checksum, _replay_into(txn_replay, segment))
                segment.replace_aborted(txn_replay.segment_done())
            self.truncated_bytes += truncated
            if truncated and next_base is not None:
                corrupt = True
            self._segments.append(segment)
        if not self._segments:
            self._segments.append(Segment(self.directory, self._log_start_offset, self.config.index_interval_bytes))
        self._segments[-1].created_ms = self._clock_ms()
        if self._log_start_offset < self._segments[0].base_offset:
            self._log_start_offset = self._segments[0].base_offset
        remove_stray(self.directory, [s.base_offset for s in self._segments])
        for segment in self._segments:
            segment.drop_aborted_after(self.log_end_offset)
        if txn_replay is None:  # a clean shutdown: Kafka recovers the segments whose indexes are damaged
            rebuild_transaction_indexes(self._segments, [s.indexes_damaged for s in self._segments])

    # -- the PartitionLog port -----------------------------------------------------------------------

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self._segments[-1].next_offset

    def append(self, batches: bytes | bytearray, headers: Sequence[BatchHeader]) -> None:
        active = self._segments[-1]
        if headers[0].base_offset != active.next_offset:
            raise ValueError(f"append at {headers[0].base_offset} but the log ends at {active.next_offset}")
        last = headers[-1]
        if len(headers) == 1:  # the common case: one batch per produced partition
            positions = [(0, last)]
            messages = last.last_offset_delta + 1
            newest = last.max_timestamp
        else:
            positions = []
            pos = messages = 0
            for header in headers:
                positions.append((pos, header))
                pos += header.size
                messages += header.last_offset_delta + 1
            newest = max(header.max_timestamp for header in headers)
        config = self.config
        now_ms = self._clock_ms()
        # How long the active segment has been filling, as Kafka's LogSegment.timeWaitedForRoll counts it:
        # from its first batch's timestamp to `newest`, the newest max timestamp appended, or, when the
        # first batch has none, from the segment's creation to now by the broker's clock (inline: every
        # append asks it, ADR 135)
        if active.size > 0 and (
            active.size + len(batches) > config.segment_bytes
            or (newest - first if (first := active.rolling_timestamp()) >= 0 else now_ms - (active.created_ms or 0))
            > config.segment_ms
            # Kafka's canConvertToRelativeOffset
            or last.base_offset + last.last_offset_delta - active.base_offset > MAX_RELATIVE_OFFSET
        ):
            active = self._roll_segment()
        health = self._health
        if health.offline is not None:
            health.check_online()
        try:
            active.append(batches, positions)
            active.last_modified_ms = now_ms
            self._unflushed_messages += messages
            if self._unflushed_messages >= config.flush_messages:
                self.flush()
        except OSError as exc:
            health.write_failed(f"partition {os.path.basename(self.directory)}", exc)
            raise
        if health.full:
            health.write_succeeded()

    def roll(self) -> None:
        self._roll_segment()

    def _roll_segment(self) -> Segment:
        """The active segment after a roll (itself when it is empty)."""
        active = self._segments[-1]
        if active.size == 0:
            return active
        active.seal()
        active.flush()
        segment = Segment(self.directory, active.next_offset, self.config.index_interval_bytes)
        segment.created_ms = self._clock_ms()
        self._segments.append(segment)
        fsync_dir(self.directory)
        if self.on_roll is not None:
            self.on_roll(segment.base_offset)
        return segment

    def _segment_for(self, offset: int) -> int:
        return max(0, bisect.bisect_right([s.base_offset for s in self._segments], offset) - 1)

    def read(self, offset: int, max_bytes: int, min_one_batch: bool) -> bytes:
        for segment in self._segments[self._segment_for(offset) :]:
            found = segment.position_of(offset)
            if found is not None:
                return segment.read_from(found, max_bytes, min_one_batch)
        return b""

    def read_below(self, offset: int, max_bytes: int, min_one_batch: bool, stop_offset: int) -> tuple[bytes, int]:
        for segment in self._segments[self._segment_for(offset) :]:
            found = segment.position_of(offset)
            if found is not None:
                return segment.read_below(found, max_bytes, min_one_batch, stop_offset)
        return b"", -1

    def batches_from_timestamp(self, timestamp: int) -> Iterator[bytes]:
        started = False
        for segment in self._segments[self._segment_for(self._log_start_offset) :]:
            if not started and segment.max_timestamp < timestamp:
                continue
            start = 0 if started else segment.position_for_timestamp(timestamp)
            for _, batch in segment.batches(start):
                header = BatchHeader.parse(batch)
                if header.last_offset < self._log_start_offset:
                    continue
                if not started and header.max_timestamp < timestamp:
                    continue
                started = True
                yield batch

    def batch_headers(self, from_offset: int = 0) -> Iterator[BatchHeader]:
        start = max(from_offset, self._log_start_offset)
        first = self._segment_for(start)
        for segment in self._segments[first:]:
            position = 0
            if segment is self._segments[first]:
                found = segment.position_of(start)  # the offset index: no scan of what came before
                if found is None:
                    continue
                position = found
            for _, header in segment.headers(position):
                if header.last_offset >= start:
                    yield header

    def write_producer_snapshot(self, offset: int, entries: list[ProducerSnapshotEntry]) -> None:
        write_snapshot(self.directory, offset, entries, self._checksum)

    def latest_producer_snapshot(self) -> tuple[int, list[ProducerSnapshotEntry]] | None:
        return latest_snapshot(self.directory, self.log_end_offset, self._checksum)

    def record_aborted_transaction(self, aborted: AbortedTxn) -> None:
        self._segments[-1].record_aborted(aborted)

    def aborted_transactions(self, start_offset: int, end_offset: int) -> list[AbortedTxn]:
        return [
            a
            for segment in self._segments
            for a in segment.aborted
            if a.last_offset >= start_offset and a.first_offset <= end_offset
        ]

    def batch_with_max_timestamp(self) -> bytes | None:
        best = None
        for segment in self._segments:
            if segment.max_timestamp >= 0 and (best is None or segment.max_timestamp > best.max_timestamp):
                best = segment
        if best is None:
            return None
        found = best.position_of(best.offset_of_max_timestamp)
        if found is None:
            return None
        return best.read_from(found, 1, True)

    # -- maintenance -----------------------------------------------------------------------------------

    def flush(self) -> None:
        self._segments[-1].flush()
        self._unflushed_messages = 0
        self._last_flush_ms = self._clock_ms()

    def flush_if_due(self, now_ms: int) -> None:
        """flush.ms: fsync if unflushed messages are older than that."""
        if self._unflushed_messages and now_ms - self._last_flush_ms >= self.config.flush_ms:
            self.flush()

    @property
    def segments(self) -> list[Segment]:
        return list(self._segments)

    def segment_infos(self) -> list[SegmentInfo]:
        return [
            SegmentInfo(s.base_offset, s.next_offset, s.size, s.max_timestamp, s.last_modified_ms)
            for s in self._segments
        ]

    def reconfigure(self, config: LogConfig) -> None:
        self.config = config

    def delete_segments_before(self, base_offset: int) -> None:
        """Drop whole segments that end at or before `base_offset` (never the active one)."""
        before = self._log_start_offset
        while len(self._segments) > 1 and self._segments[1].base_offset <= base_offset:
            gone = self._segments.pop(0)
            gone.delete()
            delete_snapshot(self.directory, gone.base_offset)  # as Kafka's deleteProducerSnapshots
        self._log_start_offset = max(self._log_start_offset, self._segments[0].base_offset)
        if self._log_start_offset != before:
            self._on_log_start_moved()

    # -- the cleaner (the domain's CleanableLog; reads run on the cleaner's thread) ------------------

    def segment_batches(self, base_offset: int) -> Iterator[tuple[BatchHeader, bytes]]:
        segment = self._segments[self._segment_for(base_offset)]
        if segment.base_offset != base_offset:
            raise ValueError(f"no segment starts at {base_offset}")
        return segment_swap.read_segment_batches(segment.log_path)

    def first_batch_timestamps(self) -> list[int]:
        out = []
        for segment in self._segments:
            first = next(segment.headers(), None)
            out.append(first[1].max_timestamp if first is not None else -1)
        return out

    def cleaned_segment(self, base_offset: int) -> segment_swap.FileCleanedSegment:
        return segment_swap.FileCleanedSegment(self.directory, base_offset, self.config.index_interval_bytes)

    def replace_segments(
        self, cleaned: CleanedSegment, old_bases: list[int], deferred: list[Callable[[], None]] | None = None
    ) -> None:
        """Kafka's LocalLog.replaceSegments: the cleaned segment swapped in for the closed segments that
        start at `old_bases` (`segment_swap.replace_segments`)."""
        segment_swap.replace_segments(
            self.directory, self._segments, self._segment_for(old_bases[0]), cleaned, old_bases, deferred
        )

    def advance_log_start_offset(self, offset: int) -> None:
        """DeleteRecords; the new start is checkpointed before this returns, so it survives a crash."""
        before = self._log_start_offset
        self._log_start_offset = max(self._log_start_offset, min(offset, self.log_end_offset))
        self.delete_segments_before(self._log_start_offset)
        if self._log_start_offset != before:
            self._on_log_start_moved()

    def leader_epoch_entries(self) -> list[tuple[int, int]]:
        if self._leader_epochs is None:
            self._leader_epochs = read_leader_epochs(self.directory)
        return list(self._leader_epochs)

    def record_leader_epoch_entries(self, entries: Sequence[tuple[int, int]]) -> None:
        write_leader_epochs(self.directory, entries)
        self._leader_epochs = list(entries)

    def close(self) -> None:
        self._segments[-1].seal()  # as Kafka's LogSegment.close: a final time index entry
        for segment in self._segments:
            segment.close()

    def delete(self) -> None:
        for segment in self._segments:
            segment.delete()
        for name in os.listdir(self.directory):
            os.remove(os.path.join(self.directory, name))
        os.rmdir(self.directory)


def _replay_into(txn_replay: TransactionIndexRebuild, segment: Segment) -> Callable[[int, BatchHeader], None]:
    def replay(pos: int, header: BatchHeader) -> None:
        txn_replay.replay(header, lambda: segment.control_type_at(pos, header))

    return replay
