"""Appends to and reads from partition logs: the produce, fetch and list-offsets rules.

Named after Kafka's ReplicaManager, which does the same job on a broker. Everything here is
per batch or per partition: the produce path validates headers and CRCs (`produce_admission.py`) and
patches offsets in place, the fetch path hands back the stored bytes (`fetch_read.py`), cut at the
last stable offset that the partition's producers give (`producer_states.py`). The one exception is
opt-in: a topic with broker-side schema validation has its records' schema ids checked
(`schema_validation.py`). ListOffsets' search by timestamp is `offset_lookup.py`. Time comes in as
`now_ms`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from . import fetch_read, leader_epochs
from .batch import BatchHeader, Checksum, assign_offsets, place_batch, validate_batches
from .batch_records import Decompress
from .catalog import TopicCatalog
from .compaction.rules import LastRecord
from .configs import BrokerPolicy
from .control import AbortedTxn, marker_batch
from .errors import ErrorCode, KafkaError
from .fetch_read import Appended, FetchResult
from .log_dirs import METADATA_PARTITION, LogDirUsage
from .offset_lookup import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_PENDING_UPLOAD_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIERED_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    OffsetResult,
    offset_for_timestamp,
)
from .ports import LogStore, PartitionLog, SchemaIdLookup
from .produce_admission import Admitted, ProduceAdmission, ProduceResult, refused, storage_error
from .producer_states import ProducerStates
from .producers import ProducerEntry
from .retention import SegmentInfo, active_segment_expired, retention_cut
from .topics import Topic, TopicPartition

LEADER_EPOCH = leader_epochs.LEADER_EPOCH


class _PlacedGroup:
    """A partition's batches placed by one `produce_many`, appended together."""

    __slots__ = ("log", "next_offset", "indices", "buffers", "headers", "log_append_ms")

    def __init__(
        self, log: PartitionLog, index: int, buffer: bytearray, placed: BatchHeader, log_append_ms: int | None
    ):
        """The group of its first batch."""
        self.log = log
        self.indices: list[int] = [index]
        self.buffers: list[bytearray] = [buffer]
        self.headers: list[BatchHeader] = [placed]
        self.log_append_ms: list[int | None] = [log_append_ms]
        self.next_offset = placed.base_offset + placed.last_offset_delta + 1

    def add(self, index: int, buffer: bytearray, placed: BatchHeader, log_append_ms: int | None) -> None:
        self.indices.append(index)
        self.buffers.append(buffer)
        self.headers.append(placed)
        self.log_append_ms.append(log_append_ms)
        self.next_offset = placed.base_offset + placed.last_offset_delta + 1


_new = tuple.__new__  # named tuples built per batch without their Python-level __new__


