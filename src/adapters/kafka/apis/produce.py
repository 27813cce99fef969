"""Produce (key 0): v3-13. Record batches validated (header, CRC32C) and appended with their offsets
patched in place; acks 0, 1 and -1. One-partition requests up to v12 take the connection's lane
(`answer_one_partition`, ADR 29), with the same answers and effects as `handle_produce`.

v12 is v11 on the wire; a transactional batch of v12+ adds its partition to the producer's transaction
(transactions V2, KIP-890 part 2, ADR 75), where v3-11 need it added by AddPartitionsToTxn first (a
partition that is not: TRANSACTION_ABORTABLE from v11, INVALID_TXN_STATE before). v13 names topics by id: each is resolved to its name first, as Kafka's KafkaApis
does, an unknown id answering its partitions UNKNOWN_TOPIC_ID; the response names topics by id.

Authorization: WRITE on the transactional id, if any, then WRITE per topic: refused topics answer
TOPIC_AUTHORIZATION_FAILED in their own entries and the others are served. A refusal answers every
partition with the error; with acks=0 Kafka sends nothing and closes the connection.

Version notes:
(v0-2 are advertised but refused, KAFKA-18659)
- v3: TransactionalId, record batches v2 only; v4: KAFKA_STORAGE_ERROR.
- v5: LogStartOffset in the response; v7: ZStandard batches (KIP-110).
- v8: RecordErrors and ErrorMessage (KIP-467).
- v9: flexible versions; v10: CurrentLeader and NodeEndpoints (KIP-951).
- v11: TRANSACTION_ABORTABLE; v12: the implicit AddPartitionsToTxn of transaction version 2 (KIP-890).
- v13: topics by id (UNKNOWN_TOPIC_ID, KIP-516).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.produce_admission import ProduceResult, first_batch_is_transactional
from trafka.domain.quotas import ClientQuotas, QuotaSensors, QuotaType
from trafka.domain.security import client_text
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import ProduceRequest, ProduceResponse

from ..api import NO_RESPONSE, CloseConnection, FastDecoder, KafkaApi, Lane, QuotaCharge
from ..connection.cluster import refuse_unless_leader
from ..observing import observed
from ..request_context import ClientInfo
from ..security.authorization import TXN_WRITE, Check, Checks
from ..security.partial import (
    TOPIC_REFUSED,
    TOPICS,
    PartialAnswer,
    Refused,
    as_message,
    extended,
    shallow,
)
from ..wire.fast_produce import MAX_VERSION as PRODUCE_MAX_VERSION
from ..wire.fast_produce import MIN_VERSION as PRODUCE_MIN_VERSION
from ..wire.fast_produce import OnePartition, ProduceRequestView, decode_one_partition, decode_produce
from ..wire.fast_produce import ProtocolError as ProduceProtocolError
from ..wire.fast_produce_answer import (
    PartitionAnswer,
    ProduceAnswer,
    TopicKey,
    encode_one_partition,
    encode_produce_response,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from trafka.domain.catalog import TopicCatalog
    from trafka.domain.ports import BrokerObserver
    from trafka.domain.replica_manager import ReplicaManager

    from ..runtime.purgatory import Purgatory


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    replicas: ReplicaManager
    clock_ms: Callable[[], int]
    appends: Purgatory
    observer: BrokerObserver


VERSIONS = (3, 13)
TOPIC_IDS_FROM = 13


def resolve_topic_ids(ctx: Uses, request: Any, version: int) -> None:
    """From v13, set each topic's name from its id ("" for an unknown one), before anything reads it."""
    if version < TOPIC_IDS_FROM:
        return
    for topic in request.topic_data or ():
        if not topic.name:
            found = ctx.catalog.by_id(topic.topic_id)
            topic.name = found.name if found is not None else ""


def _topic_names(request: Any, version: int, ctx: Any) -> list[str]:
    resolve_topic_ids(ctx, request, version)
    return [topic.name for topic in request.topic_data or () if topic.name]


def _has_transactional_batch(request: ProduceRequestView) -> bool:
    """Kafka's RequestUtils.hasTransactionalRecords: a partition's first batch is transactional."""
    return any(
        data.records is not None and first_batch_is_transactional(data.records)
        for topic in request.topic_data or ()
        for data in topic.partition_data or ()
    )


