"""Choosing logs to clean and keeping the first dirty offsets (Kafka's LogCleanerManager).

`grab_filthiest` looks at every partition of every topic whose `cleanup.policy` has `compact`, works
out its cleanable range (`selection`), and returns the dirtiest one that passes its
`min.cleanable.dirty.ratio` or is forced by `max.compaction.lag.ms`. `forced` takes one partition
whatever its ratio and lags (the embedded broker's `compact`). `done` records where the next
cleaning starts; the store persists that (`cleaner-offset-checkpoint` on the filesystem). What runs
the cleaning, and on which thread, is the application's business.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Protocol

from ..catalog import TopicCatalog
from ..configs import BrokerPolicy, segment_size
from ..ports import LogStore, PartitionLog
from ..topics import Topic, TopicPartition
from .cleaner import Cleaner, CleanerStats
from .rules import LastRecord
from .selection import CompactionConfig, LogToClean, cleanable_offsets, is_cleanable, log_to_clean, max_compaction_delay


class CleanerCheckpoints(Protocol):
    """Where the first dirty offset of each cleaned partition is kept."""

    def read(self) -> dict[TopicPartition, int]: ...

    def write(self, offsets: Mapping[TopicPartition, int]) -> None: ...


class MemoryCheckpoints:
    def __init__(self) -> None:
        self.offsets: dict[TopicPartition, int] = {}

    def read(self) -> dict[TopicPartition, int]:
        return dict(self.offsets)

    def write(self, offsets: Mapping[TopicPartition, int]) -> None:
        self.offsets = dict(offsets)


def compaction_config(policy: BrokerPolicy, configs: Mapping[str, str]) -> CompactionConfig:
    def value(name: str) -> str:
        return policy.topic_config(configs, name)

    return CompactionConfig(
        min_cleanable_ratio=float(value("min.cleanable.dirty.ratio")),
        min_compaction_lag_ms=int(value("min.compaction.lag.ms")),
        max_compaction_lag_ms=int(value("max.compaction.lag.ms")),
        delete_retention_ms=int(value("delete.retention.ms")),
        segment_bytes=segment_size(configs, value("segment.bytes")),
        max_message_bytes=int(value("max.message.bytes")),
    )


def is_compacted(policy: BrokerPolicy, topic: Topic) -> bool:
    return "compact" in policy.topic_config(topic.configs, "cleanup.policy").split(",")


class CleanerManager:
    def __init__(
        self,
        catalog: TopicCatalog,
        logs: LogStore,
        policy: BrokerPolicy,
        checkpoints: CleanerCheckpoints,
        last_stable_offset: Callable[[TopicPartition, PartitionLog], int],
        last_records: Callable[[TopicPartition, PartitionLog], dict[int, LastRecord]],
        internal: Callable[[], Iterable[tuple[TopicPartition, PartitionLog, Mapping[str, str]]]] = lambda: (),
    ) -> None:
        """`internal` lists compacted partitions outside the catalog (`__consumer_offsets`,
        `__transaction_state`) with their configs."""
        self._catalog = catalog
        self._logs = logs
        self._policy = policy
        self._checkpoints = checkpoints
        self._offsets = checkpoints.read()
        self._last_stable_offset = last_stable_offset
        self._last_records = last_records
        self._internal = internal
        self.in_progress: set[TopicPartition] = set()
        self.uncleanable: set[TopicPartition] = set()  # a cleaning failed: not taken again (Kafka's)
        self.dirtiest_ratio = 0.0  # of the last look, for max-dirty-percent
        self.max_compaction_delay_ms = 0  # of the last look, for max-compaction-delay-secs
        self.last_run_ms: int | None = None  # when the last look was
        self._delays: dict[TopicPartition, int] = {}

    def _candidate(
        self, tp: TopicPartition, log: PartitionLog, config: CompactionConfig, now_ms: int, force: bool
    ) -> LogToClean:
        segments = log.segment_infos()
        lag = 0 if force else config.min_compaction_lag_ms
        checkpoint = self._offsets.get(tp)
        end = log.log_end_offset
        first_dirty, uncleanable, reset = cleanable_offsets(
            segments, log.log_start_offset, end, checkpoint, end, now_ms, lag
        )
        if uncleanable > first_dirty:  # something may be cleanable: the last stable offset bounds it too
            first_dirty, uncleanable, reset = cleanable_offsets(
                segments, log.log_start_offset, end, checkpoint, self._last_stable_offset(tp, log), now_ms, lag
            )
        if reset:
            self.done(tp, first_dirty)
        delay = max_compaction_delay(
            segments, log.first_batch_timestamps(), first_dirty, now_ms, config.max_compaction_lag_ms
        )
        self._delays[tp] = delay
        return log_to_clean(tp, segments, first_dirty, uncleanable, force or delay > 0, reset)

    def internal_logs(self) -> Iterable[tuple[TopicPartition, PartitionLog, Mapping[str, str]]]:
        return self._internal()

    def _compacted_logs(self) -> Iterator[tuple[TopicPartition, PartitionLog, CompactionConfig]]:
        for topic in self._catalog.topics():
            if not is_compacted(self._policy, topic):
                continue
            config = compaction_config(self._policy, topic.configs)
            for tp in topic.topic_partitions():
                log = self._logs.get(tp)
                if log is not None:
                    yield tp, log, config
        for tp, log, configs in self._internal():
            yield tp, log, compaction_config(self._policy, configs)

    def grab_filthiest(self, now_ms: int) -> tuple[LogToClean, PartitionLog, CompactionConfig] | None:
        self.last_run_ms = now_ms
        self._delays = {}
        candidates = []
        for tp, log, config in self._compacted_logs():
            if tp in self.in_progress or tp in self.uncleanable:
                continue
            candidate = self._candidate(tp, log, config, now_ms, False)
            if candidate.total_bytes > 0:
                candidates.append((candidate, log, config))
        self.dirtiest_ratio = max((c[0].cleanable_ratio for c in candidates), default=0.0)
        self.max_compaction_delay_ms = max(self._delays.values(), default=0)
        cleanable = [c for c in candidates if is_cleanable(c[0], c[2].min_cleanable_ratio)]
        if not cleanable:
            return None
        chosen = max(cleanable, key=lambda c: c[0].cleanable_ratio)
        self.in_progress.add(chosen[0].tp)
        return chosen

    def forced(self, tp: TopicPartition, now_ms: int) -> tuple[LogToClean, PartitionLog, CompactionConfig] | None:
        """The partition's whole closed dirty section, whatever its ratio and min.compaction.lag.ms."""
        found = next(((log, config) for t, log, config in self._compacted_logs() if t == tp), None)
        topic = self._catalog.get(tp.topic)
        log = self._logs.get(tp)
        if found is not None:
            log, config = found
        elif topic is not None and log is not None:
            config = compaction_config(self._policy, topic.configs)
        else:
            return None
        self.in_progress.add(tp)
        return self._candidate(tp, log, config, now_ms, True), log, config

    def last_records(self, tp: TopicPartition, log: PartitionLog) -> dict[int, LastRecord]:
        return self._last_records(tp, log)

    def done(self, tp: TopicPartition, end_offset: int) -> None:
        """A cleaning ended: the next starts at `end_offset` (Kafka's doneCleaning)."""
        self.in_progress.discard(tp)
        self.uncleanable.discard(tp)
        if self._offsets.get(tp) != end_offset:
            self._offsets[tp] = end_offset
            self._checkpoints.write(self._offsets)

    def aborted(self, tp: TopicPartition, failed: bool = False) -> None:
        """A cleaning stopped; `failed`: it went wrong, and the partition is not taken again until
        it is cleaned on demand (Kafka's markPartitionUncleanable)."""
        self.in_progress.discard(tp)
        if failed:
            self.uncleanable.add(tp)

    def forget(self, tp: TopicPartition) -> None:
        """A deleted partition leaves the checkpoint."""
        if self._offsets.pop(tp, None) is not None:
            self._checkpoints.write(self._offsets)

    def first_dirty_offset(self, tp: TopicPartition) -> int | None:
        return self._offsets.get(tp)


def clean_now(
    manager: CleanerManager,
    cleaner: Cleaner,
    chosen: tuple[LogToClean, PartitionLog, CompactionConfig],
    now_ms: int,
) -> tuple[int, CleanerStats]:
    """One cleaning on this thread, its segments swapped in as each is done (tests, the memory store)."""
    to_clean, log, config = chosen
    try:
        end, stats = cleaner.clean(
            log, to_clean, config, manager.last_records(to_clean.tp, log), now_ms, log.replace_segments
        )
    except BaseException:
        manager.aborted(to_clean.tp)
        raise
    manager.done(to_clean.tp, end)
    return end, stats
