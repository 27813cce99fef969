"""Partition logs in a Kafka log dir: the `LogStore` port on the filesystem.

Opening a partition after an unclean shutdown scans every segment past its recovery point, cuts a
torn tail and rebuilds the indexes; what was cut is logged. `close` flushes, writes the recovery
point and log start offset checkpoints and marks the shutdown clean.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable, Mapping

from domain.configs import TOPIC_CONFIG_DEFAULTS
from domain.topics import Topic, TopicPartition

from .layout import LOG_START_CHECKPOINT, RECOVERY_POINT_CHECKPOINT, LogDir, parse_partition_dir
from .partition_log import FilePartitionLog, LogConfig, read_partition_metadata, write_partition_metadata

log = logging.getLogger("trafka.storage")


def log_config(configs: Mapping[str, str], flush_messages: int | None = None) -> LogConfig:
    def value(name: str) -> int:
        return int(configs.get(name, TOPIC_CONFIG_DEFAULTS[name][0]))

    return LogConfig(
        segment_bytes=value("segment.bytes"),
        segment_ms=value("segment.ms"),
        index_interval_bytes=value("index.interval.bytes"),
        flush_messages=value("flush.messages") if flush_messages is None else flush_messages,
        flush_ms=value("flush.ms"),
    )


class FileLogStore:
    def __init__(
        self,
        logdir: LogDir,
        checksum: Callable[[memoryview], int],
        clock_ms: Callable[[], int],
        flush_messages: int | None = None,
    ) -> None:
        self.logdir = logdir
        self._checksum = checksum
        self._clock_ms = clock_ms
        self._flush_messages = flush_messages
        self._logs: dict[TopicPartition, FilePartitionLog] = {}
        clean = logdir.clean_shutdown
        self._recovery_points = logdir.read_checkpoint(RECOVERY_POINT_CHECKPOINT) if clean else {}
        self._log_starts = logdir.read_checkpoint(LOG_START_CHECKPOINT)

    def _open(self, tp: TopicPartition, configs: Mapping[str, str]) -> FilePartitionLog:
        path = self.logdir.partition_path(tp)
        partition_log = FilePartitionLog(
            path, log_config(configs, self._flush_messages), self._checksum, self._clock_ms,
            log_start_offset=self._log_starts.get(tp, 0),
            on_log_start_moved=self._write_log_starts,
        )
        partition_log.open(self._recovery_points.get(tp))
        if partition_log.truncated_bytes:
            log.warning(
                "recovered %s: truncated %d bytes of incomplete or corrupt batches; the log now ends at %d",
                tp, partition_log.truncated_bytes, partition_log.log_end_offset,
            )
        self._logs[tp] = partition_log
        return partition_log

    def create(self, tp: TopicPartition, topic: Topic) -> FilePartitionLog:
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
        on_disk = read_partition_metadata(path) if os.path.isdir(path) else None
        if on_disk != topic.topic_id:  # missing, or another topic's: start this partition afresh
            return self.create(tp, topic)
        return self._open(tp, topic.configs)

    def remove_stray(self) -> None:
        """Delete partition dirs that belong to no topic in the catalog (as Kafka does with stray logs)."""
        for name in os.listdir(self.logdir.path):
            tp = parse_partition_dir(name)
            path = os.path.join(self.logdir.path, name)
            if tp is not None and tp not in self._logs and os.path.isdir(path):
                log.warning("removing stray log dir %s: its topic is not in the metadata log", path)
                shutil.rmtree(path)

    def get(self, tp: TopicPartition) -> FilePartitionLog | None:
        return self._logs.get(tp)

    def reconfigure(self, tp: TopicPartition, topic: Topic) -> None:
        if tp in self._logs:
            self._logs[tp].reconfigure(log_config(topic.configs, self._flush_messages))

    def delete(self, tp: TopicPartition) -> None:
        self._log_starts.pop(tp, None)
        partition_log = self._logs.pop(tp, None)
        if partition_log is not None:
            partition_log.close()
        shutil.rmtree(self.logdir.partition_path(tp), ignore_errors=True)

    def logs(self) -> Mapping[TopicPartition, FilePartitionLog]:
        return dict(self._logs)

    def maintain(self, now_ms: int) -> None:
        for partition_log in self._logs.values():
            partition_log.flush_if_due(now_ms)

    def _write_log_starts(self) -> None:
        starts = dict(self._log_starts)
        starts.update({tp: pl.log_start_offset for tp, pl in self._logs.items()})
        self.logdir.write_checkpoint(LOG_START_CHECKPOINT, starts)

    def checkpoint(self) -> None:
        """Flush every log and record how far each is durable, and where each starts."""
        for partition_log in self._logs.values():
            partition_log.flush()
        self.logdir.write_checkpoint(
            RECOVERY_POINT_CHECKPOINT, {tp: pl.log_end_offset for tp, pl in self._logs.items()}
        )
        self._write_log_starts()

    def close(self) -> None:
        self.checkpoint()
        for partition_log in self._logs.values():
            partition_log.close()
        self._logs.clear()
