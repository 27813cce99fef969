"""IncrementalAlterConfigs and AlterConfigs (topic configs), DeleteRecords (move a log start offset)."""

from __future__ import annotations

from kafka.protocol.admin import (
    AlterConfigsRequest,
    AlterConfigsResponse,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)

from trafka.domain.catalog import AlterOp
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.topics import TopicPartition

from ..api import HandlerRegistry
from ..context import BrokerContext, ClientInfo
from .describe import BROKER_RESOURCE, TOPIC_RESOURCE

AlterResult = IncrementalAlterConfigsResponse.AlterConfigsResourceResponse


def _alter_one(ctx: BrokerContext, resource, validate_only: bool) -> tuple[ErrorCode, str | None]:
    if resource.resource_type == BROKER_RESOURCE:
        return ErrorCode.INVALID_REQUEST, "Broker configs are static in trafka; set them in its configuration"
    if resource.resource_type != TOPIC_RESOURCE:
        return ErrorCode.INVALID_REQUEST, f"Unsupported resource type {resource.resource_type}"
    names = [c.name for c in resource.configs]
    if len(names) != len(set(names)):
        return ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys"
    try:
        changes = {c.name: (AlterOp(c.config_operation), c.value) for c in resource.configs}
    except ValueError:
        return ErrorCode.INVALID_REQUEST, "Unknown config operation"
    try:
        ctx.catalog.alter_configs(resource.resource_name, changes, validate_only)
    except KafkaError as error:
        return error.code, error.message
    return ErrorCode.NONE, None


def _replace_one(ctx: BrokerContext, resource, validate_only: bool) -> tuple[ErrorCode, str | None]:
    if resource.resource_type != TOPIC_RESOURCE:
        return ErrorCode.INVALID_REQUEST, "Only topic configs can be altered; broker configs are static in trafka"
    try:
        ctx.catalog.replace_configs(resource.resource_name, {c.name: c.value for c in resource.configs}, validate_only)
    except KafkaError as error:
        return error.code, error.message
    return ErrorCode.NONE, None


def handle_alter_configs(
    ctx: BrokerContext, request: AlterConfigsRequest, version: int, client: ClientInfo
) -> AlterConfigsResponse:
    responses = []
    for resource in request.resources:
        error, message = _replace_one(ctx, resource, request.validate_only)
        responses.append(
            AlterConfigsResponse.AlterConfigsResourceResponse(
                error_code=error,
                error_message=message,
                resource_type=resource.resource_type,
                resource_name=resource.resource_name,
            )
        )
    return AlterConfigsResponse(version=version, throttle_time_ms=0, responses=responses)


def handle_incremental_alter_configs(
    ctx: BrokerContext, request: IncrementalAlterConfigsRequest, version: int, client: ClientInfo
) -> IncrementalAlterConfigsResponse:
    responses = []
    for resource in request.resources:
        error, message = _alter_one(ctx, resource, request.validate_only)
        responses.append(
            AlterResult(
                error_code=error,
                error_message=message,
                resource_type=resource.resource_type,
                resource_name=resource.resource_name,
            )
        )
    return IncrementalAlterConfigsResponse(version=version, throttle_time_ms=0, responses=responses)


DeleteTopic = DeleteRecordsResponse.DeleteRecordsTopicResult


def handle_delete_records(
    ctx: BrokerContext, request: DeleteRecordsRequest, version: int, client: ClientInfo
) -> DeleteRecordsResponse:
    topics = []
    for topic in request.topics:
        partitions = []
        for part in topic.partitions:
            result = ctx.replicas.delete_records(TopicPartition(topic.name, part.partition_index), part.offset)
            partitions.append(
                DeleteTopic.DeleteRecordsPartitionResult(
                    partition_index=part.partition_index, low_watermark=result.offset, error_code=result.error
                )
            )
        topics.append(DeleteTopic(name=topic.name, partitions=partitions))
    return DeleteRecordsResponse(version=version, throttle_time_ms=0, topics=topics)


def register(registry: HandlerRegistry) -> None:
    registry.register(
        IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse, (0, 1), handle_incremental_alter_configs
    )
    registry.register(DeleteRecordsRequest, DeleteRecordsResponse, (0, 2), handle_delete_records)
    registry.register(AlterConfigsRequest, AlterConfigsResponse, (0, 2), handle_alter_configs)
