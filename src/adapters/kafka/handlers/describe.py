"""DescribeConfigs, DescribeCluster and DescribeTopicPartitions.

DescribeConfigs lists every topic config with its value and source (a topic override, or Kafka's
default), and the broker's static configs for its node id. DescribeTopicPartitions pages through
partitions with Kafka's cursor and per-response partition limit.
"""

from __future__ import annotations

from kafka.protocol.admin import (
    DescribeClusterRequest,
    DescribeClusterResponse,
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsResponse,
)

from trafka.domain.configs import ConfigEntry
from trafka.domain.errors import ErrorCode

from ..api import HandlerRegistry
from ..context import BrokerContext, ClientInfo
from .authorized import CLUSTER_OPERATIONS, TOPIC_OPERATIONS, as_bits, as_int32
from .metadata import LEADER_EPOCH

TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4
BROKER_LOGGER_RESOURCE = 8

ConfigsResult = DescribeConfigsResponse.DescribeConfigsResult
ConfigValue = ConfigsResult.DescribeConfigsResourceResult


def _config_value(entry: ConfigEntry, synonyms: bool) -> ConfigValue:
    return ConfigValue(
        name=entry.name,
        value=entry.value,
        read_only=entry.read_only,
        config_source=entry.source,
        is_sensitive=entry.is_sensitive,
        synonyms=(
            [ConfigValue.DescribeConfigsSynonym(name=entry.name, value=entry.value, source=entry.source)]
            if synonyms
            else []
        ),
        config_type=entry.config_type,
        documentation=None,
    )


def _describe_resource(ctx: BrokerContext, resource, synonyms: bool) -> ConfigsResult:
    keys = None if resource.configuration_keys is None else list(resource.configuration_keys)
    error, message, entries = ErrorCode.NONE, None, []
    if resource.resource_type == TOPIC_RESOURCE:
        topic = ctx.catalog.get(resource.resource_name)
        if topic is None:
            error, message = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {resource.resource_name} does not exist"
        else:
            entries = ctx.policy.describe_topic(topic.configs, keys)
    elif resource.resource_type == BROKER_RESOURCE:
        if resource.resource_name not in ("", str(ctx.policy.node_id)):
            error, message = ErrorCode.INVALID_REQUEST, f"Unexpected broker id {resource.resource_name}"
        else:
            entries = ctx.policy.describe(keys)
    elif resource.resource_type == BROKER_LOGGER_RESOURCE:
        if resource.resource_name != str(ctx.policy.node_id):
            error, message = ErrorCode.INVALID_REQUEST, f"Unexpected broker id {resource.resource_name}"
    else:
        error, message = ErrorCode.INVALID_REQUEST, f"Unsupported resource type {resource.resource_type}"
    return ConfigsResult(
        error_code=error,
        error_message=message,
        resource_type=resource.resource_type,
        resource_name=resource.resource_name,
        configs=[_config_value(e, synonyms) for e in entries],
    )


def handle_describe_configs(
    ctx: BrokerContext, request: DescribeConfigsRequest, version: int, client: ClientInfo
) -> DescribeConfigsResponse:
    return DescribeConfigsResponse(
        version=version,
        throttle_time_ms=0,
        results=[_describe_resource(ctx, r, request.include_synonyms) for r in request.resources],
    )


BROKERS_ENDPOINT = 1


def handle_describe_cluster(
    ctx: BrokerContext, request: DescribeClusterRequest, version: int, client: ClientInfo
) -> DescribeClusterResponse:
    node = ctx.policy.node_id
    if version >= 1 and request.endpoint_type != BROKERS_ENDPOINT:
        # As a Kafka broker: controller endpoints are asked of controllers (UNSUPPORTED_ENDPOINT_TYPE).
        return DescribeClusterResponse(
            version=version,
            throttle_time_ms=0,
            error_code=ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
            error_message="The broker does not support endpoint type " + str(request.endpoint_type),
            endpoint_type=BROKERS_ENDPOINT,
            cluster_id=ctx.policy.cluster_id,
            controller_id=node,
            brokers=[],
            authorized_operations=None,
        )
    return DescribeClusterResponse(
        version=version,
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        error_message=None,
        endpoint_type=BROKERS_ENDPOINT,
        cluster_id=ctx.policy.cluster_id,
        controller_id=node,
        brokers=[
            DescribeClusterResponse.DescribeClusterBroker(
                broker_id=node, host=client.advertised.host, port=client.advertised.port, rack=None, is_fenced=False
            )
        ],
        authorized_operations=as_bits(CLUSTER_OPERATIONS if request.include_cluster_authorized_operations else None),
    )


DtpTopic = DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponseTopic
DtpPartition = DtpTopic.DescribeTopicPartitionsResponsePartition


def handle_describe_topic_partitions(
    ctx: BrokerContext, request: DescribeTopicPartitionsRequest, version: int, client: ClientInfo
) -> DescribeTopicPartitionsResponse:
    node = ctx.policy.node_id
    if request.topics:
        names = sorted({t.name for t in request.topics})
    else:
        names = [t.name for t in ctx.catalog.topics()]
    cursor = request.cursor
    if cursor is not None:
        names = [n for n in names if n >= cursor.topic_name]
    limit = max(1, request.response_partition_limit)
    topics, next_cursor, remaining = [], None, limit
    for name in names:
        topic = ctx.catalog.get(name)
        if topic is None:
            topics.append(DtpTopic(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name=name, partitions=[]))
            continue
        first = cursor.partition_index if cursor is not None and name == cursor.topic_name else 0
        if remaining == 0:
            next_cursor = DescribeTopicPartitionsResponse.Cursor(topic_name=name, partition_index=first)
            break
        last = min(topic.partition_count, first + remaining)
        partitions = [
            DtpPartition(
                error_code=0,
                partition_index=p,
                leader_id=node,
                leader_epoch=LEADER_EPOCH,
                replica_nodes=[node],
                isr_nodes=[node],
                eligible_leader_replicas=[],
                last_known_elr=[],
                offline_replicas=[],
            )
            for p in range(first, last)
        ]
        remaining -= len(partitions)
        topics.append(
            DtpTopic(
                error_code=0,
                name=name,
                topic_id=topic.topic_id,
                is_internal=topic.is_internal,
                partitions=partitions,
                topic_authorized_operations=as_int32(TOPIC_OPERATIONS),
            )
        )
        if last < topic.partition_count:
            next_cursor = DescribeTopicPartitionsResponse.Cursor(topic_name=name, partition_index=last)
            break
    return DescribeTopicPartitionsResponse(version=version, throttle_time_ms=0, topics=topics, next_cursor=next_cursor)


def register(registry: HandlerRegistry) -> None:
    registry.register(DescribeConfigsRequest, DescribeConfigsResponse, (1, 4), handle_describe_configs)
    registry.register(DescribeClusterRequest, DescribeClusterResponse, (0, 2), handle_describe_cluster)
    registry.register(
        DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse, (0, 0), handle_describe_topic_partitions
    )
