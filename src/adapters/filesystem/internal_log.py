"""An internal topic partition (`__cluster_metadata-0`, `__consumer_offsets-0`) holding records.

Records are written as ordinary record batches through the same partition log, segment and recovery
code as every topic. `__cluster_metadata` is fsynced before the write returns (Kafka's KRaft log
flushes each append); the coordinators' logs (`__consumer_offsets`, `__transaction_state`,
`__share_group_state`) follow the data partitions' flush policy, as Kafka's do (ADR 120): written to
the page cache before the answer (a killed broker loses nothing), fsynced by `flush.messages`,
`flush.ms` and a clean shutdown.

A coordinator's transactional batches (TxnOffsetCommit's offsets) are decided by the marker it writes
when the transaction ends; an abort goes into the aborted transaction index (`.txnindex`) as Kafka's
log does for every partition it appends a marker to, so a read_committed reader of the topic (Fetch,
ADR 108) is told to drop them. Each append is told to `appended`: a Fetch parked on the partition
wakes, as an append to any partition completes Kafka's delayed fetches.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence

from trafka.domain.batch import BatchHeader, Checksum, assign_offsets, validate_batches
from trafka.domain.control import AbortedTxn, marker_batch
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
        checksum: Checksum,
        clock_ms: Callable[[], int],
        configs: Mapping[str, str] | None = None,
        *,
        sync_appends: bool = False,
    ) -> None:
        """`configs`: the partition's topic configs (`segment.bytes` for `__consumer_offsets` and
        `__transaction_state`, Kafka's offsets.topic.segment.bytes and transaction.state.log.segment.bytes).
        `sync_appends`: fsync each append (the metadata log); else the store's flush policy applies."""
        self._sync_appends = sync_appends
        self._checksum = checksum
        self._clock_ms = clock_ms
        self.log_tp = tp
        existing = read_partition_metadata(logs.logdir.partition_path(tp))  # keep the id it was created with
        self.topic_id = existing or topic_id
        self.configs = dict(configs or {})
        self.log: FilePartitionLog = logs.open(tp, Topic(tp.topic, self.topic_id, 1, self.configs))
        # producer id -> the first offset of its open transaction here; read from the log when first needed
        self._open: dict[int, int] | None = None
        # Told after each append (the wiring wakes the Fetch requests parked on this partition, ADR 108).
        self.appended: Callable[[TopicPartition], None] = lambda tp: None

    def append(
        self, records: Sequence[tuple[bytes | None, bytes | None]], producer_id: int = -1, producer_epoch: int = -1
    ) -> None:
        """Records in one batch; with a producer id, a transactional batch (decided by a later marker)."""
        if not records:
            return
        raw = build_batch(records, self._clock_ms(), producer_id, producer_epoch)
        if producer_id >= 0:
            self._open_transactions().setdefault(producer_id, self.log.log_end_offset)
        self._append_raw(raw)

    def append_marker(self, producer_id: int, producer_epoch: int, commit: bool) -> None:
        """The marker ending the producer's transaction; an abort is indexed as Kafka's
        ProducerStateManager completes it: from the transaction's first offset to the marker's, with
        the last stable offset that follows (the next open transaction's first offset, else past it)."""
        open_transactions = self._open_transactions()
        first = open_transactions.pop(producer_id, None)
        marker = self._append_raw(marker_batch(producer_id, producer_epoch, commit, self._clock_ms(), self._checksum))
        if not commit and first is not None:
            stable = min(open_transactions.values(), default=marker + 1)
            self.log.record_aborted_transaction(AbortedTxn(producer_id, first, marker, stable))

    def _open_transactions(self) -> dict[int, int]:
        """The transactions begun here and not ended, from the batch headers the first time."""
        if self._open is None:
            self._open = {}
            for header in self.log.batch_headers(self.log.log_start_offset):
                if header.producer_id < 0 or not header.is_transactional:
                    continue
                if header.is_control:
                    self._open.pop(header.producer_id, None)
                else:
                    self._open.setdefault(header.producer_id, header.base_offset)
        return self._open

    def _append_raw(self, raw: bytes) -> int:
        """Append one batch; its base offset."""
        batches = validate_batches(raw, self._checksum, len(raw))
        headers = assign_offsets(batches, self.log.log_end_offset, 0, self._checksum)
        self.log.append(batches.buffer, headers)
        if self._sync_appends:
            self.log.flush()
        self.appended(self.log_tp)
        return headers[0].base_offset

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
