"""Metadata: brokers, controller, cluster id and topics, auto-creating topics where allowed.

This broker leads every partition (a single-node cluster), so leader, replicas and ISR are all its
node id. A null topic list (an empty one before v1) asks for every topic.
"""

from __future__ import annotations

from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.topics import ZERO_UUID, Topic, is_internal_topic, validate_topic_name

from ..api import HandlerRegistry
from ..context import BrokerContext, ClientInfo
from .authorized import CLUSTER_OPERATIONS, TOPIC_OPERATIONS, as_bits

VERSIONS = (0, 13)
LEADER_EPOCH = 0

Partition = MetadataResponse.MetadataResponseTopic.MetadataResponsePartition


def topic_entry(ctx: BrokerContext, topic: Topic, operations=None) -> MetadataResponse.MetadataResponseTopic:
    node = ctx.policy.node_id
    return MetadataResponse.MetadataResponseTopic(
        error_code=ErrorCode.NONE,
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=topic.is_internal,
        authorized_operations=as_bits(operations),
        partitions=[
            Partition(
                error_code=ErrorCode.NONE,
                partition_index=p,
                leader_id=node,
                leader_epoch=LEADER_EPOCH,
                replica_nodes=[node],
                isr_nodes=[node],
                offline_replicas=[],
            )
            for p in topic.partitions
        ],
    )


def error_entry(name: str | None, code: ErrorCode, topic_id=None) -> MetadataResponse.MetadataResponseTopic:
    return MetadataResponse.MetadataResponseTopic(
        error_code=code, name=name, topic_id=topic_id or ZERO_UUID, is_internal=False, partitions=[]
    )


def _requested_topic(ctx: BrokerContext, name: str | None, topic_id, auto_create: bool, operations=None):
    if not name:
        if topic_id is not None and topic_id != ZERO_UUID:
            topic = ctx.catalog.by_id(topic_id)
            if topic is None:
                return error_entry(None, ErrorCode.UNKNOWN_TOPIC_ID, topic_id)
            return topic_entry(ctx, topic, operations)
        return error_entry(name, ErrorCode.INVALID_TOPIC_EXCEPTION)
    topic = ctx.catalog.get(name)
    if topic is not None:
        return topic_entry(ctx, topic, operations)
    try:
        validate_topic_name(name)
    except KafkaError as error:
        return error_entry(name, error.code)
    if not auto_create or not ctx.policy.auto_create_topics_enable or is_internal_topic(name):
        return error_entry(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    try:
        return topic_entry(ctx, ctx.catalog.auto_create(name), operations)
    except KafkaError as error:
        return error_entry(name, error.code)


def handle_metadata(ctx: BrokerContext, request: MetadataRequest, version: int, client: ClientInfo) -> MetadataResponse:
    requested = request.topics
    operations = TOPIC_OPERATIONS if version >= 8 and request.include_topic_authorized_operations else None
    if requested is None or (version == 0 and not requested):
        topics = [topic_entry(ctx, t, operations) for t in ctx.catalog.topics()]
    else:
        auto_create = request.allow_auto_topic_creation if version >= 4 else True
        topics = [_requested_topic(ctx, t.name, t.topic_id, auto_create, operations) for t in requested]
    asks_cluster = 8 <= version <= 10 and request.include_cluster_authorized_operations
    node = ctx.policy.node_id
    return MetadataResponse(
        version=version,
        throttle_time_ms=0,
        brokers=[
            MetadataResponse.MetadataResponseBroker(
                node_id=node, host=client.advertised.host, port=client.advertised.port, rack=None
            )
        ],
        cluster_id=ctx.policy.cluster_id,
        controller_id=node,
        topics=topics,
        authorized_operations=as_bits(CLUSTER_OPERATIONS if asks_cluster else None),
        error_code=ErrorCode.NONE,
    )


def register(registry: HandlerRegistry) -> None:
    registry.register(MetadataRequest, MetadataResponse, VERSIONS, handle_metadata)
