"""The `data_dir` source: a topic read straight from the segment files of a Kafka log dir.

Which files hold which batches is the filesystem store's knowledge, not this adapter's, so the source
reads through a `LogDirReader`: the port this adapter declares for itself, implemented over the
filesystem adapter by the composition root (`trafka.app.wiring.spark`), which also hands the opener to Spark
executors. Adapters never import each other; this module knows only the port.

The reader promises to be read-only (no writes, locks or repairs, so a broker may run on the same dir)
and to yield only complete, CRC-checked batches: a tail being appended concurrently ends the log at
the last complete batch. This side decodes the records and keeps to the planned offsets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Protocol

import pyarrow as pa

from trafka.domain.batch import BatchHeader

from .errors import SourceError
from .ranges import LogBounds, OffsetRange
from .record_columns import append_batch
from .schema import RecordColumns

ROWS_PER_ARROW_BATCH = 10_000
BYTES_PER_ARROW_BATCH = 32 * 1024 * 1024  # of stored (possibly compressed) batches


class LogDirReader(Protocol):
    """A read-only view of one Kafka log dir."""

    @property
    def path(self) -> str: ...

    def partition_count(self, topic: str) -> int | None:
        """The topic's partition count in the dir's topic catalog, or None if there is no such topic."""

    def log_start_offset(self, topic: str, partition: int) -> int: ...

    def log_end_offset(self, topic: str, partition: int) -> int:
        """The offset after the last complete batch."""

    def batches(self, topic: str, partition: int, offset: int) -> Iterator[bytes]:
        """Complete, CRC-checked batches in offset order, from the one holding `offset` (or the first
        after it) to the last complete one. Raises SourceError for corruption before the tail."""

    def close(self) -> None: ...


LogDirOpener = Callable[[str], LogDirReader]
"""Opens the log dir at a path; raises SourceError naming the path if it cannot be read as one."""

NO_LOG_DIR_READER = (
    "data_dir needs a log dir reader from the composition root: register "
    "trafka.app.wiring.spark.TrafkaSource (trafka.app.wiring.spark.register(spark)) instead of the bare adapter"
)


class LogDirSource:
    def __init__(self, reader: LogDirReader) -> None:
        self._reader = reader

    def partition_count(self, topic: str) -> int:
        count = self._reader.partition_count(topic)
        if count is None:
            raise SourceError(f"topic {topic!r} does not exist in data dir {self._reader.path}")
        return count

    def bounds(self, topic: str, partitions: Iterable[int]) -> Mapping[int, LogBounds]:
        return {
            p: LogBounds(self._reader.log_start_offset(topic, p), self._reader.log_end_offset(topic, p))
            for p in partitions
        }

    def read(self, offsets: OffsetRange, include_headers: bool, fail_on_data_loss: bool) -> Iterator[pa.RecordBatch]:
        topic, partition = offsets.topic, offsets.partition
        log_start = self._reader.log_start_offset(topic, partition)
        if offsets.from_offset < log_start and fail_on_data_loss:
            raise SourceError(
                f"{topic}-{partition} now starts at offset {log_start}, after the planned {offsets.from_offset}: "
                "records were deleted while reading (failOnDataLoss=false skips them)"
            )
        first = max(offsets.from_offset, log_start)
        columns = RecordColumns(topic, partition, include_headers)
        reached = first
        stored_bytes = 0
        if first < offsets.until_offset:
            for batch in self._reader.batches(topic, partition, first):
                header = BatchHeader.parse(batch)
                if header.base_offset >= offsets.until_offset:
                    break
                append_batch(batch, columns, first, offsets.until_offset)
                reached = header.next_offset
                stored_bytes += header.size
                if len(columns) >= ROWS_PER_ARROW_BATCH or stored_bytes >= BYTES_PER_ARROW_BATCH:
                    yield columns.take_batch()
                    stored_bytes = 0
                if reached >= offsets.until_offset:
                    break
        if reached < offsets.until_offset:
            raise SourceError(
                f"{topic}-{partition} in {self._reader.path} ends at offset {reached}, "
                f"before the planned {offsets.until_offset}"
            )
        if len(columns):
            yield columns.take_batch()

    def close(self) -> None:
        self._reader.close()
