"""Metadata (key 3): v0-13. Brokers, the controller and the topics asked for (all of them for a null
list, Kafka's internal topics among them once they exist, `is_internal`), auto-creating an unknown
topic when `auto.create.topics.enable` (and the request) allow it: as Kafka 4.2, the request that
creates it is answered UNKNOWN_TOPIC_OR_PARTITION, the next ones with its partitions.

Authorization filters rather than refuses, as Kafka: a topic the principal may not DESCRIBE is left
out (or answered TOPIC_AUTHORIZATION_FAILED when asked for by name, without its id when asked by
id), an unknown topic is not auto-created without CREATE, and the authorized-operations fields carry
what the authorizer allows. Refused mid-SASL, it lists the topics asked for, each with the error.

Version notes:
- v1: a null topic list means all topics (v0: an empty one); racks, controller, IsInternal.
- v2: ClusterId; v3: throttle time; v4: AllowAutoTopicCreation; v5: OfflineReplicas.
- v6: the response is sent before the client is throttled; v7: each partition's LeaderEpoch.
- v8: authorized operations of the cluster and topics (KIP-430).
- v9: flexible versions; v10: TopicId in the response.
- v11: no cluster authorized operations (DescribeCluster has them, KIP-700).
- v12: topics by id in the request; v13: a top-level ErrorCode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.security.acls import CLUSTER_NAME
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import ZERO_UUID, Topic, is_internal_topic, validate_topic_name
from trafka.schema_codec.messages import MetadataRequest, MetadataResponse

from ..api import Handle, KafkaApi
from ..cluster import ClusterMap
from ..connection.cluster import live_brokers, place_leaders, then
from ..internal_topics import InternalTopics
from ..request_context import ClientInfo
from ..security.authorization import Filter
from .common.authorized_operations import CLUSTER_OPERATIONS, TOPIC_OPERATIONS, as_bits

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


VERSIONS = (0, 13)


LEADER_EPOCH = 0


Partition = MetadataResponse.MetadataResponseTopic.MetadataResponsePartition


def topic_entry(ctx: Uses, topic: Topic, operations=None) -> Any:  # a MetadataResponse.MetadataResponseTopic
    node = ctx.policy.node_id
    return MetadataResponse.MetadataResponseTopic(
        error_code=ErrorCode.NONE,
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=InternalTopics.is_internal(topic.name),
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


def error_entry(name: str | None, code: ErrorCode, topic_id=None) -> Any:  # a MetadataResponse.MetadataResponseTopic
    return MetadataResponse.MetadataResponseTopic(
        error_code=code,
        name=name,
        topic_id=topic_id or ZERO_UUID,
        is_internal=InternalTopics.is_internal(name),
        partitions=[],
    )


def _requested_topic(ctx: Uses, name: str | None, topic_id, auto_create: bool, operations=None):
    if not name:
        if topic_id is not None and topic_id != ZERO_UUID:
            topic = ctx.catalog.by_id(topic_id) or ctx.internal_topics.by_id(topic_id)
            if topic is None:
                return error_entry(None, ErrorCode.UNKNOWN_TOPIC_ID, topic_id)
            return topic_entry(ctx, topic, operations)
        return error_entry(name, ErrorCode.INVALID_TOPIC_EXCEPTION)
    topic = ctx.catalog.get(name) or ctx.internal_topics.get(name)
    if topic is not None:
        return topic_entry(ctx, topic, operations)
    try:
        validate_topic_name(name)
    except KafkaError as error:
        return error_entry(name, error.code)
    if not auto_create or not ctx.policy.auto_create_topics_enable:
        return error_entry(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    # Created now, and answered as Kafka answers the request that creates a topic: UNKNOWN_TOPIC_OR_PARTITION
    # without partitions (its AutoTopicCreationManager), the client asks again; an internal topic too.
    if ctx.internal_topics.is_internal(name):
        ctx.internal_topics.create(name)
    elif not is_internal_topic(name):
        try:
            ctx.catalog.auto_create(name)
        except KafkaError as error:
            return error_entry(name, error.code)
    return error_entry(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)


def handle_metadata(ctx: Uses, request: MetadataRequest, version: int, client: ClientInfo) -> MetadataResponse:
    requested = request.topics
    operations = TOPIC_OPERATIONS if version >= 8 and request.include_topic_authorized_operations else None
    if requested is None or (version == 0 and not requested):
        existing = ctx.catalog.topics() + ctx.internal_topics.existing()
        topics = [topic_entry(ctx, t, operations) for t in existing]
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


def _filter(gate, handler, ctx, body, version, client):
    uses = handler.uses(ctx)
    explicit = body.topics is not None and not (version == 0 and not body.topics)
    refused = []
    if explicit:
        kept = []
        auto_create = (
            body.allow_auto_topic_creation if version >= 4 else True
        ) and uses.policy.auto_create_topics_enable
        may_create_all = gate.allowed(client, Op.CREATE, Res.CLUSTER, CLUSTER_NAME)
        for requested in body.topics:
            name = requested.name
            if name and not gate.allowed(client, Op.DESCRIBE, Res.TOPIC, name):
                refused.append(error_entry(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            elif (
                name
                and auto_create
                and uses.catalog.get(name) is None
                and not may_create_all
                and not gate.allowed(client, Op.CREATE, Res.TOPIC, name)
            ):
                refused.append(error_entry(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            else:
                kept.append(requested)
        body.topics = kept
    response = handler.handle(ctx, body, version, client)
    if explicit and not body.topics:
        response.topics = []  # everything refused (a v0 request with no topics would mean all of them)
    shown = []
    for topic in response.topics:
        if (
            topic.name
            and topic.error_code == ErrorCode.NONE
            and not gate.allowed(client, Op.DESCRIBE, Res.TOPIC, topic.name)
        ):
            if explicit:  # asked for by topic id: refused without its name, as Kafka
                shown.append(error_entry(None, ErrorCode.TOPIC_AUTHORIZATION_FAILED, topic.topic_id))
            continue
        if topic.authorized_operations is not None and topic.error_code == ErrorCode.NONE:
            topic.authorized_operations = gate.operations(client, Res.TOPIC, topic.name)
        shown.append(topic)
    response.topics = shown + refused
    if getattr(response, "authorized_operations", None) is not None:
        response.authorized_operations = gate.operations(client, Res.CLUSTER, CLUSTER_NAME)
    return response


def _refusal(handler: Any, body: Any, version: int, error: int) -> Any:
    Topic = handler.response.MetadataResponseTopic
    topics = [
        Topic(
            error_code=error,
            name=t.name or "",
            topic_id=getattr(t, "topic_id", None),
            is_internal=False,
            partitions=[],
            authorized_operations=None,
        )
        for t in body.topics or ()
    ]
    response = handler.response(
        version=version,
        topics=topics,
        brokers=[],
        cluster_id=None,
        controller_id=-1,
        authorized_operations=None,
        error_code=0,
    )
    if "throttle_time_ms" in response.fields:
        response.throttle_time_ms = 0
    return response


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
    """On a simulated cluster: the live nodes as the brokers, the lowest the controller, each partition's
    leader and epoch the cluster's."""

    def rewrite(response: Any) -> Any:
        response.brokers = live_brokers(cluster, type(response).MetadataResponseBroker)
        response.controller_id = min(cluster.live())
        place_leaders(cluster, response.topics or ())
        return response

    return then(serve(ctx, body, version, client), rewrite)


API = KafkaApi(
    MetadataRequest,
    MetadataResponse,
    VERSIONS,
    handle_metadata,
    authorization=Filter(_filter),
    refusal=_refusal,
    read_only=True,
    cluster=_in_cluster,
)
