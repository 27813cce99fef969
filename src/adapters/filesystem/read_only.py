"""A read-only view of a Kafka log dir, for readers that run beside a live broker (the Spark source).

Unlike the store's own segments (opened read-write, recovered, indexes rebuilt), this opens files
O_RDONLY, takes no lock, trusts an index only as far as it is consistent, CRC-checks every batch it
hands out and treats an incomplete or bad batch at the end of the last segment as a tail still being
written: the log ends before it. Problems are `DataDirError`s naming the path.
"""

from __future__ import annotations

import bisect
import os
import uuid
from collections.abc import Callable, Iterator

from trafka.domain.batch import CRC_START, HEADER_SIZE, MIN_BATCH_LENGTH, BatchHeader
from trafka.domain.topics import TopicPartition

from .catalog_store import FileCatalogStore
from .layout import (
    LOG_START_CHECKPOINT,
    META_PROPERTIES,
    DataDirError,
    LogDir,
    parse_partition_dir,
    read_meta_properties,
)
from .metadata_records import iter_records
from .segment import INDEX_ENTRY, file_stem

METADATA_PARTITION = TopicPartition("__cluster_metadata", 0)
_READ_CHUNK = 4 * 1024 * 1024

Checksum = Callable[[memoryview], int]


def _segment_bases(directory: str) -> list[int]:
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    return sorted(int(n[:-4]) for n in names if n.endswith(".log") and n[:-4].isdigit())


