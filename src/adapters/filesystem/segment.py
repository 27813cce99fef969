"""One log segment in Kafka's on-disk format: `<base>.log`, `<base>.index`, `<base>.timeindex`.

- `.log`: record batches back to back, exactly the stored bytes.
- `.index`: sparse offset index, 8-byte entries (offset - base as int32, file position as int32). As in
  Kafka's LogSegment, an entry is added when more than `index.interval.bytes` were appended since the
  last one; it maps the appended batch's last offset to the batch's start position.
- `.timeindex`: 12-byte entries (max timestamp so far as int64, its offset - base as int32), appended
  with the offset index entry when the max timestamp grew.
- `.txnindex`: aborted transactions whose marker is in this segment, 34-byte entries (version int16,
  producer id, first offset, last offset, last stable offset); only segments with one have the file.
  Recovery rebuilds it from the control records (txn_recovery.py).

This module opens, writes (appends, indexes, rolls back a failed append) and closes a segment; how it
is read is `segment_reader.SegmentReader`, which `Segment` extends. Nothing here decodes records.

The active segment also keeps its tail in memory (ADR 57): the last offset and position of every batch
appended since the last offset index entry (at most `TAIL_LIMIT`), so a consumer reading at the end of
the log finds its batch with a bisect instead of one `pread` per batch header since that entry.
"""

from __future__ import annotations

import os
import struct
from array import array
from collections.abc import Callable

from trafka.domain.batch import LOG_OVERHEAD, BatchHeader
from trafka.domain.control import AbortedTxn

from . import fileio
from .segment_reader import TAIL_LIMIT, SegmentReader

INDEX_ENTRY = struct.Struct(">ii")
TIME_ENTRY = struct.Struct(">qi")
TXN_ENTRY = struct.Struct(">hqqqq")  # version, producer id, first offset, last offset, last stable offset


def file_stem(base_offset: int) -> str:
    return f"{base_offset:020d}"


