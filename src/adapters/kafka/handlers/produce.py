"""Produce: validate and append each partition's record batches; answer per partition.

acks=0 gets no response at all, and, as in Kafka, a failed acks=0 produce closes the connection so the
client refreshes its metadata. acks other than 0, 1 and -1 is INVALID_REQUIRED_ACKS.
"""

from __future__ import annotations

from collections.abc import Sequence

from kafka.protocol.producer import ProduceRequest, ProduceResponse

from trafka.domain.errors import ErrorCode
from trafka.domain.replica_manager import ProduceResult
from trafka.domain.topics import TopicPartition

from ..api import NO_RESPONSE, CloseConnection, HandlerRegistry
from ..context import BrokerContext, ClientInfo
from ..wire.fast_produce import OnePartition, ProduceAnswer, ProduceRequestView, encode_produce_response

VERSIONS = (3, 11)


def handle_produce(ctx: BrokerContext, request: ProduceRequestView, version: int, client: ClientInfo):
    acks = request.acks
    now = ctx.clock_ms()
    produce = ctx.replicas.produce
    produced = ctx.observer.partition_produced
    valid_acks = acks in (0, 1, -1)
    appended: list[TopicPartition] = []
    failed = False
    responses = []
    for topic in request.topic_data:
        name = topic.name
        partitions = []
        for data in topic.partition_data:
            tp = TopicPartition(name, data.index)
            result = produce(tp, data.records, now) if valid_acks else _INVALID_ACKS
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
                )
            )
        responses.append((name, partitions))
    if appended:
        ctx.appends.notify(appended)
    if acks == 0:
        if failed:
            raise CloseConnection("acks=0 produce failed")
        return NO_RESPONSE
    return ProduceAnswer(responses)


_INVALID_ACKS = ProduceResult(ErrorCode.INVALID_REQUIRED_ACKS)
_new = tuple.__new__  # a named tuple built without its Python-level __new__ (one per request)


def answer_one_partition(ctx: BrokerContext, requests: Sequence[OnePartition]) -> list[bytes]:
    """`handle_produce` and the responses' encoding for consecutive one-partition requests with acks
    1 or -1, without request or response objects: their framed responses, in order. The batches go
    through `ReplicaManager.produce_many` (one log write per partition). Byte for byte what the general
    path answers for each in turn, with the same effects on the logs, the observer and waiting
    fetches (`tests/unit/test_produce_lane.py`)."""
    partitions = [_new(TopicPartition, (r.topic, r.index)) for r in requests]
    results = ctx.replicas.produce_many([(tp, r.records) for tp, r in zip(partitions, requests)], ctx.clock_ms())
    appended = [tp for tp, result in zip(partitions, results) if result.error is ErrorCode.NONE]
    if appended:
        ctx.appends.notify(appended)
    produced = ctx.observer.partition_produced
    responses = []
    for request, result in zip(requests, results):
        topic, records, error = request.topic, request.records, result.error
        produced(topic, error, result.records_count, len(records) if result.records_count and records else 0)
        responses.append(
            encode_produce_response(
                request.version,
                request.correlation_id,
                (
                    (
                        topic,
                        (
                            (
                                request.index,
                                error,
                                result.base_offset,
                                result.log_append_time_ms,
                                result.log_start_offset,
                                result.message,
                            ),
                        ),
                    ),
                ),
            )
        )
    return responses


def register(registry: HandlerRegistry) -> None:
    registry.register(ProduceRequest, ProduceResponse, VERSIONS, handle_produce)
