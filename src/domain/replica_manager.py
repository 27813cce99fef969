"""Appends to and reads from partition logs: the produce, fetch and list-offsets rules.

Named after Kafka's ReplicaManager, which does the same job on a broker. Everything here is
per batch or per partition: the produce path validates headers and CRCs and patches offsets in place,
the fetch path hands back the stored bytes. The one exception is opt-in: a topic with broker-side
schema validation has its records' schema ids checked (`schema_validation.py`). Time comes in as
`now_ms`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple

import attrs

from . import leader_epochs
from .batch import (
    BatchHeader,
    Checksum,
    assign_offsets,
    place_batch,
    set_max_timestamp,
    validate_batches,
    validate_one_batch,
)
from .batch_records import Decompress, keyless_record_indexes, record_timestamps, records_max_timestamp
from .catalog import TopicCatalog
from .compaction.rules import LastRecord
from .configs import BrokerPolicy
from .control import AbortedTxn, marker_batch
from .errors import ErrorCode, KafkaError
from .log_dirs import METADATA_PARTITION, LogDirUsage
from .ports import LogStore, PartitionLog, SchemaIdLookup
from .producers import PartitionProducerState, ProducerEntry
from .retention import SegmentInfo, active_segment_expired, retention_cut
from .schema_validation import SchemaValidation
from .topics import Topic, TopicPartition

LEADER_EPOCH = leader_epochs.LEADER_EPOCH
EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5
EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6


class ProduceResult(NamedTuple):
    """One partition's answer to a produce (a named tuple: one is built per produced partition)."""

    error: ErrorCode = ErrorCode.NONE
    base_offset: int = -1
    log_append_time_ms: int = -1
    log_start_offset: int = -1
    message: str | None = None
    records_count: int = 0  # records appended, from the batch header (0 for a duplicate)
    record_errors: tuple[tuple[int, str], ...] = ()  # (batch index, message) of each refused record, as Kafka's


_V2_HEADER_BYTES = 61


def _replay(log: PartitionLog, state: PartitionProducerState, from_offset: int) -> None:
    """Apply the batch headers from `from_offset` on to a partition's producer state."""
    for header in log.batch_headers(from_offset):
        if header.producer_id < 0 or header.base_offset < from_offset:
            continue
        if header.is_control:
            state.end_transaction(header.producer_id, header.producer_epoch, header.max_timestamp)
        else:
            state.record(header)


def first_batch_is_transactional(records: bytes) -> bool:
    """Kafka's RequestUtils.hasTransactionalRecords for one partition: the first batch's transactional
    attribute (a v2 header's byte 22), read before anything is validated."""
    return len(records) >= _V2_HEADER_BYTES and records[16] == 2 and bool(records[22] & 0x10)


_NO_TRANSACTIONAL_ID = ProduceResult(
    ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, message=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.message
)


class _Admitted(NamedTuple):
    """A batch that passed every check, ready to be placed in its log."""

    log: PartitionLog
    buffer: bytearray
    header: BatchHeader
    log_append_time: bool


class _PlacedGroup:
    """A partition's batches placed by one `produce_many`, appended together."""

    __slots__ = ("log", "next_offset", "indices", "buffers", "headers", "log_append_ms")

    def __init__(self, log: PartitionLog, next_offset: int) -> None:
        self.log = log
        self.next_offset = next_offset
        self.indices: list[int] = []
        self.buffers: list[bytearray] = []
        self.headers: list[BatchHeader] = []
        self.log_append_ms: list[int | None] = []

    def add(self, index: int, buffer: bytearray, placed: BatchHeader, log_append_ms: int | None) -> None:
        self.indices.append(index)
        self.buffers.append(buffer)
        self.headers.append(placed)
        self.log_append_ms.append(log_append_ms)
        self.next_offset = placed.base_offset + placed.last_offset_delta + 1


_new = tuple.__new__  # named tuples built per batch without their Python-level __new__