class Segment(SegmentReader):
    def __init__(self, directory: str, base_offset: int, index_interval_bytes: int = 4096, suffix: str = "") -> None:
        """`suffix` names a segment the cleaner writes (`.cleaned`) or is swapping in (`.swap`)."""
        self.directory = directory
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.suffix = suffix
        stem = os.path.join(directory, file_stem(base_offset))
        self.log_path = stem + ".log" + suffix
        self.index_path = stem + ".index" + suffix
        self.time_index_path = stem + ".timeindex" + suffix
        self.txn_index_path = stem + ".txnindex" + suffix
        self.aborted: list[AbortedTxn] = self._load_txn_index()
        self.indexes_damaged = False  # set by load(): an index was missing or failed its sanity check
        new_segment = not os.path.exists(self.log_path)
        self._log_fd = os.open(self.log_path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        stat = os.fstat(self._log_fd)
        self.size = stat.st_size
        # When the segment was last written: the file's modification time, then the broker clock at each
        # append (FilePartitionLog sets it). Retention falls back to it when no record has a timestamp.
        self.last_modified_ms = stat.st_mtime_ns // 1_000_000
        self.next_offset = base_offset
        self.max_timestamp = -1
        self.offset_of_max_timestamp = -1
        self.created_ms: int | None = None
        self._rolling_timestamp: int | None = None  # the first batch's max timestamp, read when first asked
        self._index: list[tuple[int, int]] = []  # (relative offset, position)
        self._time_index: list[tuple[int, int]] = []  # (timestamp, relative offset)
        self._bytes_since_index = 0
        # The tail: (last offset, position) of each batch from the last index entry's position on (from 0
        # without entries). Empty when not known (a sealed segment): reads then scan from the index.
        self._tail_offsets = array("q")
        self._tail_positions = array("q")
        self._index_fd: int | None = None
        self._time_index_fd: int | None = None
        self._time_entries_on_disk = 0
        if new_segment:  # Kafka creates both indexes with the segment; a missing one is rebuilt by load()
            for path in (self.index_path, self.time_index_path):
                open(path, "wb").close()

    # -- opening -----------------------------------------------------------------------------------

    def load(
        self,
        recover: bool,
        checksum: Callable[[memoryview], int],
        replay: Callable[[int, BatchHeader], None] | None = None,
    ) -> int:
        """Read the indexes, or rebuild them by scanning; return bytes truncated from a torn tail.

        With `recover`, every batch's header and CRC is checked and the log is cut at the first bad
        one. Without it, the indexes are used if they pass Kafka's sanity checks, else rebuilt. A scan
        hands each valid batch's position and header to `replay`.
        """
        # Kafka's TransactionIndex.sanityCheck: no entry may end before the segment starts
        intact = self._load_indexes() and all(a.last_offset >= self.base_offset for a in self.aborted)
        self.indexes_damaged = not intact
        if not recover and intact:
            self._find_end_from_last_index_entry()
            return 0
        return self._rebuild(checksum if recover else None, replay)

    def _load_indexes(self) -> bool:
        try:
            with open(self.index_path, "rb") as f:
                raw = f.read()
            with open(self.time_index_path, "rb") as f:
                raw_time = f.read()
        except FileNotFoundError:
            return False
        if len(raw) % INDEX_ENTRY.size or len(raw_time) % TIME_ENTRY.size:
            return False
        index = [INDEX_ENTRY.unpack_from(raw, i) for i in range(0, len(raw), INDEX_ENTRY.size)]
        times = [TIME_ENTRY.unpack_from(raw_time, i) for i in range(0, len(raw_time), TIME_ENTRY.size)]
        index = [e for e in index if e != (0, 0)] if len(index) > 1 else index  # Kafka preallocates zeros
        times = [t for t in times if t != (0, 0)]
        if any(b[0] <= a[0] or b[1] <= a[1] for a, b in zip(index, index[1:])):
            return False
        if any(pos >= self.size or pos < 0 or rel < 0 for rel, pos in index):
            return False
        if any(b[0] < a[0] for a, b in zip(times, times[1:])):
            return False
        self._index, self._time_index = index, times
        self._time_entries_on_disk = len(raw_time) // TIME_ENTRY.size
        if len(times) != self._time_entries_on_disk or len(index) * INDEX_ENTRY.size != len(raw):
            self._write_indexes()  # drop Kafka's preallocated zero entries
        return True

    def _find_end_from_last_index_entry(self) -> None:
        """Scan from the last indexed position to the end to learn next offset and max timestamp."""
        start = self._index[-1][1] if self._index else 0
        if self._time_index:
            self.max_timestamp, rel = self._time_index[-1]
            self.offset_of_max_timestamp = self.base_offset + rel
        last_index_pos = start
        self._clear_tail()
        for pos, header in self._scan(start):
            self._note_tail(pos, header.last_offset)
            self.next_offset = header.next_offset
            if header.max_timestamp > self.max_timestamp:
                self.max_timestamp = header.max_timestamp
                self.offset_of_max_timestamp = header.last_offset
            last_index_pos = pos
        self._bytes_since_index = self.size - last_index_pos if self._index else self.size

    def _rebuild(
        self, checksum: Callable[[memoryview], int] | None, replay: Callable[[int, BatchHeader], None] | None
    ) -> int:
        self._index, self._time_index = [], []
        self._bytes_since_index = 0
        self._rolling_timestamp = None
        self._clear_tail()
        self.next_offset, self.max_timestamp, self.offset_of_max_timestamp = self.base_offset, -1, -1
        valid_end = 0
        for pos, header in self._scan(0, checksum):
            self._track(pos, header)
            valid_end = pos + header.size
            if replay is not None:
                replay(pos, header)
        truncated = self.size - valid_end
        if truncated:
            os.ftruncate(self._log_fd, valid_end)
            self.size = valid_end
        self._write_indexes()
        return truncated

    def _track(self, pos: int, header: BatchHeader) -> None:
        """Index bookkeeping for a batch at `pos`, as Kafka's LogSegment.append does it."""
        if header.max_timestamp > self.max_timestamp:
            self.max_timestamp = header.max_timestamp
            self.offset_of_max_timestamp = header.last_offset
        if self._bytes_since_index > self.index_interval_bytes:
            self._index.append((header.last_offset - self.base_offset, pos))
            if self.max_timestamp > (self._time_index[-1][0] if self._time_index else -1):  # TimeIndex.maybeAppend
                self._time_index.append((self.max_timestamp, self.offset_of_max_timestamp - self.base_offset))
            self._bytes_since_index = 0
            self._clear_tail()  # the tail starts again at this batch, which the new entry points to
            self._append_index_entry()
        self._bytes_since_index += header.size
        self._note_tail(pos, header.last_offset)
        self.next_offset = header.next_offset

    def _note_tail(self, pos: int, last_offset: int) -> None:
        if len(self._tail_offsets) < TAIL_LIMIT:
            self._tail_offsets.append(last_offset)
            self._tail_positions.append(pos)

    def _clear_tail(self) -> None:
        del self._tail_offsets[:]
        del self._tail_positions[:]

    def _load_txn_index(self) -> list[AbortedTxn]:
        try:
            with open(self.txn_index_path, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            return []
        entries = [
            TXN_ENTRY.unpack_from(raw, i) for i in range(0, len(raw) - len(raw) % TXN_ENTRY.size, TXN_ENTRY.size)
        ]
        return [AbortedTxn(*entry[1:]) for entry in entries if entry[0] == 0]

    def record_aborted(self, aborted: AbortedTxn) -> None:
        self.aborted.append(aborted)
        with open(self.txn_index_path, "ab") as f:
            f.write(
                TXN_ENTRY.pack(
                    0, aborted.producer_id, aborted.first_offset, aborted.last_offset, aborted.last_stable_offset
                )
            )
            f.flush()
            os.fsync(f.fileno())  # aborts are rare; read_committed depends on this entry

    def replace_aborted(self, aborted: list[AbortedTxn]) -> None:
        """The rebuilt transaction index: written (fsynced) if it has entries or the file exists."""
        self.aborted = list(aborted)
        if not aborted and not os.path.exists(self.txn_index_path):
            return
        with open(self.txn_index_path, "wb") as f:
            f.write(
                b"".join(
                    TXN_ENTRY.pack(0, a.producer_id, a.first_offset, a.last_offset, a.last_stable_offset)
                    for a in aborted
                )
            )
            f.flush()
            os.fsync(f.fileno())

    def drop_aborted_after(self, end_offset: int) -> None:
        """After recovery cut the log, forget aborted transactions whose marker is gone."""
        kept = [a for a in self.aborted if a.last_offset < end_offset]
        if len(kept) != len(self.aborted):
            self.aborted = kept
            with open(self.txn_index_path, "wb") as f:
                f.write(
                    b"".join(
                        TXN_ENTRY.pack(0, a.producer_id, a.first_offset, a.last_offset, a.last_stable_offset)
                        for a in kept
                    )
                )

    # -- writing -----------------------------------------------------------------------------------

    def append(self, data: bytes | bytearray | memoryview, positions: list[tuple[int, BatchHeader]]) -> None:
        """Append batches (already offset-patched); `positions` are (offset in data, header).

        All or nothing: if the log write or an index entry's write fails (disk full, I/O error), the
        log and indexes are cut back to where they were and the segment's state is restored."""
        start = self.size
        size = len(data)
        files = fileio.io()
        try:
            written = files.write(self._log_fd, data)
            while written < size:
                written += files.write(self._log_fd, memoryview(data)[written:])
        except OSError:
            self._roll_back(start, self._state())  # nothing was tracked yet
            raise
        self.size = start + size
        last_pos, last = positions[-1]
        if self._bytes_since_index + last_pos <= self.index_interval_bytes:
            # `_track` of each batch when no index entry is due before any of them (bookkeeping in memory
            # only), on the headers' fields; the batches are contiguous from position 0
            tail_offsets, tail_positions = self._tail_offsets, self._tail_positions
            for pos, header in positions:
                last_offset = header.base_offset + header.last_offset_delta
                if header.max_timestamp > self.max_timestamp:
                    self.max_timestamp = header.max_timestamp
                    self.offset_of_max_timestamp = last_offset
                if len(tail_offsets) < TAIL_LIMIT:  # _note_tail, inline
                    tail_offsets.append(last_offset)
                    tail_positions.append(start + pos)
            self._bytes_since_index += last_pos + LOG_OVERHEAD + last.batch_length
            self.next_offset = last_offset + 1
            return
        saved = self._state()
        try:
            for pos, header in positions:
                self._track(start + pos, header)
        except OSError:
            self._roll_back(start, saved)
            raise

    def _state(self) -> tuple:
        return (
            self.max_timestamp,
            self.offset_of_max_timestamp,
            len(self._index),
            len(self._time_index),
            self._bytes_since_index,
            self.next_offset,
            self._time_entries_on_disk,
        )

    def _roll_back(self, size: int, saved: tuple) -> None:
        files = fileio.io()
        (
            self.max_timestamp,
            self.offset_of_max_timestamp,
            index_entries,
            time_entries,
            self._bytes_since_index,
            self.next_offset,
            self._time_entries_on_disk,
        ) = saved
        del self._index[index_entries:]
        del self._time_index[time_entries:]
        self.size = size
        if size == 0:
            self._rolling_timestamp = None
        files.ftruncate(self._log_fd, size)  # nothing half-written stays behind
        if self._index_fd is not None:
            files.ftruncate(self._index_fd, index_entries * INDEX_ENTRY.size)
        if self._time_index_fd is not None:
            files.ftruncate(self._time_index_fd, self._time_entries_on_disk * TIME_ENTRY.size)
        # the tail as it was: the batches from the last index entry's position, read back (a rare path)
        self._clear_tail()
        for pos, header in self._scan(self._index[-1][1] if self._index else 0):
            self._note_tail(pos, header.last_offset)

    def _append_index_entry(self) -> None:
        if self._index_fd is None:
            self._index_fd = os.open(self.index_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            self._time_index_fd = os.open(self.time_index_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        files = fileio.io()
        files.write(self._index_fd, INDEX_ENTRY.pack(*self._index[-1]))
        if len(self._time_index) > self._time_entries_on_disk:
            assert self._time_index_fd is not None  # opened with the offset index, above
            files.write(self._time_index_fd, TIME_ENTRY.pack(*self._time_index[-1]))
            self._time_entries_on_disk = len(self._time_index)

    def _write_indexes(self) -> None:
        self._close_index_fds()
        with open(self.index_path, "wb") as f:
            f.write(b"".join(INDEX_ENTRY.pack(*e) for e in self._index))
        with open(self.time_index_path, "wb") as f:
            f.write(b"".join(TIME_ENTRY.pack(*e) for e in self._time_index))
        self._time_entries_on_disk = len(self._time_index)

    def seal(self) -> None:
        """The segment stops being active: record its final max timestamp in the time index (as Kafka).
        Its tail is dropped: only active segments hold one in memory."""
        self._clear_tail()
        if self.max_timestamp >= 0 and (not self._time_index or self.max_timestamp > self._time_index[-1][0]):
            self._time_index.append((self.max_timestamp, self.offset_of_max_timestamp - self.base_offset))
            self._write_indexes()

    def flush(self) -> None:
        files = fileio.io()
        files.fsync(self._log_fd)
        for fd in (self._index_fd, self._time_index_fd):
            if fd is not None:
                files.fsync(fd)

    def rolling_timestamp(self) -> int:
        """The first batch's max timestamp, from which `segment.ms` counts (Kafka's LogSegment
        rollingBasedTimestamp); -1 for an empty segment or a first batch without a timestamp."""
        if self._rolling_timestamp is None:
            if self.size == 0:
                return -1
            first = next(self._scan(0), None)
            self._rolling_timestamp = -1 if first is None else first[1].max_timestamp
        return self._rolling_timestamp

    # -- lifecycle ---------------------------------------------------------------------------------

    def _close_index_fds(self) -> None:
        for fd in (self._index_fd, self._time_index_fd):
            if fd is not None:
                os.close(fd)
        self._index_fd = self._time_index_fd = None

    def set_last_modified(self, ms: int) -> None:
        """Kafka's LogSegment.setLastModified: the log file's modification time, which retention reads
        for a segment whose records have no timestamp (after a restart too)."""
        os.utime(self.log_path, ns=(ms * 1_000_000, ms * 1_000_000))
        self.last_modified_ms = ms

    def change_suffix(self, suffix: str) -> None:
        """Rename the segment's files (Kafka's LogSegment.changeFileSuffixes): the log first, then
        the indexes; open descriptors stay valid."""
        for name in ("log_path", "index_path", "time_index_path", "txn_index_path"):
            old = getattr(self, name)
            new = old[: len(old) - len(self.suffix)] + suffix
            if os.path.exists(old):
                os.replace(old, new)
            setattr(self, name, new)
        self.suffix = suffix

    def close(self) -> None:
        self._close_index_fds()
        os.close(self._log_fd)

    def delete(self) -> None:
        self.close()
        for path in (self.log_path, self.index_path, self.time_index_path, self.txn_index_path):
            try:
                os.remove(path)
            except FileNotFoundError:
                pass
