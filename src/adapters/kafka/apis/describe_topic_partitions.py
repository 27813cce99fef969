"""DescribeTopicPartitions (key 75): v0. Topics and their partitions, paged by a cursor.

Authorization filters: a topic the principal may not DESCRIBE is answered TOPIC_AUTHORIZATION_FAILED
(asked for by name) or left out (a listing).

Version notes:
- v0 only (KIP-966).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import ZERO_UUID
from trafka.schema_codec.messages import (
    DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsResponse,
)

from ..api import Handle, KafkaApi, top_level_error
from ..cluster import ClusterMap
from ..connection.cluster import place_leaders, then
from ..request_context import ClientInfo
from ..security.authorization import Filter
from ..security.partial import (
    merged,
)
from .common.authorized_operations import TOPIC_OPERATIONS, as_int32
from .metadata import LEADER_EPOCH

if TYPE_CHECKING:
    from trafka.domain.catalog import TopicCatalog
    from trafka.domain.configs import BrokerPolicy

    from ..internal_topics import InternalTopics


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    policy: BrokerPolicy
    internal_topics: InternalTopics


DtpTopic = DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponseTopic


DtpPartition = DtpTopic.DescribeTopicPartitionsResponsePartition


def handle_describe_topic_partitions(
    ctx: Uses, request: DescribeTopicPartitionsRequest, version: int, client: ClientInfo
) -> DescribeTopicPartitionsResponse:
    node = ctx.policy.node_id
    if request.topics:
        names = sorted({t.name for t in request.topics})
    else:  # Kafka's internal topics too, once they exist, as Metadata lists them (issue 41)
        names = sorted([t.name for t in ctx.catalog.topics()] + [t.name for t in ctx.internal_topics.existing()])
    cursor = request.cursor
    if cursor is not None:
        names = [n for n in names if n >= cursor.topic_name]
    limit = max(1, request.response_partition_limit)
    topics, next_cursor, remaining = [], None, limit
    for name in names:
        topic = ctx.catalog.get(name) or ctx.internal_topics.get(name)
        if topic is None:
            topics.append(  # Kafka computes an unknown topic's authorized operations too
                DtpTopic(
                    error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    name=name,
                    partitions=[],
                    topic_authorized_operations=as_int32(TOPIC_OPERATIONS),
                )
            )
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


def _filter(gate, handler, ctx, body, version, client):
    """Named topics it may not DESCRIBE are refused without their id; asked for all, they are left out
    (the request becomes the list of describable topics, so paging never reaches the others)."""

    def allowed(name: str) -> bool:
        return gate.allowed(client, Op.DESCRIBE, Res.TOPIC, name)

    Topic = handler.response.DescribeTopicPartitionsResponseTopic
    refused = []
    if body.topics:
        refused = [
            Topic(
                error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                name=t.name,
                topic_id=ZERO_UUID,
                is_internal=False,
                partitions=[],
            )
            for t in body.topics
            if not allowed(t.name)
        ]
        body.topics = [t for t in body.topics if allowed(t.name)]
    else:
        RequestTopic = handler.request.TopicRequest
        uses = handler.uses(ctx)
        every = [*uses.catalog.topics(), *uses.internal_topics.existing()]
        body.topics = [RequestTopic(name=t.name) for t in every if allowed(t.name)]
    if not body.topics:
        return handler.response(version=version, throttle_time_ms=0, topics=refused, next_cursor=None)

    def complete(response) -> None:
        for topic in response.topics:
            if topic.error_code in (ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION):
                topic.topic_authorized_operations = as_int32(frozenset(gate.operations(client, Res.TOPIC, topic.name)))
        response.topics.extend(refused)

    return merged(handler.handle(ctx, body, version, client), complete)


def _in_cluster(
    cluster: ClusterMap,
    node: int,
    api: KafkaApi,
    serve: Handle,
    ctx: Any,
    body: Any,
    version: int,
    client: ClientInfo,
) -> Any:
    """On a simulated cluster: each partition's leader and epoch the cluster's."""

    def rewrite(response: Any) -> Any:
        place_leaders(cluster, response.topics or ())
        return response

    return then(serve(ctx, body, version, client), rewrite)


API = KafkaApi(
    DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsResponse,
    (0, 0),
    handle_describe_topic_partitions,
    authorization=Filter(_filter),
    refusal=top_level_error,
    read_only=True,
    cluster=_in_cluster,
)