def handle_produce(ctx: Uses, request: ProduceRequestView, version: int, client: ClientInfo):
    acks, transactional_id = request.acks, request.transactional_id
    if transactional_id is None and _has_transactional_batch(request):
        # Kafka's handleProduceRequest: the whole request is refused (getErrorResponse), nothing appended
        if acks == 0:
            raise CloseConnection("transactional records without a transactional id (acks=0)")
        return ProduceAnswer(
            [
                (
                    topic.name,
                    [
                        (data.index, _NO_TRANSACTIONAL_ID, -1, -1, -1, _NO_TRANSACTIONAL_ID.message, ())
                        for data in topic.partition_data or ()
                    ],
                )
                for topic in request.topic_data or ()
            ]
        )
    now = ctx.clock_ms()
    produce = ctx.replicas.produce
    produced = ctx.observer.partition_produced
    valid_acks = acks in (0, 1, -1)
    appended: list[TopicPartition] = []
    failed = False
    by_id = version >= TOPIC_IDS_FROM
    if by_id:
        resolve_topic_ids(ctx, request, version)
    responses: list[tuple[TopicKey, list[PartitionAnswer]]] = []
    for topic in request.topic_data:  # type: ignore[union-attr]  # null only in a malformed request: it raises
        name = topic.name
        partitions: list[PartitionAnswer] = []
        for data in topic.partition_data:  # type: ignore[union-attr]  # likewise
            tp = TopicPartition(name, data.index)
            if not valid_acks:
                result = _INVALID_ACKS
            elif by_id and not name:
                result = _UNKNOWN_TOPIC_ID
            else:
                result = produce(tp, data.records, now, transactional_id, version)
            error = result.error
            if error is ErrorCode.NONE:
                appended.append(tp)
            else:
                failed = True
            records = data.records
            produced(name, error, result.records_count, len(records) if result.records_count and records else 0)
            partitions.append(
                (
                    data.index,
                    error,
                    result.base_offset,
                    result.log_append_time_ms,
                    result.log_start_offset,
                    result.message,
                    result.record_errors,
                )
            )
        key: TopicKey = topic.topic_id if by_id and topic.topic_id is not None else name
        responses.append((key, partitions))
    if appended:
        try:
            ctx.appends.notify(appended)  # a Fetch parked there is answered from the appended bytes (ADR 127)
        finally:
            ctx.replicas.forget_appended()
    if acks == 0:
        if failed:
            raise CloseConnection("acks=0 produce failed")
        return NO_RESPONSE
    return ProduceAnswer(responses)


_INVALID_ACKS = ProduceResult(ErrorCode.INVALID_REQUIRED_ACKS)
_UNKNOWN_TOPIC_ID = ProduceResult(ErrorCode.UNKNOWN_TOPIC_ID)
_NO_TRANSACTIONAL_ID = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


_new = tuple.__new__  # a named tuple built without its Python-level __new__ (one per request)


def answer_one_partition(ctx: Uses, requests: Sequence[OnePartition]) -> list[bytes]:
    """`handle_produce` and the responses' encoding for consecutive one-partition requests with acks
    1 or -1, without request or response objects: their framed responses, in order. The batches go
    through `ReplicaManager.produce_many` (one log write per partition). Byte for byte what the general
    path answers for each in turn, with the same effects on the logs, the observer and waiting
    fetches (`tests/unit/adapters/kafka/test_produce_lane.py`)."""
    if len(requests) == 1:
        return [answer_alone(ctx, requests[0])]
    # (partition, records, transactional id, version) of each: OnePartition is (version, correlation id,
    # acks, topic, index, records, transactional id)
    batches = [(_new(TopicPartition, (r[3], r[4])), r[5], r[6], r[0]) for r in requests]
    results = ctx.replicas.produce_many(batches, ctx.clock_ms())
    appended = [batch[0] for batch, result in zip(batches, results) if result[0] is ErrorCode.NONE]
    if appended:
        try:
            ctx.appends.notify(appended)  # a Fetch parked there is answered from the appended bytes (ADR 127)
        finally:
            ctx.replicas.forget_appended()
    observer = observed(ctx.observer)
    produced = observer.partition_produced if observer is not None else None
    responses: list[bytes] = []
    append = responses.append
    for request, result in zip(requests, results):
        version, correlation_id, _, topic, index, records, _ = request
        error, base_offset, append_time, start_offset, message, count, record_errors = result
        if produced is not None:
            produced(topic, error, count, len(records) if count and records else 0)
        if message is None and not record_errors and version >= 5:  # the common answer: one pack
            append(
                encode_one_partition(
                    version, correlation_id, topic, index, error, base_offset, append_time, start_offset
                )
            )
            continue
        append(
            encode_produce_response(
                version,
                correlation_id,
                ((topic, ((index, error, base_offset, append_time, start_offset, message, record_errors),)),),
            )
        )
    return responses