# Refusals Kafka's ReplicaManager answers without the partition's log start offset (its
# UNKNOWN_LOG_APPEND_INFO); every other refusal of a batch for a partition it hosts carries it.
_NO_LOG_START = frozenset(
    {
        ErrorCode.CORRUPT_MESSAGE,
        ErrorCode.MESSAGE_TOO_LARGE,
        ErrorCode.RECORD_LIST_TOO_LARGE,
        ErrorCode.KAFKA_STORAGE_ERROR,
    }
)


def _refused(log: PartitionLog, code: ErrorCode, message: str | None = None) -> ProduceResult:
    """A batch refused for a partition this broker hosts, answered as Kafka's appendToLocalLog does."""
    return ProduceResult(code, message=message, log_start_offset=-1 if code in _NO_LOG_START else log.log_start_offset)


def _keyless_refusal(tp: TopicPartition, keyless: list[int], log_start_offset: int) -> ProduceResult:
    """Kafka's answer to keyless records on a compacted topic: LogValidator.validateKey's RecordError
    for each (batch index, message), all of them in the partition's `record_errors`, and
    processRecordErrors' INVALID_RECORD message showing the first three."""
    message = f"Compacted topic cannot accept message without key in topic partition {tp.topic}-{tp.partition}"
    shown = ", ".join(f"RecordError(batchIndex={index}, message='{message}')" for index in keyless[:3])
    return ProduceResult(
        ErrorCode.INVALID_RECORD,
        message=(
            f"One or more records have been rejected due to {len(keyless)} record errors in total, "
            f"and only showing the first three errors at most: [{shown}]"
        ),
        record_errors=tuple((index, message) for index in keyless),
        log_start_offset=log_start_offset,
    )


def _storage_error(exc: OSError) -> ProduceResult:
    return ProduceResult(ErrorCode.KAFKA_STORAGE_ERROR, message=f"the log could not be written: {exc}")


class _ProduceRoute(NamedTuple):
    """A topic's produce settings, valid while its configs are this very mapping."""

    configs: Mapping[str, str]
    defaults_version: int  # the dynamic broker configs' version it was worked out with
    max_batch_bytes: int
    timestamp_after_max_ms: int
    log_append_time: bool
    schema_validation: SchemaValidation | None
    compacted: bool  # cleanup.policy has compact: records without a key are refused


@attrs.frozen
class FetchResult:
    error: ErrorCode
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    records: bytes = b""
    aborted: tuple[AbortedTxn, ...] | None = None  # read_committed only