def _index_positions(directory: str, base: int, log_size: int) -> list[tuple[int, int]]:
    """The offset index's (relative offset, position) entries, as far as they are consistent.

    A live index may end in an entry being written, and Kafka preallocates its index with zeros.
    """
    try:
        with open(os.path.join(directory, file_stem(base) + ".index"), "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return []
    entries: list[tuple[int, int]] = []
    for i in range(0, len(raw) - len(raw) % INDEX_ENTRY.size, INDEX_ENTRY.size):
        rel, pos = INDEX_ENTRY.unpack_from(raw, i)
        if pos >= log_size or (entries and (rel <= entries[-1][0] or pos <= entries[-1][1])) or rel < 0:
            break
        entries.append((rel, pos))
    return entries


class _Corrupt(Exception):
    def __init__(self, position: int, reason: str) -> None:
        super().__init__(reason)
        self.position = position
        self.reason = reason


def _scan_segment(fd: int, start: int, base: int, checksum: Checksum) -> Iterator[tuple[BatchHeader, bytes]]:
    """(header, bytes) of each complete, valid batch from position `start` to the end of the file.

    Stops quietly at an incomplete batch at the end of the file; raises _Corrupt at a bad one.
    """
    data = b""
    data_start = start  # file position of data[0]
    expected = base
    while True:
        chunk = os.pread(fd, _READ_CHUNK, data_start + len(data))
        if not chunk:
            return  # whatever is left in data is an incomplete batch: a torn or growing tail
        data = data + chunk if data else chunk
        i = 0
        while len(data) - i >= HEADER_SIZE:
            header = BatchHeader.parse(data, i)
            position = data_start + i
            if header.magic != 2 or header.batch_length < MIN_BATCH_LENGTH:
                raise _Corrupt(position, f"not a v2 record batch (magic {header.magic}, length {header.batch_length})")
            if header.base_offset < expected or header.last_offset_delta < 0:
                raise _Corrupt(position, f"batch offsets {header.base_offset}..{header.last_offset} go backwards")
            if i + header.size > len(data):
                break
            with memoryview(data) as view:
                if checksum(view[i + CRC_START : i + header.size]) != header.crc:
                    raise _Corrupt(position, f"batch at offset {header.base_offset} fails its CRC check")
            yield header, data[i : i + header.size]
            expected = header.next_offset
            i += header.size
        data = data[i:]
        data_start += i


class ReadOnlyLogDir:
    """The Spark adapter's `LogDirReader` over a Kafka log dir, reading without writing."""

    def __init__(self, path: str, checksum: Checksum) -> None:
        self.path = os.path.abspath(path)
        self._checksum = checksum
        if not os.path.exists(self.path):
            raise DataDirError(f"data dir {self.path} does not exist")
        if not os.path.isdir(self.path):
            raise DataDirError(f"data dir {self.path} is not a directory")
        if not os.access(self.path, os.R_OK | os.X_OK):
            raise DataDirError(f"data dir {self.path} cannot be read by this user")
        if not os.path.exists(os.path.join(self.path, META_PROPERTIES)):
            raise DataDirError(f"data dir {self.path} is not a Kafka or trafka log dir (no {META_PROPERTIES})")
        try:
            self._logdir = LogDir(self.path, read_meta_properties(self.path), clean_shutdown=False)
        except DataDirError:
            raise
        self._partition_counts: dict[str, int] | None = None
        self._log_starts: dict[TopicPartition, int] | None = None

    # -- the topic catalog ---------------------------------------------------------------------------

    def partition_count(self, topic: str) -> int | None:
        if self._partition_counts is None:
            self._partition_counts = self._load_catalog()
        return self._partition_counts.get(topic)

    def _load_catalog(self) -> dict[str, int]:
        if os.path.isdir(self._logdir.partition_path(METADATA_PARTITION)):
            metadata = _MetadataLogView(self)
            if metadata.log.log_end_offset == 0:
                return {}
            # FileCatalogStore only writes when given an empty log; its replay is the one source of truth
            catalog = FileCatalogStore(metadata, node_id=0, directory_id=uuid.UUID(int=0))  # type: ignore[arg-type]  # a read-only view of the log
            topics = catalog.load()
            return {t.name: t.partition_count for t in topics}
        counts: dict[str, int] = {}  # a log dir without a KRaft metadata log: its partition directories
        for name in os.listdir(self.path):
            tp = parse_partition_dir(name)
            if tp is not None and os.path.isdir(os.path.join(self.path, name)):
                counts[tp.topic] = max(counts.get(tp.topic, 0), tp.partition + 1)
        return counts

    # -- offsets -------------------------------------------------------------------------------------

    def _directory(self, topic: str, partition: int) -> str:
        return self._logdir.partition_path(TopicPartition(topic, partition))

    def log_start_offset(self, topic: str, partition: int) -> int:
        if self._log_starts is None:
            self._log_starts = self._logdir.read_checkpoint(LOG_START_CHECKPOINT)
        bases = _segment_bases(self._directory(topic, partition))
        first = bases[0] if bases else 0
        return max(first, self._log_starts.get(TopicPartition(topic, partition), 0))

    def log_end_offset(self, topic: str, partition: int) -> int:
        directory = self._directory(topic, partition)
        bases = _segment_bases(directory)
        if not bases:
            return self.log_start_offset(topic, partition)
        end = None
        for header, _ in self._segment_batches(directory, bases[-1], None, last=True, tail_only=True):
            end = header.next_offset
        if end is None:  # the last indexed batch is torn or bad: the end is somewhere before it
            for header, _ in self._segment_batches(directory, bases[-1], None, last=True):
                end = header.next_offset
        return bases[-1] if end is None else end

    # -- batches -------------------------------------------------------------------------------------

    def batches(self, topic: str, partition: int, offset: int) -> Iterator[bytes]:
        directory = self._directory(topic, partition)
        bases = _segment_bases(directory)
        first = max(0, bisect.bisect_right(bases, offset) - 1)
        for i in range(first, len(bases)):
            seek = offset if i == first else None
            for header, batch in self._segment_batches(directory, bases[i], seek, last=i == len(bases) - 1):
                if header.last_offset >= offset:
                    yield batch

    def _segment_batches(
        self, directory: str, base: int, offset: int | None, last: bool, tail_only: bool = False
    ) -> Iterator[tuple[BatchHeader, bytes]]:
        """Batches of one segment: from the index position for `offset` (None: the start), or with
        `tail_only` from the last index entry (enough to find where the log ends)."""
        path = os.path.join(directory, file_stem(base) + ".log")
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            raise DataDirError(f"segment {path} was deleted while reading (retention or DeleteRecords)") from None
        try:
            size = os.fstat(fd).st_size
            entries = _index_positions(directory, base, size)
            start = 0
            if entries and tail_only:
                start = entries[-1][1]
            elif entries and offset is not None:
                # an entry maps a batch's last offset to the batch's position: start at the last entry
                # whose batch ends at or before `offset`
                k = bisect.bisect_right(entries, (offset - base, 2**31)) - 1
                start = entries[k][1] if k >= 0 else 0
            try:
                yield from _scan_segment(fd, start, base if start == 0 else -1, self._checksum)
            except _Corrupt as exc:
                if not last:
                    raise DataDirError(f"segment {path} is corrupt at position {exc.position}: {exc.reason}") from None
                # the end of the last segment: a tail being written, or one the broker's recovery cuts
        finally:
            os.close(fd)

    def close(self) -> None:
        """Nothing is held open between calls."""


class _MetadataLogView:
    """The KRaft metadata log as `FileCatalogStore.load` reads it (`.log.log_end_offset`, `.records()`)."""

    def __init__(self, logdir: ReadOnlyLogDir) -> None:
        self._logdir = logdir
        self.log = self
        tp = METADATA_PARTITION
        self.log_start_offset = logdir.log_start_offset(tp.topic, tp.partition)
        self.log_end_offset = logdir.log_end_offset(tp.topic, tp.partition)

    def records(self) -> Iterator[tuple[int, bytes | None, bytes | None]]:
        tp = METADATA_PARTITION
        for batch in self._logdir.batches(tp.topic, tp.partition, self.log_start_offset):
            for offset, key, value in iter_records(batch):
                if offset >= self.log_start_offset:
                    yield offset, key, value
