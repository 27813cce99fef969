"""Partition logs in a Kafka log dir: the `LogStore` port on the filesystem.

Opening a partition after an unclean shutdown scans every segment past its recovery point, cuts a
torn tail and rebuilds the indexes; what was cut is logged. `close` flushes, writes the recovery
point and log start offset checkpoints and marks the shutdown clean.
"""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from collections.abc import Callable, Mapping

from trafka.domain.configs import TOPIC_CONFIG_DEFAULTS, segment_size
from trafka.domain.log_dirs import UNKNOWN_VOLUME_BYTES, LogDirUsage
from trafka.domain.ports import PartitionLog
from trafka.domain.topics import Topic, TopicPartition

from .fileio import LogDirHealth
from .layout import LOG_START_CHECKPOINT, RECOVERY_POINT_CHECKPOINT, LogDir, parse_partition_dir
from .partition_log import FilePartitionLog, LogConfig, read_partition_metadata, write_partition_metadata

log = logging.getLogger("trafka.storage")


def log_config(
    configs: Mapping[str, str], flush_messages: int | None = None, defaults: Mapping[str, str] | None = None
) -> LogConfig:
    """A partition's settings: the topic's configs, else the broker's `defaults`, else Kafka's."""
    defaults = defaults or {}

    def value(name: str) -> int:
        return int(configs.get(name, defaults.get(name, TOPIC_CONFIG_DEFAULTS[name][0])))

    return LogConfig(
        segment_bytes=segment_size(configs, value("segment.bytes")),
        segment_ms=value("segment.ms"),
        index_interval_bytes=value("index.interval.bytes"),
        flush_messages=value("flush.messages") if flush_messages is None else flush_messages,
        flush_ms=value("flush.ms"),
    )


CLEANER_CHECKPOINT = "cleaner-offset-checkpoint"


class FileCleanerCheckpoints:
    """`cleaner-offset-checkpoint` in the log dir: each compacted partition's first dirty offset, in
    the format of Kafka's other offset checkpoints (LogCleanerManager.offsetCheckpointFile)."""

    def __init__(self, logdir: LogDir) -> None:
        self._logdir = logdir

    def read(self) -> dict[TopicPartition, int]:
        return self._logdir.read_checkpoint(CLEANER_CHECKPOINT)

    def write(self, offsets: Mapping[TopicPartition, int]) -> None:
        self._logdir.write_checkpoint(CLEANER_CHECKPOINT, dict(offsets))


