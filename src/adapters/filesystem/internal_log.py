"""An internal topic partition (`__cluster_metadata-0`, `__consumer_offsets-0`) holding records.

Records are written as ordinary record batches through the same partition log, segment and recovery
code as every topic, and fsynced before the write returns: this is the broker's own state.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence

from trafka.domain.batch import BatchHeader, assign_offsets, validate_batches
from trafka.domain.control import marker_batch
from trafka.domain.topics import Topic, TopicPartition

from .log_store import FileLogStore
from .metadata_records import build_batch, iter_records
from .partition_log import FilePartitionLog, read_partition_metadata

METADATA_TOPIC_ID = uuid.UUID(int=1)  # Kafka's fixed id for __cluster_metadata


class InternalLog:
    def __init__(
        self,
        logs: FileLogStore,
        tp: TopicPartition,
        topic_id: uuid.UUID,
        checksum: Callable[[memoryview], int],
        clock_ms: Callable[[], int],
        configs: Mapping[str, str] | None = None,
    ) -> None:
        """`configs`: the partition's topic configs (`segment.bytes` for `__consumer_offsets` and
        `__transaction_state`, Kafka's offsets.topic.segment.bytes and transaction.state.log.segment.bytes)."""
        self._checksum = checksum
        self._clock_ms = clock_ms
        self.log_tp = tp
        existing = read_partition_metadata(logs.logdir.partition_path(tp))  # keep the id it was created with
        self.topic_id = existing or topic_id
        self.configs = dict(configs or {})
        self.log: FilePartitionLog = logs.open(tp, Topic(tp.topic, self.topic_id, 1, self.configs))

    def append(
        self, records: Sequence[tuple[bytes | None, bytes | None]], producer_id: int = -1, producer_epoch: int = -1
    ) -> None:
        """Records in one batch; with a producer id, a transactional batch (decided by a later marker)."""
        if not records:
            return
        raw = build_batch(records, self._clock_ms(), producer_id, producer_epoch)
        self._append_raw(raw)

    def append_marker(self, producer_id: int, producer_epoch: int, commit: bool) -> None:
        self._append_raw(marker_batch(producer_id, producer_epoch, commit, self._clock_ms(), self._checksum))

    def _append_raw(self, raw: bytes) -> None:
        batches = validate_batches(raw, self._checksum, len(raw))
        headers = assign_offsets(batches, self.log.log_end_offset, 0, self._checksum)
        self.log.append(batches.buffer, headers)
        self.log.flush()

    def batches(self) -> Iterator[tuple[BatchHeader, bytes]]:
        """Every batch from the log start, with its header (transactional and control ones included)."""
        for segment in self.log.segments:
            for _, batch in segment.batches():
                header = BatchHeader.parse(batch)
                if header.last_offset >= self.log.log_start_offset:
                    yield header, batch

    def records(self) -> Iterator[tuple[int, bytes | None, bytes | None]]:
        for segment in self.log.segments:
            for _, batch in segment.batches():
                for offset, key, value in iter_records(batch):
                    if offset >= self.log.log_start_offset:
                        yield offset, key, value
