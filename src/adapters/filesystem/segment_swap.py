"""The cleaner's side of a partition's segments: the segment it writes (`<base>.log.cleaned`), the
swap that puts it in place of the segments it cleaned (Kafka's LocalLog.replaceSegments), the
completion of a swap a crash interrupted (at the next start), and the reading of a closed segment's
batches on the cleaner's own descriptor.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from trafka.domain.batch import HEADER_SIZE, MIN_BATCH_LENGTH, BatchHeader
from trafka.domain.compaction import CleanedSegment
from trafka.domain.control import AbortedTxn

from .fileio import fsync_dir
from .producer_snapshot import delete_snapshot
from .segment import Segment

CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
DELETED_SUFFIX = ".deleted"


def swap_step(step: str) -> None:
    """A point of the swap protocol; crash-injection tests replace this to stop there."""


class FileCleanedSegment:
    """A segment the cleaner writes: `<base>.log.cleaned` with its indexes, built by the same append
    as any segment's; `finish` seals and fsyncs it (on the cleaner's thread)."""

    def __init__(self, directory: str, base_offset: int, index_interval_bytes: int) -> None:
        stem = os.path.join(directory, f"{base_offset:020d}")
        for ext in (".log", ".index", ".timeindex", ".txnindex"):  # a leftover of an aborted cleaning
            if os.path.exists(stem + ext + CLEANED_SUFFIX):
                os.remove(stem + ext + CLEANED_SUFFIX)
        self.segment = Segment(directory, base_offset, index_interval_bytes, CLEANED_SUFFIX)
        self._finished = False

    @classmethod
    def reopen(
        cls, directory: str, base_offset: int, index_interval_bytes: int, checksum: Callable[[memoryview], int]
    ) -> FileCleanedSegment:
        """A `.cleaned` segment another process wrote and finished (sealed and fsynced), opened with
        its indexes, for the swap."""
        cleaned = cls.__new__(cls)
        cleaned.segment = Segment(directory, base_offset, index_interval_bytes, CLEANED_SUFFIX)
        cleaned.segment.load(False, checksum)
        cleaned._finished = True
        return cleaned

    def release(self) -> None:
        """Close this process's descriptors of a finished segment another process swaps in."""
        self.segment.close()

    def append(self, batch: bytes, header: BatchHeader) -> None:
        self.segment.append(batch, [(0, header)])

    def set_aborted(self, aborted: list[AbortedTxn]) -> None:
        self.segment.replace_aborted(aborted)

    def finish(self) -> None:
        if not self._finished:
            self.segment.seal()
            self.segment.flush()
            self._finished = True

    def discard(self) -> None:
        self.segment.delete()


def replace_segments(
    directory: str,
    segments: list[Segment],
    first: int,
    cleaned: CleanedSegment,
    old_bases: list[int],
    deferred: list[Callable[[], None]] | None = None,
) -> None:
    """Kafka's LocalLog.replaceSegments on a log's `segments` (changed in place), the first to replace
    at `first`: the cleaned segment's files go from `.cleaned` to `.swap`, the old segments' to
    `.deleted`, the swap to its final name, the directory is flushed once (as Kafka's flushDir) and the
    old files removed. A crash at any step leaves what `complete_interrupted_swaps` finishes at the next
    start. With `deferred`, the flush and the removal (the slow part, which touches nothing the log
    still uses) are appended there for the caller to run off the event loop."""
    assert isinstance(cleaned, FileCleanedSegment)
    olds = segments[first : first + len(old_bases)]
    if [s.base_offset for s in olds] != old_bases or first + len(olds) >= len(segments):
        cleaned.discard()
        raise ValueError(f"segments {old_bases} are not the log's closed segments any more")
    cleaned.finish()
    cleaned.segment.set_last_modified(olds[-1].last_modified_ms)  # as Kafka's Cleaner.cleanSegments
    swap_step("cleaned")
    cleaned.segment.change_suffix(SWAP_SUFFIX)
    swap_step("swap")
    for old in olds:
        old.change_suffix(DELETED_SUFFIX)
    swap_step("deleted")
    cleaned.segment.change_suffix("")
    swap_step("swapped")
    segments[first : first + len(olds)] = [cleaned.segment]

    def flush_and_delete() -> None:
        fsync_dir(directory)
        for old in olds:
            old.delete()
            if old.base_offset != cleaned.segment.base_offset:  # Kafka's replaceSegments: merged away
                delete_snapshot(directory, old.base_offset)

    if deferred is None:
        flush_and_delete()
    else:
        deferred.append(flush_and_delete)


def read_segment_batches(path: str, chunk_bytes: int = 1 << 20) -> Iterator[tuple[BatchHeader, bytes]]:
    """Every batch of a closed segment file, read in chunks through a descriptor of its own (the
    cleaner's thread never shares the broker's); stops at a torn or invalid tail."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        pos = 0
        while size - pos >= HEADER_SIZE:
            buf = os.pread(fd, min(chunk_bytes, size - pos), pos)
            view = memoryview(buf)
            used = 0
            while len(buf) - used >= HEADER_SIZE:
                header = BatchHeader.parse(buf, used)
                if header.batch_length < MIN_BATCH_LENGTH:
                    return
                if used + header.size > len(buf):
                    break
                yield header, bytes(view[used : used + header.size])
                used += header.size
            if used == 0:  # one batch larger than the chunk
                header = BatchHeader.parse(buf)
                data = os.pread(fd, header.size, pos)
                if len(data) < header.size:
                    return
                yield header, data
                used = header.size
            pos += used
    finally:
        os.close(fd)


def complete_interrupted_swaps(directory: str) -> bool:
    """Kafka's LogLoader.removeTempFilesAndCollectSwapFiles and its swap pass: `.deleted` and
    `.cleaned` files go; a `<base>.log.swap` (written and fsynced in full before it got that name)
    replaces the segments whose base offsets fall in its range and takes its final name. Index files
    of a swap are dropped (rebuilt). True if a swap was completed."""
    names = os.listdir(directory)
    for name in names:
        if name.endswith((DELETED_SUFFIX, CLEANED_SUFFIX)) or (name.endswith(SWAP_SUFFIX) and ".log" not in name):
            os.remove(os.path.join(directory, name))
    swaps = sorted(name for name in names if name.endswith(".log" + SWAP_SUFFIX) and name[:20].isdigit())
    for name in swaps:
        base = int(name[:20])
        path = os.path.join(directory, name)
        end = base
        for header, _ in read_segment_batches(path):
            end = header.next_offset
        for other in os.listdir(directory):
            stem, _, ext = other.partition(".")
            if (
                stem.isdigit()
                and ext in ("log", "index", "timeindex", "txnindex")
                and base <= int(stem) < max(end, base + 1)
            ):
                os.remove(os.path.join(directory, other))
        os.replace(path, path[: -len(SWAP_SUFFIX)])
    if swaps:
        fsync_dir(directory)
    return bool(swaps)
