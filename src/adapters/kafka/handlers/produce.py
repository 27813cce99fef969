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
from ..registry import NO_RESPONSE, CloseConnection, HandlerRegistry

VERSIONS = (3, 11)

TopicResponse = ProduceResponse.TopicProduceResponse
PartitionResponse = TopicResponse.PartitionProduceResponse


def _partition_response(index: int, result: ProduceResult) -> PartitionResponse:
    return PartitionResponse(
        index=index,
        error_code=result.error,
        base_offset=result.base_offset,
        log_append_time_ms=result.log_append_time_ms,
        log_start_offset=result.log_start_offset,
        record_errors=[],
        error_message=result.message,
    )


def handle_produce(ctx: BrokerContext, request: ProduceRequest, version: int, client: ClientInfo):
    acks = request.acks
    now = ctx.clock_ms()
    appended: list[TopicPartition] = []
    failed = False
    responses = []
    for topic in request.topic_data:
        partitions = []
        for data in topic.partition_data:
            if acks not in (0, 1, -1):
                result = ProduceResult(ErrorCode.INVALID_REQUIRED_ACKS)
            else:
                result = ctx.replicas.produce(TopicPartition(topic.name, data.index), data.records, now)
            if result.error is ErrorCode.NONE:
                appended.append(TopicPartition(topic.name, data.index))
            size = len(data.records) if result.records_count and data.records else 0
            ctx.observer.partition_produced(topic.name, result.error, result.records_count, size)
            failed |= result.error is not ErrorCode.NONE
            partitions.append(_partition_response(data.index, result))
        responses.append(TopicResponse(name=topic.name, partition_responses=partitions))
    if appended:
        ctx.appends.notify(appended)
    if acks == 0:
        if failed:
            raise CloseConnection("acks=0 produce failed")
        return NO_RESPONSE
    return ProduceResponse(version=version, responses=responses, throttle_time_ms=0)


def register(registry: HandlerRegistry) -> None:
    registry.register(ProduceRequest, ProduceResponse, VERSIONS, handle_produce)
