"""Produce admission: everything a produce checks before it writes one partition's record set, and
the answer it gives when it refuses.

The checks run per batch, in Kafka's order: the partition is known, a transactional batch comes with
a transactional id (and the transaction coordinator's verification, KIP-890), exactly one valid v2
batch (size, CRC, timestamps), no control batch, the records' max timestamp when the first record has
none, keys on a compacted topic, and broker-side schema validation where a topic turns it on. A
topic's produce settings are worked out once per config mapping (`_ProduceRoute`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

from .batch import BatchHeader, Checksum, set_max_timestamp, validate_batches, validate_one_batch
from .batch_records import Decompress, keyless_record_indexes, records_max_timestamp
from .catalog import TopicCatalog
from .configs import BrokerPolicy
from .errors import ErrorCode, KafkaError
from .ports import LogStore, PartitionLog, SchemaIdLookup
from .schema_validation import SchemaValidation
from .topics import Topic, TopicPartition


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


def first_batch_is_transactional(records: bytes) -> bool:
    """Kafka's RequestUtils.hasTransactionalRecords for one partition: the first batch's transactional
    attribute (a v2 header's byte 22), read before anything is validated."""
    return len(records) >= _V2_HEADER_BYTES and records[16] == 2 and bool(records[22] & 0x10)


_NO_TRANSACTIONAL_ID = ProduceResult(
    ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, message=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.message
)


class Admitted(NamedTuple):
    """A batch that passed every check, ready to be placed in its log."""

    log: PartitionLog
    buffer: bytearray
    header: BatchHeader
    log_append_time: bool


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


def refused(log: PartitionLog, code: ErrorCode, message: str | None = None) -> ProduceResult:
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


def storage_error(exc: OSError) -> ProduceResult:
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


class ProduceAdmission:
    """What a topic's produce settings and the broker's rules allow of one partition's record set."""

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
        # Set by the transaction service: may a transactional batch of (transactional id, producer id, epoch)
        # go to tp, now, in a Produce of this version (v12+ adds tp to the transaction)?
        self.transaction_check: Callable[[str, int, int, TopicPartition, int, int], ErrorCode] | None = None
        # The schema registry that broker-side schema validation checks ids against (None: no registry).
        self.schema_ids = schema_ids
        self._routes: dict[str, _ProduceRoute] = {}

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

    def admit(
        self, tp: TopicPartition, records: bytes | None, now_ms: int, transactional_id: str | None, version: int
    ) -> ProduceResult | Admitted:
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
        route = self._route(topic)
        one = validate_one_batch(records, self._checksum, route.max_batch_bytes, now_ms + route.timestamp_after_max_ms)
        if one is None:  # not exactly one valid batch: the general validator names the fault
            if transactional_id is None and first_batch_is_transactional(records):
                return _NO_TRANSACTIONAL_ID  # before any validation, as Kafka's handleProduceRequest
            try:
                batches = validate_batches(
                    records, self._checksum, route.max_batch_bytes, now_ms, route.timestamp_after_max_ms
                )
            except KafkaError as error:
                return refused(log, error.code, error.message)
            if len(batches.headers) != 1:  # as Kafka: one batch per partition from v3 on
                return refused(log, ErrorCode.INVALID_RECORD, "a produce request carries one batch per partition")
            one = batches.buffer, batches.headers[0][1]
        buffer, header = one
        attributes = header.attributes
        if attributes & 0x10:  # transactional
            if transactional_id is None:  # the one batch is the first: refused before any other check, as above
                return _NO_TRANSACTIONAL_ID
            if attributes & 0x20:  # a control batch
                return refused(log, ErrorCode.INVALID_RECORD, "clients may not produce control batches")
            if self.transaction_check is None:
                return ProduceResult(ErrorCode.INVALID_TXN_STATE)
            verdict = self.transaction_check(
                transactional_id, header.producer_id, header.producer_epoch, tp, now_ms, version
            )
            if verdict is not ErrorCode.NONE:
                return ProduceResult(verdict)
        elif attributes & 0x20:  # a control batch
            return refused(log, ErrorCode.INVALID_RECORD, "clients may not produce control batches")
        if header.base_timestamp < 0 and not attributes & 0x08:
            # The first record has no timestamp (-1), as librdkafka's produce(..., timestamp=-1) sends: its
            # header's max timestamp cannot be trusted (librdkafka writes 0), so it is computed from the
            # records, as Kafka's LogValidator does for every batch. Retention then falls back to the
            # segment's last write for records without a timestamp instead of taking them as from 1970.
            try:
                largest = records_max_timestamp(buffer, self._decompress)
            except KafkaError as error:
                return refused(log, error.code, error.message)
            if largest != header.max_timestamp:
                header = set_max_timestamp(buffer, header, largest, self._checksum)
        if route.compacted:
            try:
                keyless = keyless_record_indexes(buffer, self._decompress)
            except KafkaError as error:
                return refused(log, error.code, error.message)
            if keyless:
                return _keyless_refusal(tp, keyless, log.log_start_offset)
        if route.schema_validation is not None:
            try:
                refusal = self._schema_refusal(route.schema_validation, buffer)
            except KafkaError as error:
                return refused(log, error.code, error.message)
            if refusal is not None:
                return refused(log, ErrorCode.INVALID_RECORD, refusal)
        return _new(Admitted, (log, buffer, header, route.log_append_time))

    def _schema_refusal(self, validation: SchemaValidation, batch: bytearray) -> str | None:
        """Broker-side schema validation of a topic that turns it on: None unless a record fails it."""
        if self.schema_ids is None:
            return "schema validation is on for this topic but the broker has no schema registry"
        return validation.refusal(batch, self._decompress, self.schema_ids)
