"""Produce: validate and append each partition's record batches; answer per partition.

acks=0 gets no response at all, and, as in Kafka, a failed acks=0 produce closes the connection so the
client refreshes its metadata. acks other than 0, 1 and -1 is INVALID_REQUIRED_ACKS.
"""

from __future__ import annotations

from kafka.protocol.producer import ProduceRequest, ProduceResponse

from trafka.domain.errors import ErrorCode
from trafka.domain.replica_manager import ProduceResult
from trafka.domain.topics import TopicPartition

from ..context import BrokerContext, ClientInfo
from ..fast_produce import ProduceAnswer, ProduceRequestView
from ..registry import NO_RESPONSE, CloseConnection, HandlerRegistry

VERSIONS = (3, 11)


def handle_produce(ctx: BrokerContext, request: ProduceRequestView, version: int, client: ClientInfo):
    acks = request.acks
    now = ctx.clock_ms()
    appended: list[TopicPartition] = []
    failed = False
    responses = []
    for topic in request.topic_data:
        partitions = []
        for data in topic.partition_data:
            tp = TopicPartition(topic.name, data.index)
            if acks not in (0, 1, -1):
                result = ProduceResult(ErrorCode.INVALID_REQUIRED_ACKS)
            else:
                result = ctx.replicas.produce(tp, data.records, now)
            if result.error is ErrorCode.NONE:
                appended.append(tp)
            size = len(data.records) if result.records_count and data.records else 0
            ctx.observer.partition_produced(topic.name, result.error, result.records_count, size)
            failed |= result.error is not ErrorCode.NONE
            partitions.append((
                data.index, result.error, result.base_offset, result.log_append_time_ms, result.log_start_offset,
                result.message,
            ))
        responses.append((topic.name, partitions))
    if appended:
        ctx.appends.notify(appended)
    if acks == 0:
        if failed:
            raise CloseConnection("acks=0 produce failed")
        return NO_RESPONSE
    return ProduceAnswer(responses)


def register(registry: HandlerRegistry) -> None:
    registry.register(ProduceRequest, ProduceResponse, VERSIONS, handle_produce)
