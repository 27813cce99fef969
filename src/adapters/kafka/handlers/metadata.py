"""Metadata: brokers, controller, cluster id and topics, auto-creating topics where allowed.

This broker leads every partition (a single-node cluster), so leader, replicas and ISR are all its
node id. A null topic list (an empty one before v1) asks for every topic.
"""

from __future__ import annotations

from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from domain.errors import ErrorCode, KafkaError
from domain.topics import Topic, ZERO_UUID, is_internal_topic, validate_topic_name

from ..context import BrokerContext, ClientInfo
from ..registry import HandlerRegistry

VERSIONS = (0, 13)
LEADER_EPOCH = 0

Partition = MetadataResponse.MetadataResponseTopic.MetadataResponsePartition


def topic_entry(ctx: BrokerContext, topic: Topic) -> MetadataResponse.MetadataResponseTopic:
    node = ctx.policy.node_id
    return MetadataResponse.MetadataResponseTopic(
        error_code=ErrorCode.NONE,
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=topic.is_internal,
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


def _error_entry(name: str | None, code: ErrorCode, topic_id=None) -> MetadataResponse.MetadataResponseTopic:
    return MetadataResponse.MetadataResponseTopic(
        error_code=code, name=name, topic_id=topic_id or ZERO_UUID, is_internal=False, partitions=[]
    )


def _requested_topic(ctx: BrokerContext, name: str | None, topic_id, auto_create: bool):
    if not name:
        if topic_id is not None and topic_id != ZERO_UUID:
            topic = ctx.catalog.by_id(topic_id)
            if topic is None:
                return _error_entry(None, ErrorCode.UNKNOWN_TOPIC_ID, topic_id)
            return topic_entry(ctx, topic)
        return _error_entry(name, ErrorCode.INVALID_TOPIC_EXCEPTION)
    topic = ctx.catalog.get(name)
    if topic is not None:
        return topic_entry(ctx, topic)
    try:
        validate_topic_name(name)
    except KafkaError as error:
        return _error_entry(name, error.code)
    if not auto_create or not ctx.policy.auto_create_topics_enable or is_internal_topic(name):
        return _error_entry(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    try:
        return topic_entry(ctx, ctx.catalog.auto_create(name))
    except KafkaError as error:
        return _error_entry(name, error.code)


def handle_metadata(ctx: BrokerContext, request: MetadataRequest, version: int, client: ClientInfo) -> MetadataResponse:
    requested = request.topics
    if requested is None or (version == 0 and not requested):
        topics = [topic_entry(ctx, t) for t in ctx.catalog.topics()]
    else:
        auto_create = request.allow_auto_topic_creation if version >= 4 else True
        topics = [_requested_topic(ctx, t.name, t.topic_id, auto_create) for t in requested]
    node = ctx.policy.node_id
    return MetadataResponse(
        version=version,
        throttle_time_ms=0,
        brokers=[
            MetadataResponse.MetadataResponseBroker(
                node_id=node, host=ctx.advertised.host, port=ctx.advertised.port, rack=None
            )
        ],
        cluster_id=ctx.policy.cluster_id,
        controller_id=node,
        topics=topics,
        error_code=ErrorCode.NONE,
    )


def register(registry: HandlerRegistry) -> None:
    registry.register(MetadataRequest, MetadataResponse, VERSIONS, handle_metadata)