class FileLogStore:
    def __init__(
        self,
        logdir: LogDir,
        checksum: Callable[[memoryview], int],
        clock_ms: Callable[[], int],
        flush_messages: int | None = None,
        topic_defaults: Mapping[str, str] | None = None,
    ) -> None:
        self.logdir = logdir
        self._topic_defaults = dict(topic_defaults or {})
        self._checksum = checksum
        self._clock_ms = clock_ms
        self._flush_messages = flush_messages
        self._logs: dict[TopicPartition, FilePartitionLog] = {}
        self._configs: dict[TopicPartition, Mapping[str, str]] = {}  # each open log's own topic configs
        self.health = LogDirHealth(logdir.path)
        clean = logdir.clean_shutdown
        self._recovery_points = logdir.read_checkpoint(RECOVERY_POINT_CHECKPOINT) if clean else {}
        self._log_starts = logdir.read_checkpoint(LOG_START_CHECKPOINT)
        self._roll_observer: Callable[[TopicPartition, PartitionLog, int], None] | None = None

    def _open(self, tp: TopicPartition, configs: Mapping[str, str]) -> FilePartitionLog:
        path = self.logdir.partition_path(tp)
        partition_log = FilePartitionLog(
            path,
            log_config(configs, self._flush_messages, self._topic_defaults),
            self._checksum,
            self._clock_ms,
            log_start_offset=self._log_starts.get(tp, 0),
            on_log_start_moved=self._write_log_starts,
            health=self.health,
        )
        partition_log.open(self._recovery_points.get(tp))
        self._observe(tp, partition_log)
        if partition_log.truncated_bytes:
            log.warning(
                "recovered %s: truncated %d bytes of incomplete or corrupt batches; the log now ends at %d",
                tp,
                partition_log.truncated_bytes,
                partition_log.log_end_offset,
            )
        self._logs[tp] = partition_log
        self._configs[tp] = configs
        return partition_log

    def create(self, tp: TopicPartition, topic: Topic) -> FilePartitionLog:
        if tp in self._logs:
            raise ValueError(f"{tp} is already open")
        path = self.logdir.partition_path(tp)
        if os.path.exists(path):  # a leftover of a deleted topic is never reused
            log.warning("removing stray log dir %s before creating %s", path, tp)
            shutil.rmtree(path)
        self._log_starts.pop(tp, None)
        os.makedirs(path)
        write_partition_metadata(path, topic.topic_id)
        return self._open(tp, topic.configs)

    def open(self, tp: TopicPartition, topic: Topic) -> FilePartitionLog:
        if tp in self._logs:
            return self._logs[tp]
        path = self.logdir.partition_path(tp)
        if not os.path.isdir(path):
            return self.create(tp, topic)
        on_disk = read_partition_metadata(path)
        if on_disk is not None and on_disk != topic.topic_id:  # another (deleted) topic's data
            return self.create(tp, topic)
        if on_disk is None:  # missing or unreadable: the data is this topic's, the file is rewritten
            write_partition_metadata(path, topic.topic_id)
        return self._open(tp, topic.configs)

    def remove_stray(self, removed_topic_ids: set[uuid.UUID]) -> None:
        """Delete partition dirs of topics the metadata log records as deleted (a crash between the
        RemoveTopicRecord and the deletion leaves them). Anything else unknown is kept: a log dir Kafka
        wrote may hold partitions trafka does not open (more `__consumer_offsets` partitions, topics
        only in a KRaft snapshot), and deleting data on a guess is worse than leaving it."""
        for name in os.listdir(self.logdir.path):
            tp = parse_partition_dir(name)
            path = os.path.join(self.logdir.path, name)
            if tp is None or tp in self._logs or not os.path.isdir(path):
                continue
            if read_partition_metadata(path) in removed_topic_ids:
                log.warning("removing log dir %s of a deleted topic", path)
                shutil.rmtree(path)

    def observe_rolls(self, observer: Callable[[TopicPartition, PartitionLog, int], None]) -> None:
        self._roll_observer = observer
        for tp, partition_log in self._logs.items():
            self._observe(tp, partition_log)

    def _observe(self, tp: TopicPartition, partition_log: FilePartitionLog) -> None:
        observer = self._roll_observer
        if observer is not None:
            partition_log.on_roll = lambda base_offset: observer(tp, partition_log, base_offset)

    def get(self, tp: TopicPartition) -> FilePartitionLog | None:
        return self._logs.get(tp)

    def reconfigure(self, tp: TopicPartition, topic: Topic) -> None:
        if tp in self._logs:
            self._configs[tp] = topic.configs
            self._logs[tp].reconfigure(log_config(topic.configs, self._flush_messages, self._topic_defaults))

    def set_topic_defaults(self, defaults: Mapping[str, str]) -> None:
        """The broker's topic defaults changed (its dynamic configs, read at start or altered): every
        open log takes them where its own configs set nothing, as Kafka's
        LogManager.reconfigureDefaultLogConfig does. The coordinators' logs too: their topics are not
        the catalog's, whose partitions alone are reconfigured one by one (ADR 120: flush.ms)."""
        self._topic_defaults = dict(defaults)
        for tp, partition_log in self._logs.items():
            partition_log.reconfigure(log_config(self._configs[tp], self._flush_messages, self._topic_defaults))

    def delete(self, tp: TopicPartition) -> None:
        self._log_starts.pop(tp, None)
        self._configs.pop(tp, None)
        partition_log = self._logs.pop(tp, None)
        if partition_log is not None:
            partition_log.close()
        shutil.rmtree(self.logdir.partition_path(tp), ignore_errors=True)

    def log_dir(self) -> LogDirUsage:
        """The log dir's absolute path and directory id, and its filesystem's size and the bytes a
        non-root user may still write (Kafka's File.getTotalSpace/getUsableSpace), unknown if
        statvfs fails; offline once a write failed."""
        try:
            stat = os.statvfs(self.logdir.path)
        except OSError:
            total = usable = UNKNOWN_VOLUME_BYTES
        else:
            total, usable = stat.f_blocks * stat.f_frsize, stat.f_bavail * stat.f_frsize
        offline = self.health.offline is not None
        return LogDirUsage(self.logdir.path, self.logdir.meta.directory_id, total, usable, offline)

    def logs(self) -> Mapping[TopicPartition, FilePartitionLog]:
        return dict(self._logs)

    def maintain(self, now_ms: int) -> None:
        if self.health.offline is not None:
            return
        try:
            for partition_log in self._logs.values():
                partition_log.flush_if_due(now_ms)
        except OSError as exc:
            self.health.write_failed("a flush (flush.ms)", exc)

    def _write_log_starts(self) -> None:
        starts = dict(self._log_starts)
        starts.update({tp: pl.log_start_offset for tp, pl in self._logs.items()})
        self.logdir.write_checkpoint(LOG_START_CHECKPOINT, starts)

    def checkpoint(self) -> None:
        """Flush every log and record how far each is durable, and where each starts. A failure is
        the log dir's health's to report (disk full: retried at the next checkpoint)."""
        if self.health.offline is not None:
            return
        try:
            for partition_log in self._logs.values():
                partition_log.flush()
            self.logdir.write_checkpoint(
                RECOVERY_POINT_CHECKPOINT, {tp: pl.log_end_offset for tp, pl in self._logs.items()}
            )
            self._write_log_starts()
        except OSError as exc:
            self.health.write_failed("the recovery point checkpoint", exc)
            return
        self.health.write_succeeded()

    @property
    def clean(self) -> bool:
        """Whether everything written is on disk as the checkpoints say (no failed flush or offline)."""
        return self.health.offline is None and not self.health.full

    def close(self) -> None:
        self.checkpoint()
        for partition_log in self._logs.values():
            try:
                partition_log.close()
            except OSError as exc:  # a final index entry on a full or failed disk: rebuilt at the next start
                self.health.write_failed(f"the indexes of {os.path.basename(partition_log.directory)}", exc)
        self._logs.clear()
        self._configs.clear()
