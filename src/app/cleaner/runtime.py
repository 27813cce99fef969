"""The log cleaner beside the event loop: Kafka's LogCleaner threads, as Trio tasks that hand the
work to worker threads.

`log.cleaner.threads` tasks each take the dirtiest compacted log (the domain's CleanerManager), run
the cleaning (the domain's Cleaner: reads, key map, recopy) in a worker thread with
`trio.to_thread.run_sync`, and swap each cleaned segment in on the event loop
(`trio.from_thread.run_sync`), so the store's segment list only ever changes on the loop's thread.
When no log needs cleaning a task sleeps `log.cleaner.backoff.ms`. The threads share the dedupe
buffer (`log.cleaner.dedupe.buffer.size` / threads each, as Kafka splits it) and one I/O throttle
(`log.cleaner.io.max.bytes.per.second`, Kafka's Throttler: it sleeps the worker when the bytes read
and written over a 300 ms window exceed the rate). `compact(topic)` cleans a topic now, whatever its
dirty ratio and compaction lags (the embedded broker's `broker.compact`).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, TypeGuard

import attrs
import trio

from trafka.adapters.compression import compress
from trafka.adapters.kafka.context import BrokerContext
from trafka.domain.batch import Checksum
from trafka.domain.batch_records import Decompress
from trafka.domain.compaction import CleanedSegment, Cleaner, CleanerStats, CompactionConfig, LogToClean
from trafka.domain.compaction.manager import CleanerCheckpoints, CleanerManager, MemoryCheckpoints
from trafka.domain.compaction.rules import LastRecord
from trafka.domain.ports import LogStore, PartitionLog
from trafka.domain.producers import PartitionProducerState
from trafka.domain.topics import TopicPartition

from ..config.settings import LogCleanerSettings
from .throttle import Throttler

if TYPE_CHECKING:
    from trafka.adapters.filesystem.partition_log import FilePartitionLog

    from .process import CleanerProcess

log = logging.getLogger("trafka.cleaner")

GIL_SLICE_S = 0.001  # how long the cleaner's worker runs before it offers the GIL to the event loop


class CleaningAborted(Exception):
    """The broker is stopping: the cleaning in progress stops at its next read (Kafka's checkDone)."""


@attrs.define
class CleanerMetrics:
    """What Kafka's LogCleaner and LogCleanerManager publish (JMX names in the comments)."""

    max_clean_time_secs: float = 0.0  # LogCleaner max-clean-time-secs (of the last run of each thread)
    cleaner_recopy_percent: float = 0.0  # LogCleaner cleaner-recopy-percent (the last cleaning)
    max_buffer_utilization_percent: float = 0.0  # LogCleaner max-buffer-utilization-percent
    max_compaction_delay_secs: float = 0.0  # LogCleaner max-compaction-delay-secs
    dead_thread_count: int = 0  # LogCleaner DeadThreadCount
    max_dirty_percent: float = 0.0  # LogCleanerManager max-dirty-percent
    bytes_cleaned: int = 0  # dirty bytes read by all cleanings (trafka's own, for the benchmark)
    cleanings: int = 0


class LogCleaner:
    def __init__(
        self,
        settings: LogCleanerSettings,
        ctx: BrokerContext,
        logs: LogStore,
        checksum: Checksum,
        decompress: Decompress,
        checkpoints: CleanerCheckpoints | None = None,
        internal: Callable[[], Iterable[tuple[TopicPartition, PartitionLog, Mapping[str, str]]]] = lambda: (),
        use_process: bool = True,
    ) -> None:
        """`internal`: the compacted internal partitions the catalog does not list, with their configs.
        `use_process`: filesystem logs are cleaned in a process of the cleaner's (one per cleaner
        thread, `cleaner_process`); otherwise, and for the memory store, in a worker thread."""
        self.settings = settings
        self._ctx = ctx
        self._logs = logs
        self._checksum = checksum
        self._decompress = decompress
        self.manager = CleanerManager(
            ctx.services.catalog,
            logs,
            ctx.services.policy,
            checkpoints if checkpoints is not None else MemoryCheckpoints(),
            self._last_stable_offset,
            self._last_records,
            internal,
        )
        self.throttler = Throttler(settings.io_max_bytes_per_second)
        self.metrics = CleanerMetrics()
        self._stopping = False
        self._run_times: dict[int, float] = {}
        self._finished = trio.lowlevel.ParkingLot()  # woken whenever a cleaning ends
        self._internal_producers: dict[TopicPartition, tuple[int, PartitionProducerState]] = {}
        self._use_process = use_process
        self._processes: dict[int, CleanerProcess] = {}  # by cleaner thread (-1: compact())

    def _last_stable_offset(self, tp: TopicPartition, partition_log: PartitionLog) -> int:
        if self._ctx.services.catalog.has_partition(tp):
            return self._ctx.services.replicas.last_stable_offset(tp, partition_log)
        first_unstable = self._producers_now(tp, partition_log).first_unstable_offset()
        return partition_log.log_end_offset if first_unstable is None else first_unstable

    def _last_records(self, tp: TopicPartition, partition_log: PartitionLog) -> dict[int, LastRecord]:
        if self._ctx.services.catalog.has_partition(tp):
            return self._ctx.services.replicas.last_records_of_active_producers(tp, partition_log)
        return {
            pid: LastRecord(entry.batches[-1].last_offset if entry.batches else None, entry.epoch)
            for pid, entry in self._producers_now(tp, partition_log).producers.items()
        }

    def _producers_now(self, tp: TopicPartition, partition_log: PartitionLog) -> PartitionProducerState:
        """An internal partition's producers, replayed from its headers once per log end offset."""
        cached = self._internal_producers.get(tp)
        if cached is None or cached[0] != partition_log.log_end_offset:
            cached = self._internal_producers[tp] = (partition_log.log_end_offset, _producers_now(partition_log))
        return cached[1]

    def _cleaner(self) -> Cleaner:
        # aiokafka's compiled key scan loads with the first cleaning, not with the broker (ADR 70).
        from trafka.adapters.compression.keys import scan_keys

        threads = max(self.settings.threads, 1)

        held_since = time.perf_counter()

        def throttle(size: int) -> None:
            nonlocal held_since
            if self._stopping:
                raise CleaningAborted
            self.throttler.maybe_throttle(size)
            # Called per batch read or written: after a slice of work, let the event loop's thread take
            # the GIL now rather than after the interpreter's switch interval (5 ms), which would add to
            # every request. Not after every batch: a batch the cleaner skips costs microseconds, and
            # each hand-over makes the worker wait for the loop to give the GIL back.
            now = time.perf_counter()
            if now - held_since >= GIL_SLICE_S:
                time.sleep(0)
                held_since = time.perf_counter()

        return Cleaner(
            self._checksum,
            self._decompress,
            compress,
            self.settings.dedupe_buffer_size // threads,
            throttle,
            self.settings.io_buffer_load_factor,
            scan_keys,
        )

    async def run(self) -> None:
        """The cleaner threads, until the broker shuts down (a cleaning in progress then stops at its
        next read); nothing if `log.cleaner.enable` is false."""
        if not self.settings.enable or self.settings.threads <= 0:
            return
        try:
            async with trio.open_nursery() as nursery:
                for thread in range(self.settings.threads):
                    nursery.start_soon(self._thread, thread)
                await self._ctx.shutting_down.wait()
                self._stop()
                nursery.cancel_scope.cancel()
        finally:
            self._stop()

    def _stop(self) -> None:
        self._stopping = True
        for process in self._processes.values():
            process.stop()

    async def _thread(self, thread: int) -> None:
        cleaner = None  # made with the first log to clean: a broker with none never loads its key scan
        while True:
            chosen = self.manager.grab_filthiest(self._ctx.services.clock_ms())
            self.metrics.max_dirty_percent = 100 * self.manager.dirtiest_ratio
            if chosen is None:
                await trio.sleep(self.settings.backoff_ms / 1000)
                continue
            if cleaner is None:
                cleaner = self._cleaner()
            await self._clean(cleaner, chosen, thread)

    async def _clean(
        self, cleaner: Cleaner, chosen: tuple[LogToClean, PartitionLog, CompactionConfig], thread: int
    ) -> CleanerStats | None:
        to_clean, partition_log, config = chosen
        tp = to_clean.tp
        now = self._ctx.services.clock_ms()
        last_records = self.manager.last_records(tp, partition_log)
        token = trio.lowlevel.current_trio_token()

        def swap(cleaned: CleanedSegment, old_bases: list[int]) -> None:
            deferred: list[Callable[[], None]] = []
            trio.from_thread.run_sync(partition_log.replace_segments, cleaned, old_bases, deferred, trio_token=token)
            for step in deferred:  # the directory flush and the old files' removal, on this thread
                step()

        def in_thread() -> tuple[int, CleanerStats]:
            return cleaner.clean(partition_log, to_clean, config, last_records, now, swap)

        work = in_thread
        if self._use_process and _in_a_log_dir(partition_log):
            from .process import CleanerProcess, ProcessGone  # multiprocessing, on first use

            file_log = partition_log
            process = self._processes.setdefault(thread, CleanerProcess())
            if self._stopping:
                process.stop()

            def in_process() -> tuple[int, CleanerStats]:
                try:
                    return process.clean(
                        file_log,
                        to_clean,
                        config,
                        last_records,
                        now,
                        self.settings.dedupe_buffer_size // max(self.settings.threads, 1),
                        self.settings.io_buffer_load_factor,
                        # each process throttles itself: the threads' processes share the rate
                        self.throttler.rate / max(self.settings.threads, 1),
                        swap,
                    )
                except ProcessGone:
                    if self._stopping:
                        raise CleaningAborted from None
                    raise

            work = in_process

        started = time.monotonic()
        try:
            end, stats = await trio.to_thread.run_sync(work)
        except BaseException as exc:  # stopping; a log that changed under the cleaner, a full disk, a corrupt batch
            self.manager.aborted(tp, failed=isinstance(exc, Exception) and not isinstance(exc, CleaningAborted))
            self._finished.unpark_all()
            if not isinstance(exc, Exception):
                raise
            if not isinstance(exc, CleaningAborted):
                log.warning("cleaning %s failed, it is retried later: %s", tp, exc)
            return None
        self.manager.done(tp, end)
        self._finished.unpark_all()
        elapsed = time.monotonic() - started
        self._run_times[thread] = elapsed
        metrics = self.metrics
        metrics.max_clean_time_secs = max(self._run_times.values())
        metrics.cleaner_recopy_percent = 100 * stats.bytes_written / stats.bytes_read if stats.bytes_read else 0.0
        metrics.max_buffer_utilization_percent = 100 * stats.buffer_utilization
        metrics.bytes_cleaned += stats.map_bytes_read
        metrics.cleanings += 1
        log.info(
            "cleaned %s up to offset %d: %d bytes read, %d written, in %.3f s",
            tp,
            end,
            stats.bytes_read,
            stats.bytes_written,
            elapsed,
        )
        return stats

    async def compact(self, topic: str) -> None:
        """Clean every partition of `topic` now: its active segment is rolled, and everything up to
        the last stable offset is cleaned whatever the dirty ratio and `min.compaction.lag.ms`."""
        found = self._ctx.services.catalog.get(topic)
        partitions = (
            found.topic_partitions()
            if found is not None
            else [tp for tp, _, _ in self.manager.internal_logs() if tp.topic == topic]
        )
        if not partitions:
            raise KeyError(topic)
        cleaner = self._cleaner()
        for tp in partitions:
            while tp in self.manager.in_progress:  # a cleaner thread has it: wait for that cleaning
                await self._finished.park()
            partition_log = self._logs.get(tp) or next(
                (pl for t, pl, _ in self.manager.internal_logs() if t == tp), None
            )
            if partition_log is None:
                continue
            partition_log.roll()
            chosen = self.manager.forced(tp, self._ctx.services.clock_ms())
            if chosen is not None:
                await self._clean(cleaner, chosen, -1)

    def metric_values(self) -> dict[str, float]:
        """The gauges of Kafka's LogCleaner and LogCleanerManager MBeans, for /metrics."""
        metrics = self.metrics
        last_run = self.manager.last_run_ms
        return {
            "max_clean_time_secs": metrics.max_clean_time_secs,
            "cleaner_recopy_percent": metrics.cleaner_recopy_percent,
            "max_buffer_utilization_percent": metrics.max_buffer_utilization_percent,
            "max_compaction_delay_secs": self.manager.max_compaction_delay_ms / 1000,
            "dead_thread_count": metrics.dead_thread_count,
            "max_dirty_percent": 100 * self.manager.dirtiest_ratio,
            "time_since_last_run_ms": 0.0 if last_run is None else self._ctx.services.clock_ms() - last_run,
        }

    def first_dirty_offset(self, tp: TopicPartition) -> int | None:
        return self.manager.first_dirty_offset(tp)


def _producers_now(partition_log: PartitionLog) -> PartitionProducerState:
    """An internal partition's producers, replayed from its batch headers each time: its writer (the
    group or transaction coordinator's store) appends without the replica manager's producer state."""
    state = PartitionProducerState()
    for header in partition_log.batch_headers(0):
        if header.producer_id < 0:
            continue
        if header.is_control:
            state.end_transaction(header.producer_id, header.producer_epoch, header.max_timestamp)
        else:
            state.record(header)
    return state


def _in_a_log_dir(partition_log: PartitionLog) -> TypeGuard[FilePartitionLog]:
    """A log dir's partition (cleaned in a cleaner process); a memory broker never loads the filesystem
    store, so none of its partitions can be one (ADR 118: the store is not imported to ask)."""
    module = sys.modules.get("trafka.adapters.filesystem.partition_log")
    return module is not None and isinstance(partition_log, module.FilePartitionLog)