class ReplicaManager:
    def __init__(
        self,
        catalog: TopicCatalog,
        logs: LogStore,
        policy: BrokerPolicy,
        checksum: Checksum,
        decompress: Decompress,
        schema_ids: SchemaIdLookup | None = None,
    ) -> None:
        self._catalog = catalog
        self._logs = logs
        self._policy = policy
        self._checksum = checksum
        self._decompress = decompress
        # What a produce checks before it writes (the transaction service sets its `transaction_check`).
        self.admission = ProduceAdmission(catalog, logs, policy, checksum, decompress, schema_ids)
        self._producers = ProducerStates()
        # Set by the wiring: the internal topic of that name if it exists (`__consumer_offsets` once a
        # group coordinator was looked for). Fetch, ListOffsets and OffsetForLeaderEpoch read its
        # partitions, as Kafka serves them to any client allowed to; nothing else here touches them.
        self.internal_topics: Callable[[str], Topic | None] = lambda name: None
        # Each partition's last append by a Produce, until its notify has completed the Fetches parked
        # there (`forget_appended`): they are answered from its bytes (ADR 127). A roll drops it.
        self._appended: dict[TopicPartition, Appended] = {}
        logs.observe_rolls(self._rolled)

    def _rolled(self, tp: TopicPartition, log: PartitionLog, base_offset: int) -> None:
        self._appended.pop(tp, None)
        self._producers.rolled(tp, log, base_offset)

    def forget_appended(self) -> None:
        """The appends' notify is over: their bytes are no longer kept for parked Fetches."""
        self._appended.clear()

    @property
    def checksum(self) -> Checksum:
        """The CRC-32C the broker checks and writes batches with (for writers of whole batches)."""
        return self._checksum

    @property
    def decompress(self) -> Decompress:
        """The broker's bounded inflater (ADR 69), for readers of whole records."""
        return self._decompress

    def _log(self, tp: TopicPartition) -> PartitionLog | None:
        if not self._catalog.has_partition(tp):
            return None
        return self._logs.get(tp)

    def _readable_log(self, tp: TopicPartition) -> PartitionLog | None:
        """A catalog partition's log, or an existing internal topic's (ADR 108). The coordinators append
        to internal logs directly, so their producer state is caught up here from where it was last read
        (the last stable offset of `__consumer_offsets` follows TxnOffsetCommit's open transactions). A
        store that keeps no internal logs (memory) reads them as empty."""
        log = self._log(tp)
        if log is not None:
            return log
        topic = self.internal_topics(tp.topic)
        if topic is None or not 0 <= tp.partition < topic.partition_count:
            return None
        log = self._logs.get(tp) or self._logs.open(tp, topic)
        self._producers.catch_up_internal(tp, log)
        return log

    def produce(
        self,
        tp: TopicPartition,
        records: bytes | None,
        now_ms: int,
        transactional_id: str | None = None,
        version: int = 3,
    ) -> ProduceResult:
        """Append one partition's records of a Produce of `version` (the transaction rules depend on it)."""
        admitted = self.admission.admit(tp, records, now_ms, transactional_id, version)
        if isinstance(admitted, ProduceResult):
            return admitted
        return self._append_one(tp, admitted, now_ms)

    def produce_many(
        self, requests: Sequence[tuple[TopicPartition, bytes | None, str | None, int]], now_ms: int
    ) -> list[ProduceResult]:
        """`produce` for several record sets in order, with one log write per partition: each request is
        (partition, records, the request's transactional id, its Produce version).

        The answers, and the log's bytes, are those of calling `produce` for each in turn: every batch
        is admitted (validated, checked) in order and placed at the next offset of its partition, and
        a partition's placed batches go to its log in one append. Batches of idempotent or
        transactional producers are appended one by one (their producer state is recorded after
        each write), after the placed batches of their partition that came before them. If a
        partition's append fails, every batch in it gets KAFKA_STORAGE_ERROR, as each would have."""
        if len(requests) == 1:  # a lone request (a producer waiting for each answer): `produce` itself
            tp, records, transactional_id, version = requests[0]
            admitted = self.admission.admit(tp, records, now_ms, transactional_id, version)
            return [admitted if isinstance(admitted, ProduceResult) else self._append_one(tp, admitted, now_ms)]
        results: list[ProduceResult | None] = [None] * len(requests)
        groups: dict[TopicPartition, _PlacedGroup] = {}
        admit = self.admission.admit
        for i, (tp, records, transactional_id, version) in enumerate(requests):
            admitted = admit(tp, records, now_ms, transactional_id, version)
            if isinstance(admitted, ProduceResult):
                results[i] = admitted
                continue
            log, buffer, header, log_append_time = admitted
            if header.producer_id >= 0:  # idempotent (or transactional): its state follows each write
                group = groups.pop(tp, None)
                if group is not None:
                    self._append_group(tp, group, results, now_ms)
                results[i] = self._append_one(tp, admitted, now_ms)
                continue
            log_append_ms = now_ms if log_append_time else None
            group = groups.get(tp)
            if group is None:
                offset = log.log_end_offset
                if offset == 0:
                    self._producers.starts_empty(tp, log)
                placed = place_batch(buffer, 0, header, offset, LEADER_EPOCH, self._checksum, log_append_ms)
                groups[tp] = _PlacedGroup(log, i, buffer, placed, log_append_ms)
                continue
            placed = place_batch(buffer, 0, header, group.next_offset, LEADER_EPOCH, self._checksum, log_append_ms)
            group.add(i, buffer, placed, log_append_ms)
        for tp, group in groups.items():
            self._append_group(tp, group, results, now_ms)
        # Every slot is filled: refused above, appended alone, or appended with its group just now.
        return results  # type: ignore[return-value]  # list[ProduceResult | None] with no None left

    def _append_one(self, tp: TopicPartition, admitted: Admitted, now_ms: int) -> ProduceResult:
        log, buffer, header, log_append = admitted
        base_offset = log.log_end_offset
        if base_offset == 0:
            self._producers.starts_empty(tp, log)
        idempotent = header.producer_id >= 0
        if idempotent:
            try:
                duplicate = self._producers.of(tp, log).check(header)
            except KafkaError as error:
                return refused(log, error.code, error.message)
            if duplicate is not None:  # a retry of a batch already appended: its original offsets
                return ProduceResult(
                    ErrorCode.NONE, base_offset=duplicate.first_offset, log_start_offset=log.log_start_offset
                )
        placed = place_batch(
            buffer, 0, header, base_offset, LEADER_EPOCH, self._checksum, now_ms if log_append else None
        )
        try:
            log.append(buffer, (placed,))
        except OSError as exc:
            return storage_error(exc)
        self._appended[tp] = _new(Appended, (log, base_offset, placed.next_offset, buffer, True))
        if idempotent:
            self._producers.of(tp, log).record(placed)
        return _new(
            ProduceResult,
            (
                ErrorCode.NONE,
                base_offset,
                now_ms if log_append else -1,
                log.log_start_offset,
                None,
                header.records_count,
                (),
            ),
        )

    def _append_group(
        self, tp: TopicPartition, group: _PlacedGroup, results: list[ProduceResult | None], now_ms: int
    ) -> None:
        buffers = group.buffers
        data = buffers[0] if len(buffers) == 1 else b"".join(buffers)
        try:
            group.log.append(data, group.headers)
        except OSError as exc:
            failed = storage_error(exc)
            for i in group.indices:
                results[i] = failed
            return
        headers = group.headers
        self._appended[tp] = _new(
            Appended, (group.log, headers[0].base_offset, group.next_offset, data, len(buffers) == 1)
        )
        start = group.log.log_start_offset
        for i, header, log_append_ms in zip(group.indices, headers, group.log_append_ms):
            results[i] = _new(
                ProduceResult,
                (
                    ErrorCode.NONE,
                    header.base_offset,
                    -1 if log_append_ms is None else log_append_ms,
                    start,
                    None,
                    header.records_count,
                    (),
                ),
            )

    def expire_producers(self, now_ms: int, expiration_ms: int) -> int:
        """producer.id.expiration.ms: forget idle producers in every partition; how many went."""
        return self._producers.expire(now_ms, expiration_ms)

    def snapshot_producers(self) -> None:
        """Write each partition's producer state as of its log end (at shutdown, as Kafka's UnifiedLog.close;
        the others are taken when a segment rolls, `ProducerStates.rolled`)."""
        self._producers.snapshot_all(self._logs)

    def active_producers(self, tp: TopicPartition) -> list[ProducerEntry] | None:
        """DescribeProducers: the idempotent and transactional producers a partition knows."""
        log = self._log(tp)
        if log is None:
            return None
        return sorted(self._producers.of(tp, log).producers.values(), key=lambda p: p.producer_id)

    def last_records_of_active_producers(self, tp: TopicPartition, log: PartitionLog) -> dict[int, LastRecord]:
        """Each producer's last data offset (None if it has only markers) and epoch: the batches the
        cleaner keeps (Kafka's UnifiedLog.lastRecordsOfActiveProducers)."""
        return {
            pid: LastRecord(entry.batches[-1].last_offset if entry.batches else None, entry.epoch)
            for pid, entry in self._producers.of(tp, log).producers.items()
        }

    def last_stable_offset(self, tp: TopicPartition, log: PartitionLog) -> int:
        first_unstable = self._producers.of(tp, log).first_unstable_offset()
        return log.log_end_offset if first_unstable is None else first_unstable

    def fetch(
        self, tp: TopicPartition, offset: int, max_bytes: int, min_one_batch: bool, read_committed: bool = False
    ) -> FetchResult:
        """Stored batches from `offset`; read_committed stops at the last stable offset and lists the
        aborted transactions in the range, so the consumer can drop their records."""
        log = self._logs.get(tp) if self._catalog.has_partition(tp) else None  # `_readable_log` inline (ADR 135)
        if log is None and (log := self._readable_log(tp)) is None:  # an internal topic's, or none
            return FetchResult(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        first_unstable = self._producers.of(tp, log).first_unstable_offset()  # `last_stable_offset` inline
        stable = log.log_end_offset if first_unstable is None else first_unstable
        appended = self._appended.get(tp) if self._appended else None
        return fetch_read.read(log, offset, max_bytes, min_one_batch, read_committed, stable, appended)

    def write_marker(
        self,
        tp: TopicPartition,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        now_ms: int,
        transaction_version: int | None = None,
    ) -> ErrorCode:
        """Append a transaction marker; an abort goes into the aborted transaction index.

        A marker someone else sends (WriteTxnMarkers) gives its `transaction_version` and is checked
        against the producer's epoch on the partition, as Kafka's ProducerAppendInfo.checkProducerEpoch
        does (KIP-1228): a transactions V2 marker carries the epoch bumped past the transaction's
        batches, so it must be newer than the partition's; an older version's may equal it. Otherwise
        INVALID_PRODUCER_EPOCH, nothing written. The coordinator's own markers (None) are not checked."""
        log = self._log(tp)
        if log is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        state = self._producers.of(tp, log)
        if transaction_version is not None:
            current = state.epoch(producer_id)
            if current is not None and (
                producer_epoch <= current if transaction_version >= 2 else producer_epoch < current
            ):
                return ErrorCode.INVALID_PRODUCER_EPOCH
        batch = marker_batch(producer_id, producer_epoch, commit, now_ms, self._checksum)
        validated = validate_batches(batch, self._checksum, len(batch))
        (header,) = assign_offsets(validated, log.log_end_offset, LEADER_EPOCH, self._checksum)
        log.append(validated.buffer, [header])
        first = state.end_transaction(producer_id, producer_epoch, now_ms)
        if not commit and first is not None:
            log.record_aborted_transaction(
                AbortedTxn(producer_id, first, header.base_offset, self.last_stable_offset(tp, log))
            )
        return ErrorCode.NONE

    def cleanup_policy(self, topic: Topic) -> str:
        """The topic's effective cleanup.policy (its own, else the broker's default)."""
        return self._policy.topic_config(topic.configs, "cleanup.policy")

    def watermarks(self, tp: TopicPartition) -> tuple[int, int] | None:
        """(log start offset, high watermark), or None for an unknown partition."""
        log = self._log(tp)
        if log is None:
            return None
        return log.log_start_offset, log.log_end_offset

    def segment_infos(self, tp: TopicPartition) -> list[SegmentInfo] | None:
        """The partition's segments (sizes, offsets, timestamps), oldest first; None if unknown."""
        log = self._log(tp)
        return None if log is None else log.segment_infos()

    def log_dir(self) -> LogDirUsage:
        """The one log dir every partition is in (DescribeLogDirs, AlterReplicaLogDirs, DescribeQuorum)."""
        return self._logs.log_dir()

    def partition_sizes(self, partitions: Iterable[TopicPartition] | None = None) -> dict[TopicPartition, int]:
        """Each partition's size in bytes, the sum of its segments' (Kafka's UnifiedLog.size), for
        `partitions` (every partition when None); unknown partitions are left out."""
        wanted = (
            [TopicPartition(t.name, p) for t in self._catalog.topics() for p in range(t.partition_count)]
            if partitions is None
            else partitions
        )
        sizes: dict[TopicPartition, int] = {}
        for tp in wanted:
            log = self._log(tp)
            if log is not None:
                sizes[tp] = sum(segment.size for segment in log.segment_infos())
        return sizes

    def metadata_log_end_offset(self) -> int:
        """The end offset of the KRaft metadata log (`__cluster_metadata`-0) where the store keeps one,
        else 0: DescribeQuorum's high watermark on a single voter."""
        log = self._logs.get(METADATA_PARTITION)
        return 0 if log is None else log.log_end_offset

    def end_offset_for_epoch(
        self, tp: TopicPartition, current_leader_epoch: int, leader_epoch: int
    ) -> tuple[ErrorCode, int, int]:
        """OffsetForLeaderEpoch on the leader (Kafka's Partition.lastOffsetForLeaderEpoch): the current
        epoch the client knows checked against this broker's (-1: not checked), then (error, epoch, end
        offset) of `leader_epoch` from the partition's leader epochs."""
        log = self._readable_log(tp)
        if log is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1
        if current_leader_epoch != -1 and current_leader_epoch < LEADER_EPOCH:
            return ErrorCode.FENCED_LEADER_EPOCH, -1, -1
        if current_leader_epoch > LEADER_EPOCH:
            return ErrorCode.UNKNOWN_LEADER_EPOCH, -1, -1
        epoch, offset = leader_epochs.end_offset_for(log.leader_epoch_entries(), leader_epoch, log.log_end_offset)
        return ErrorCode.NONE, epoch, offset

    def delete_records(self, tp: TopicPartition, offset: int) -> OffsetResult:
        """DeleteRecords: move the log start offset up to `offset` (-1: the high watermark)."""
        log = self._log(tp)
        if log is None:
            return OffsetResult(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if offset == -1:
            offset = log.log_end_offset
        if offset < 0 or offset > log.log_end_offset:
            return OffsetResult(ErrorCode.OFFSET_OUT_OF_RANGE)
        log.advance_log_start_offset(offset)
        leader_epochs.log_start_moved(log)
        return OffsetResult(offset=log.log_start_offset)

    def enforce_retention(self, now_ms: int) -> dict[TopicPartition, int]:
        """Delete whole segments past retention.ms / retention.bytes; the new log start per partition."""
        moved = {}
        for topic in self._catalog.topics():
            retention_ms = int(self._policy.topic_config(topic.configs, "retention.ms"))
            retention_bytes = int(self._policy.topic_config(topic.configs, "retention.bytes"))
            if "delete" not in self._policy.topic_config(topic.configs, "cleanup.policy"):
                continue
            for tp in topic.topic_partitions():
                log = self._logs.get(tp)
                if log is None:
                    continue
                if active_segment_expired(log.segment_infos(), retention_ms, now_ms):
                    log.roll()
                cut = retention_cut(log.segment_infos(), retention_ms, retention_bytes, now_ms)
                if cut is not None:
                    log.delete_segments_before(cut)
                    leader_epochs.log_start_moved(log)
                    moved[tp] = log.log_start_offset
        return moved

    def list_offset(self, tp: TopicPartition, timestamp: int, read_committed: bool = False) -> OffsetResult:
        log = self._readable_log(tp)
        if log is None:
            return OffsetResult(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            return OffsetResult(offset=log.log_start_offset)
        if timestamp == LATEST_TIMESTAMP:
            return OffsetResult(offset=self.last_stable_offset(tp, log) if read_committed else log.log_end_offset)
        if timestamp in (LATEST_TIERED_TIMESTAMP, EARLIEST_PENDING_UPLOAD_TIMESTAMP):
            return OffsetResult()  # no tiered storage: nothing uploaded, nothing pending (Kafka's -1, -1)
        if timestamp < 0 and timestamp != MAX_TIMESTAMP:
            return OffsetResult(ErrorCode.INVALID_REQUEST)
        limit = self.last_stable_offset(tp, log) if read_committed else log.log_end_offset
        return offset_for_timestamp(log, timestamp, limit, self._decompress)