@attrs.frozen
class OffsetResult:
    error: ErrorCode = ErrorCode.NONE
    offset: int = -1
    timestamp: int = -1


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
        self._producer_states: dict[TopicPartition, tuple[PartitionLog, PartitionProducerState]] = {}
        # Set by the transaction service: may a transactional batch of (transactional id, producer id, epoch)
        # go to tp, now, in a Produce of this version (v12+ adds tp to the transaction)?
        self.transaction_check: Callable[[str, int, int, TopicPartition, int, int], ErrorCode] | None = None
        # The schema registry that broker-side schema validation checks ids against (None: no registry).
        self.schema_ids = schema_ids
        self._routes: dict[str, _ProduceRoute] = {}
        # Set by the wiring: the internal topic of that name if it exists (`__consumer_offsets` once a
        # group coordinator was looked for). Fetch, ListOffsets and OffsetForLeaderEpoch read its
        # partitions, as Kafka serves them to any client allowed to; nothing else here touches them.
        self.internal_topics: Callable[[str], Topic | None] = lambda name: None
        # Internal logs: their producer state and the offset it is read up to (never snapshotted here).
        self._internal_states: dict[TopicPartition, tuple[PartitionLog, PartitionProducerState, int]] = {}
        logs.observe_rolls(self._rolled)

    def _rolled(self, tp: TopicPartition, log: PartitionLog, base_offset: int) -> None:
        """A log started a new segment: its producer state as of the segment's base offset (every batch
        below it) goes to `<base offset>.snapshot`, as Kafka's UnifiedLog.roll takes its snapshot, so
        that a log dir has the snapshot files Kafka's would, and recovery replays one segment at most.
        The coordinators' topics (`__*`) are written by their stores, not through this manager: their
        state is replayed from the previous snapshot each time, never kept."""
        if tp.topic.startswith("__"):
            state = self._replayed(log)
        else:
            state = self._producer_state(tp, log)
        log.write_producer_snapshot(base_offset, state.snapshot())

    @property
    def checksum(self) -> Checksum:
        """The CRC-32C the broker checks and writes batches with (for writers of whole batches)."""
        return self._checksum

    @property
    def decompress(self) -> Decompress:
        """The broker's bounded inflater (ADR 69), for readers of whole records."""
        return self._decompress

    def _producer_state(self, tp: TopicPartition, log: PartitionLog) -> PartitionProducerState:
        """The partition's idempotent producers, rebuilt from batch headers the first time."""
        internal = self._internal_states.get(tp)
        if internal is not None and internal[0] is log:
            return internal[1]
        cached = self._producer_states.get(tp)
        if cached is not None and cached[0] is log:
            return cached[1]
        state = self._replayed(log)
        self._producer_states[tp] = (log, state)
        return state

    @staticmethod
    def _replayed(log: PartitionLog) -> PartitionProducerState:
        """The producer state of a log: its newest snapshot, then the batch headers after it."""
        state = PartitionProducerState()
        snapshot = log.latest_producer_snapshot()
        replay_from = 0
        if snapshot is not None:
            replay_from, entries = snapshot
            state.restore(entries)
        _replay(log, state, replay_from)
        return state

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
        known = self._internal_states.get(tp)
        state, replayed = (known[1], known[2]) if known is not None and known[0] is log else (None, 0)
        if state is None:
            state = PartitionProducerState()
        if replayed < log.log_end_offset:
            _replay(log, state, replayed)
        self._internal_states[tp] = (log, state, log.log_end_offset)
        return log

    def _route(self, topic: Topic) -> _ProduceRoute:
        """What produce needs from a topic's configs, worked out once per config mapping (a topic's
        configs are replaced, never changed in place, when altered), so a produce reads no config."""
        route = self._routes.get(topic.name)
        version = self._policy.dynamic.version
        if route is None or route.configs is not topic.configs or route.defaults_version != version:
            configs = topic.configs
            route = self._routes[topic.name] = _ProduceRoute(
                configs,
                version,
                self._policy.max_message_bytes(configs),
                int(configs.get("message.timestamp.after.max.ms", "3600000")),
                configs.get("message.timestamp.type") == "LogAppendTime",
                SchemaValidation.of(topic.name, configs) if configs else None,
                "compact" in self._policy.topic_config(configs, "cleanup.policy").split(","),
            )
        return route

    def produce(
        self,
        tp: TopicPartition,
        records: bytes | None,
        now_ms: int,
        transactional_id: str | None = None,
        version: int = 3,
    ) -> ProduceResult:
        """Append one partition's records of a Produce of `version` (the transaction rules depend on it)."""
        admitted = self._admit(tp, records, now_ms, transactional_id, version)
        if isinstance(admitted, ProduceResult):
            return admitted
        return self._append_one(tp, admitted, now_ms)

    def produce_many(
        self,
        requests: Sequence[tuple[TopicPartition, bytes | None]],
        now_ms: int,
        transactional_ids: Sequence[str | None] | None = None,
        versions: Sequence[int] | None = None,
    ) -> list[ProduceResult]:
        """`produce` for several record sets in order, with one log write per partition.

        The answers, and the log's bytes, are those of calling `produce` for each in turn: every batch
        is admitted (validated, checked) in order and placed at the next offset of its partition, and
        a partition's placed batches go to its log in one append. Batches of idempotent or
        transactional producers are appended one by one (their producer state is recorded after
        each write), after the placed batches of their partition that came before them. If a
        partition's append fails, every batch in it gets KAFKA_STORAGE_ERROR, as each would have.
        `transactional_ids` and `versions` are the requests' (None and 3 for all when not given)."""
        results: list[ProduceResult | None] = [None] * len(requests)
        groups: dict[TopicPartition, _PlacedGroup] = {}
        for i, (tp, records) in enumerate(requests):
            admitted = self._admit(
                tp, records, now_ms, transactional_ids[i] if transactional_ids else None, versions[i] if versions else 3
            )
            if isinstance(admitted, ProduceResult):
                results[i] = admitted
                continue
            header = admitted.header
            if header.producer_id >= 0:  # idempotent (or transactional): its state follows each write
                group = groups.pop(tp, None)
                if group is not None:
                    self._append_group(group, results, now_ms)
                results[i] = self._append_one(tp, admitted, now_ms)
                continue
            group = groups.get(tp)
            if group is None:
                group = groups[tp] = _PlacedGroup(admitted.log, admitted.log.log_end_offset)
                if group.next_offset == 0:
                    self._starts_empty(tp, admitted.log)
            log_append_ms = now_ms if admitted.log_append_time else None
            placed = place_batch(
                admitted.buffer, 0, header, group.next_offset, LEADER_EPOCH, self._checksum, log_append_ms
            )
            group.add(i, admitted.buffer, placed, log_append_ms)
        for group in groups.values():
            self._append_group(group, results, now_ms)
        # Every slot is filled: refused above, appended alone, or appended with its group just now.
        return results  # type: ignore[return-value]  # list[ProduceResult | None] with no None left

    def _admit(
        self, tp: TopicPartition, records: bytes | None, now_ms: int, transactional_id: str | None, version: int
    ) -> ProduceResult | _Admitted:
        """Everything produce checks before it writes: the refusal, or the batch to place.

        A transactional batch needs the request's transactional id (Kafka's handleProduceRequest answers
        TRANSACTIONAL_ID_AUTHORIZATION_FAILED without one), and that id's ongoing transaction must be the
        batch's producer's and hold the partition (KIP-890's verification)."""
        topic = self._catalog.get(tp.topic)
        log = None if topic is None or not 0 <= tp.partition < topic.partition_count else self._logs.get(tp)
        if topic is None or log is None:
            return ProduceResult(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if records is None:
            return ProduceResult(ErrorCode.CORRUPT_MESSAGE, message="null record set")
        if transactional_id is None and first_batch_is_transactional(records):
            return _NO_TRANSACTIONAL_ID  # before any validation, as Kafka's handleProduceRequest
        route = self._route(topic)
        one = validate_one_batch(records, self._checksum, route.max_batch_bytes, now_ms + route.timestamp_after_max_ms)
        if one is None:  # not exactly one valid batch: the general validator names the fault
            try:
                batches = validate_batches(
                    records, self._checksum, route.max_batch_bytes, now_ms, route.timestamp_after_max_ms
                )
            except KafkaError as error:
                return _refused(log, error.code, error.message)
            if len(batches.headers) != 1:  # as Kafka: one batch per partition from v3 on
                return _refused(log, ErrorCode.INVALID_RECORD, "a produce request carries one batch per partition")
            one = batches.buffer, batches.headers[0][1]
        buffer, header = one
        attributes = header.attributes
        if attributes & 0x20:  # a control batch
            return _refused(log, ErrorCode.INVALID_RECORD, "clients may not produce control batches")
        if attributes & 0x10:  # transactional
            if transactional_id is None:  # a batch the first-batch check above did not see
                return _NO_TRANSACTIONAL_ID
            if self.transaction_check is None:
                return ProduceResult(ErrorCode.INVALID_TXN_STATE)
            verdict = self.transaction_check(
                transactional_id, header.producer_id, header.producer_epoch, tp, now_ms, version
            )
            if verdict is not ErrorCode.NONE:
                return ProduceResult(verdict)
        if header.base_timestamp < 0 and not attributes & 0x08:
            # The first record has no timestamp (-1), as librdkafka's produce(..., timestamp=-1) sends: its
            # header's max timestamp cannot be trusted (librdkafka writes 0), so it is computed from the
            # records, as Kafka's LogValidator does for every batch. Retention then falls back to the
            # segment's last write for records without a timestamp instead of taking them as from 1970.
            try:
                largest = records_max_timestamp(buffer, self._decompress)
            except KafkaError as error:
                return _refused(log, error.code, error.message)
            if largest != header.max_timestamp:
                header = set_max_timestamp(buffer, header, largest, self._checksum)
        if route.compacted:
            try:
                keyless = keyless_record_indexes(buffer, self._decompress)
            except KafkaError as error:
                return _refused(log, error.code, error.message)
            if keyless:
                return _keyless_refusal(tp, keyless, log.log_start_offset)
        if route.schema_validation is not None:
            try:
                refusal = self._schema_refusal(route.schema_validation, buffer)
            except KafkaError as error:
                return _refused(log, error.code, error.message)
            if refusal is not None:
                return _refused(log, ErrorCode.INVALID_RECORD, refusal)
        return _new(_Admitted, (log, buffer, header, route.log_append_time))

    def _starts_empty(self, tp: TopicPartition, log: PartitionLog) -> None:
        """A log nothing was ever written to has no producers: remember that, so the first fetch
        (which asks for the last stable offset) need not scan every batch header appended since."""
        cached = self._producer_states.get(tp)
        if cached is None or cached[0] is not log:
            self._producer_states[tp] = (log, PartitionProducerState())

    def _append_one(self, tp: TopicPartition, admitted: _Admitted, now_ms: int) -> ProduceResult:
        log, buffer, header, log_append = admitted
        if log.log_end_offset == 0:
            self._starts_empty(tp, log)
        idempotent = header.producer_id >= 0
        if idempotent:
            try:
                duplicate = self._producer_state(tp, log).check(header)
            except KafkaError as error:
                return _refused(log, error.code, error.message)
            if duplicate is not None:  # a retry of a batch already appended: its original offsets
                return ProduceResult(
                    ErrorCode.NONE, base_offset=duplicate.first_offset, log_start_offset=log.log_start_offset
                )
        base_offset = log.log_end_offset
        placed = place_batch(
            buffer, 0, header, base_offset, LEADER_EPOCH, self._checksum, now_ms if log_append else None
        )
        try:
            log.append(buffer, (placed,))
        except OSError as exc:
            return _storage_error(exc)
        if idempotent:
            self._producer_state(tp, log).record(placed)
        return ProduceResult(
            ErrorCode.NONE, base_offset, now_ms if log_append else -1, log.log_start_offset, None, header.records_count
        )

    @staticmethod
    def _append_group(group: _PlacedGroup, results: list[ProduceResult | None], now_ms: int) -> None:
        buffers = group.buffers
        try:
            group.log.append(buffers[0] if len(buffers) == 1 else b"".join(buffers), group.headers)
        except OSError as exc:
            failed = _storage_error(exc)
            for i in group.indices:
                results[i] = failed
            return
        start = group.log.log_start_offset
        for i, header, log_append_ms in zip(group.indices, group.headers, group.log_append_ms):
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

    def _schema_refusal(self, validation: SchemaValidation, batch: bytearray) -> str | None:
        """Broker-side schema validation of a topic that turns it on: None unless a record fails it."""
        if self.schema_ids is None:
            return "schema validation is on for this topic but the broker has no schema registry"
        return validation.refusal(batch, self._decompress, self.schema_ids)

    def expire_producers(self, now_ms: int, expiration_ms: int) -> int:
        """producer.id.expiration.ms: forget idle producers in every partition; how many went."""
        return sum(state.expire(now_ms, expiration_ms) for _, state in self._producer_states.values())

    def snapshot_producers(self) -> None:
        """Write each partition's producer state as of its log end (at shutdown, as Kafka's UnifiedLog.close;
        the others are taken when a segment rolls, `_rolled`)."""
        for tp, (log, state) in list(self._producer_states.items()):
            if self._logs.get(tp) is log:  # an empty snapshot too: the next start need not scan
                log.write_producer_snapshot(log.log_end_offset, state.snapshot())

    def active_producers(self, tp: TopicPartition) -> list[ProducerEntry] | None:
        """DescribeProducers: the idempotent and transactional producers a partition knows."""
        log = self._log(tp)
        if log is None:
            return None
        return sorted(self._producer_state(tp, log).producers.values(), key=lambda p: p.producer_id)

    def last_records_of_active_producers(self, tp: TopicPartition, log: PartitionLog) -> dict[int, LastRecord]:
        """Each producer's last data offset (None if it has only markers) and epoch: the batches the
        cleaner keeps (Kafka's UnifiedLog.lastRecordsOfActiveProducers)."""
        return {
            pid: LastRecord(entry.batches[-1].last_offset if entry.batches else None, entry.epoch)
            for pid, entry in self._producer_state(tp, log).producers.items()
        }

    def last_stable_offset(self, tp: TopicPartition, log: PartitionLog) -> int:
        first_unstable = self._producer_state(tp, log).first_unstable_offset()
        return log.log_end_offset if first_unstable is None else first_unstable

    def fetch(
        self, tp: TopicPartition, offset: int, max_bytes: int, min_one_batch: bool, read_committed: bool = False
    ) -> FetchResult:
        """Stored batches from `offset`; read_committed stops at the last stable offset and lists the
        aborted transactions in the range, so the consumer can drop their records."""
        log = self._readable_log(tp)
        if log is None:
            return FetchResult(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        end = log.log_end_offset
        start = log.log_start_offset
        stable = self.last_stable_offset(tp, log)
        if offset < start or offset > end:
            return FetchResult(ErrorCode.OFFSET_OUT_OF_RANGE, end, stable, start)
        if not read_committed:
            records = log.read(offset, max_bytes, min_one_batch) if offset < end else b""
            return FetchResult(ErrorCode.NONE, end, stable, start, records)
        # The batches below the last stable offset (the first offset of the oldest open transaction, from
        # the producer state), cut by the log where it knows that offset's batch starts, and the aborted
        # transactions they overlap (from the transaction index): no batch header is read here (ADR 90).
        if offset >= stable:
            return FetchResult(ErrorCode.NONE, end, stable, start, b"", ())
        records, last = log.read_below(offset, max_bytes, min_one_batch, stable)
        aborted = tuple(log.aborted_transactions(offset, last)) if records else ()
        return FetchResult(ErrorCode.NONE, end, stable, start, records, aborted)

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
        state = self._producer_state(tp, log)
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
        try:
            if timestamp == MAX_TIMESTAMP:
                batch = log.batch_with_max_timestamp()
                if batch is None:
                    return OffsetResult()
                best = (-1, -1)
                for offset, ts in record_timestamps(batch, self._decompress):
                    if ts > best[1] and offset < limit:
                        best = (offset, ts)
                return OffsetResult(offset=best[0], timestamp=best[1])
            for batch in log.batches_from_timestamp(timestamp):
                for offset, ts in record_timestamps(batch, self._decompress):
                    if offset >= limit:
                        return OffsetResult()
                    if ts >= timestamp and offset >= log.log_start_offset:
                        return OffsetResult(offset=offset, timestamp=ts)
        except KafkaError as error:  # a batch that cannot be read back: a partition error, not a crash
            return OffsetResult(error.code)
        return OffsetResult()
