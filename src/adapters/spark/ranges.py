"""Which offsets a read covers, per topic partition, and how they are cut into Spark input partitions.

Planning resolves `earliest` / `latest` / JSON offsets against each partition's log start and log end
offsets once, on the driver, so every task reads a fixed `[from_offset, until_offset)` range. As in
Spark's Kafka source, a start below the log start is data loss (an error unless `failOnDataLoss` is
false, which starts at the log start instead), and a start after the end is an error.

Each topic partition becomes one Spark input partition, split into equal offset chunks when it holds
more than `maxRecordsPerPartition` offsets or when `minPartitions` asks for more tasks than there are
topic partitions (Spark's KafkaOffsetRangeCalculator: chunks in proportion to each range's size).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Protocol

import attrs
from pyspark.sql.datasource import InputPartition

from .errors import SourceError
from .options import EARLIEST, LATEST, OffsetSpec


@attrs.frozen
class OffsetRange(InputPartition):
    """One Spark input partition: offsets [from_offset, until_offset) of one topic partition."""

    topic: str
    partition: int
    from_offset: int
    until_offset: int

    @property
    def size(self) -> int:
        return self.until_offset - self.from_offset

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition} [{self.from_offset}, {self.until_offset})"


@attrs.frozen
class LogBounds:
    log_start_offset: int
    log_end_offset: int  # the high watermark: on a single node, the offset after the last stored batch


class OffsetSource(Protocol):
    """What planning asks of a source (both sources answer it)."""

    def partition_count(self, topic: str) -> int:
        """Partitions of `topic`; SourceError if there is no such topic."""

    def bounds(self, topic: str, partitions: Iterable[int]) -> Mapping[int, LogBounds]: ...


def _check_named_partitions(spec: OffsetSpec, option: str, topic: str, count: int) -> None:
    if spec.kind != "specific":
        return
    named = {p for (t, p) in spec.offsets if t == topic}
    if named != set(range(count)):
        missing = sorted(set(range(count)) - named)
        unknown = sorted(named - set(range(count)))
        problem = f"misses partitions {missing}" if missing else f"names partitions {unknown} that do not exist"
        raise SourceError(
            f"{option} {problem} of topic {topic!r} ({count} partitions): JSON offsets must name every "
            "partition; use -2 for earliest, -1 for latest"
        )


def _start_offset(wanted: int, bounds: LogBounds, where: str, fail_on_data_loss: bool) -> int:
    if wanted == EARLIEST:
        return bounds.log_start_offset
    if wanted == LATEST:
        return bounds.log_end_offset
    if wanted < bounds.log_start_offset:
        if fail_on_data_loss:
            raise SourceError(
                f"startingOffsets {wanted} of {where} is below its log start offset {bounds.log_start_offset}: "
                "those records are gone (failOnDataLoss=false starts at the log start instead)"
            )
        return bounds.log_start_offset
    if wanted > bounds.log_end_offset:
        raise SourceError(f"startingOffsets {wanted} of {where} is past its log end offset {bounds.log_end_offset}")
    return wanted


def _end_offset(wanted: int, bounds: LogBounds, where: str) -> int:
    if wanted == LATEST:
        return bounds.log_end_offset
    if wanted > bounds.log_end_offset:
        raise SourceError(f"endingOffsets {wanted} of {where} is past its log end offset {bounds.log_end_offset}")
    return wanted


def plan_batch(
    source: OffsetSource, topics: Iterable[str], starting: OffsetSpec, ending: OffsetSpec, fail_on_data_loss: bool
) -> list[OffsetRange]:
    """One range per topic partition, empty ones included (so a summary can list every partition)."""
    ranges = []
    for topic in topics:
        count = source.partition_count(topic)
        _check_named_partitions(starting, "startingOffsets", topic, count)
        _check_named_partitions(ending, "endingOffsets", topic, count)
        for partition, bounds in sorted(source.bounds(topic, range(count)).items()):
            where = f"{topic}-{partition}"
            start = _start_offset(starting.for_partition(topic, partition), bounds, where, fail_on_data_loss)
            end = _end_offset(ending.for_partition(topic, partition), bounds, where)
            if end < start:
                if end < bounds.log_start_offset and not fail_on_data_loss:
                    end = start
                else:
                    raise SourceError(f"starting offset {start} of {where} is after its ending offset {end}")
            ranges.append(OffsetRange(topic, partition, start, end))
    return ranges


def split_ranges(
    ranges: Iterable[OffsetRange], min_partitions: int | None, max_records_per_partition: int
) -> list[OffsetRange]:
    """Spark input partitions for the ranges: empty ones dropped, large or too few ones cut in chunks."""
    nonempty = [r for r in ranges if r.size > 0]
    total = sum(r.size for r in nonempty)
    out = []
    for r in nonempty:
        parts = math.ceil(r.size / max_records_per_partition)
        if min_partitions is not None and len(nonempty) < min_partitions:
            parts = max(parts, round(r.size / total * min_partitions), 1)
        start = r.from_offset
        remaining = r.size
        for part in range(parts):
            length = remaining // (parts - part)  # the last chunks take the remainder
            remaining -= length
            out.append(OffsetRange(r.topic, r.partition, start, start + length))
            start += length
    return [r for r in out if r.size > 0]


# -- streaming ---------------------------------------------------------------------------------------
# A stream's offset is Spark's Kafka offset JSON: {"topic": {"partition": next offset to read}}.

StreamOffset = dict[str, dict[str, int]]


def stream_offset(offsets: Mapping[tuple[str, int], int]) -> StreamOffset:
    nested: StreamOffset = {}
    for (topic, partition), offset in sorted(offsets.items()):
        nested.setdefault(topic, {})[str(partition)] = offset
    return nested


def flatten(offset: Mapping[str, Mapping[str, int]]) -> dict[tuple[str, int], int]:
    return {(topic, int(p)): o for topic, partitions in offset.items() for p, o in partitions.items()}


def current_bounds(source: OffsetSource, topics: Iterable[str]) -> dict[tuple[str, int], LogBounds]:
    out = {}
    for topic in topics:
        count = source.partition_count(topic)
        for partition, bounds in source.bounds(topic, range(count)).items():
            out[(topic, partition)] = bounds
    return out


def initial_stream_offset(
    source: OffsetSource, topics: Iterable[str], starting: OffsetSpec, fail_on_data_loss: bool
) -> StreamOffset:
    bounds = current_bounds(source, topics)
    for topic in {t for t, _ in bounds}:
        _check_named_partitions(starting, "startingOffsets", topic, sum(1 for t, _ in bounds if t == topic))
    return stream_offset(
        {
            tp: _start_offset(starting.for_partition(*tp), b, f"{tp[0]}-{tp[1]}", fail_on_data_loss)
            for tp, b in bounds.items()
        }
    )


def rate_limited(
    start: Mapping[tuple[str, int], int], latest: Mapping[tuple[str, int], int], max_offsets: int | None
) -> dict[tuple[str, int], int]:
    """At most `max_offsets` new offsets in all, shared in proportion to each partition's backlog (as
    Spark's maxOffsetsPerTrigger). `start` holds every partition of `latest`."""
    if max_offsets is None:
        return dict(latest)
    backlog = {tp: max(0, end - start[tp]) for tp, end in latest.items()}
    total = sum(backlog.values())
    if total <= max_offsets:
        return dict(latest)
    out = {}
    for tp, end in latest.items():
        share = backlog[tp] * max_offsets / total
        take = math.ceil(share) if share < 1 else math.floor(share)
        out[tp] = max(start[tp], min(end, start[tp] + take))
    return out