def answer_alone(ctx: Uses, request: OnePartition) -> bytes:
    """`answer_one_partition` for a group of one (a producer waiting for each answer): the same steps,
    without the group's lists (ADR 133); the lane's `answer_one`, called by the connection directly
    (ADR 135)."""
    version, correlation_id, _, topic, index, records, transactional_id = request
    tp = _new(TopicPartition, (topic, index))
    replicas = ctx.replicas
    result = replicas.produce(tp, records, ctx.clock_ms(), transactional_id, version)
    error, base_offset, append_time, start_offset, message, count, record_errors = result
    if error is ErrorCode.NONE:
        try:
            ctx.appends.notify((tp,))  # a Fetch parked there is answered from the appended bytes (ADR 127)
        finally:
            replicas.forget_appended()
    observer = observed(ctx.observer)
    if observer is not None:
        observer.partition_produced(topic, error, count, len(records) if count and records else 0)
    if message is None and not record_errors and version >= 5:  # the common answer: one pack
        return encode_one_partition(
            version, correlation_id, topic, index, error, base_offset, append_time, start_offset
        )
    return encode_produce_response(
        version,
        correlation_id,
        ((topic, ((index, error, base_offset, append_time, start_offset, message, record_errors),)),),
    )


def _refusal_entries(response_class: Any, request: Any, version: int, error: int) -> Any:
    topic_response = response_class.TopicProduceResponse
    partition_response = topic_response.PartitionProduceResponse
    return response_class(
        version=version,
        throttle_time_ms=0,
        responses=[
            topic_response(
                name=topic.name,
                topic_id=getattr(topic, "topic_id", None) if version >= TOPIC_IDS_FROM else None,
                partition_responses=[
                    partition_response(index=data.index, error_code=error, base_offset=-1, record_errors=[])
                    for data in topic.partition_data
                ],
            )
            for topic in request.topic_data
        ],
    )


def _partial(r: Refused) -> Any:
    denied = r.topics()
    if r.body.acks == 0:
        raise CloseConnection(
            f"{r.client.principal} may not write to {client_text(', '.join(sorted(denied)))} (acks=0)"
        )
    refused = [t for t in r.body.topic_data if t.name and t.name in denied]  # an unknown id is answered as such
    kept = [t for t in r.body.topic_data if t not in refused]
    failed = r.handler.refuse(shallow(r.body, topic_data=refused), r.version, TOPIC_REFUSED)
    if not kept:
        return failed
    return extended(r.serve(topic_data=kept), "responses", as_message(failed, r.version).responses, r.version)


def _refusal(api: KafkaApi, request: Any, version: int, error: int) -> Any | None:
    if request.acks == 0:  # Kafka has no response to send
        return None
    return _refusal_entries(api.response, request, version, error)


def _one_partition(frame: bytes) -> OnePartition | None:
    """A frame the lane answers: a one-partition Produce at a served version, acks 1 or -1."""
    if len(frame) < 2 or frame[0] or frame[1]:  # api key 0, read without a slice
        return None
    one = decode_one_partition(frame)
    if one is None or not _FIRST_VERSION <= one[0] <= _LAST_VERSION or one[2] not in (1, -1):  # version, acks
        return None
    return one


_FIRST_VERSION, _LAST_VERSION = VERSIONS


def _produced_partitions(body: Any, ctx: Uses) -> list[TopicPartition]:
    """The simulated cluster's leader check: every partition the request writes to."""
    return [
        TopicPartition(topic.name, partition.index)
        for topic in body.topic_data or ()
        for partition in topic.partition_data or ()
    ]


def _quota_use(
    sensors: QuotaSensors, request: Any, outcome: Any, user: str, client_id: str, percent: float, now: int
) -> QuotaCharge:
    """Client quotas, as KafkaApis: the records' bytes against producer_byte_rate (Kafka counts the
    whole request, a few dozen bytes more) and, unless acks=0, the handler's time against the request
    quota; the larger throttle wins."""
    produced = sum(
        len(data.records) for topic in request.topic_data or () for data in topic.partition_data or () if data.records
    )
    bandwidth = sensors.record(QuotaType.PRODUCE, user, client_id, produced, now)
    request_throttle = 0 if request.acks == 0 else sensors.record(QuotaType.REQUEST, user, client_id, percent, now)
    return QuotaCharge(outcome, QuotaType.PRODUCE, bandwidth, request_throttle)


def _lane_closed(quotas: ClientQuotas) -> bool:
    """The lane does no quota accounting: while a produce or request quota is set, the pipeline serves."""
    return quotas.throttles_produce


API = KafkaApi(
    ProduceRequest,
    ProduceResponse,
    VERSIONS,
    handle_produce,
    authorization=Checks((TXN_WRITE, Check(Res.TOPIC, Op.WRITE, _topic_names)), PartialAnswer(TOPICS, _partial)),
    refusal=_refusal,
    read_only=False,
    lane=Lane(_one_partition, answer_one_partition, closed_by=_lane_closed, answer_one=answer_alone),
    fast_decoder=FastDecoder((PRODUCE_MIN_VERSION, PRODUCE_MAX_VERSION), decode_produce, ProduceProtocolError),
    cluster=refuse_unless_leader(_produced_partitions),
    quota=_quota_use,
    advertised_min_version=0,  # v0-2 advertised, not served: the connection closes, as Kafka 4's
)
