"""ConsumerGroupHeartbeat (key 68): v0-1. KIP-848's consumer group protocol: a member joins (epoch 0),
heartbeats with what it owns, learns its assignment from the coordinator, leaves (-1, or -2 for a
static member coming back). v1 (KIP-1082): the client makes its member id; regex subscriptions.

The domain's ConsumerGroupCoordinator decides; topics travel by id on the wire and by name in the
domain (ids neither the catalog nor an existing internal topic has are left out of what a member owns,
as Kafka ignores them).
Served only while `group.coordinator.rebalance.protocols` includes `consumer` (else UNSUPPORTED_VERSION,
as Kafka answers).

Authorization: READ on the group; DESCRIBE on every topic the request names, else the whole heartbeat
is TOPIC_AUTHORIZATION_FAILED (Kafka's KafkaApis, KAFKA-18813); a regex subscription matches only the
topics the member's principal may DESCRIBE (the coordinator applies the check it is given).

A regex is compiled by RE2 in a worker thread before the coordinator sees it (a new pattern only;
compiled ones are cached): what RE2 cannot express is INVALID_REGULAR_EXPRESSION, and the coordinator
has it resolved against the topics off the request path (ADR 68).

Version notes:
- v1: SubscribedTopicRegex and INVALID_REGULAR_EXPRESSION; the client makes its own member id
  (KIP-1082).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.groups.modern import ConsumerHeartbeat, HeartbeatAnswer
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse

from ..api import Deferred, KafkaApi, top_level_error
from ..connection.cluster import one_group, refuse_unless_coordinator
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, request_field
from .common.modern_groups import heartbeat_response

if TYPE_CHECKING:
    from trafka.domain.catalog import TopicCatalog

    from ..internal_topics import InternalTopics
    from ..runtime.group_runtime import GroupRuntime
    from ..security.authorization import AuthorizationGate


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    groups: GroupRuntime
    internal_topics: InternalTopics
    authorization: AuthorizationGate | None


def handle_consumer_group_heartbeat(
    ctx: Uses, request: ConsumerGroupHeartbeatRequest, version: int, client: ClientInfo
) -> ConsumerGroupHeartbeatResponse | Deferred:
    if ctx.groups.consumer is None:
        return _answer(
            version, HeartbeatAnswer(ErrorCode.UNSUPPORTED_VERSION, "The new consumer group protocol is disabled.")
        )
    gate = ctx.authorization
    names = request.subscribed_topic_names
    if gate is not None and names and not all(gate.allowed(client, Op.DESCRIBE, Res.TOPIC, n) for n in set(names)):
        return _answer(version, HeartbeatAnswer(ErrorCode.TOPIC_AUTHORIZATION_FAILED))
    regex = request.subscribed_topic_regex if version >= 1 else None
    if not regex or ctx.groups.regexes.known(regex):
        return _heartbeat(ctx, request, version, client)
    regexes = ctx.groups.regexes

    async def compiled_first() -> ConsumerGroupHeartbeatResponse:
        refused = await regexes.check(regex)
        if refused is not None:
            return _answer(version, HeartbeatAnswer(ErrorCode.INVALID_REGULAR_EXPRESSION, refused))
        return _heartbeat(ctx, request, version, client)

    return Deferred(compiled_first)


def _heartbeat(
    ctx: Uses, request: ConsumerGroupHeartbeatRequest, version: int, client: ClientInfo
) -> ConsumerGroupHeartbeatResponse:
    owned = None
    if request.topic_partitions is not None:
        owned = {}
        for tp in request.topic_partitions:
            topic = ctx.catalog.by_id(tp.topic_id) or ctx.internal_topics.by_id(tp.topic_id)
            if topic is not None:
                owned[topic.name] = frozenset(tp.partitions)
    names = request.subscribed_topic_names
    gate = ctx.authorization
    may_describe = None
    if gate is not None:

        def may_describe(topic: str) -> bool:
            return gate.allowed(client, Op.DESCRIBE, Res.TOPIC, topic)

    heartbeat = ConsumerHeartbeat(
        group_id=request.group_id,
        member_id=request.member_id,
        member_epoch=request.member_epoch,
        instance_id=request.instance_id,
        rack_id=request.rack_id,
        rebalance_timeout_ms=request.rebalance_timeout_ms,
        subscribed_topic_names=tuple(names) if names is not None else None,
        subscribed_topic_regex=request.subscribed_topic_regex if version >= 1 else None,
        server_assignor=request.server_assignor,
        owned=owned,
        client_id=client.client_id,
        client_host=client.inet_address,  # as Kafka's InetAddress.toString(): /127.0.0.1
        member_id_from_client=version >= 1,
        may_describe=may_describe,
    )
    return _answer(version, ctx.groups.consumer_heartbeat(heartbeat), ctx)


def _answer(version: int, answer: HeartbeatAnswer, ctx: Uses | None = None) -> ConsumerGroupHeartbeatResponse:
    return heartbeat_response(ConsumerGroupHeartbeatResponse, version, answer, ctx)


API = KafkaApi(
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    (0, 1),
    handle_consumer_group_heartbeat,
    authorization=Checks((Check(Res.GROUP, Op.READ, request_field("group_id")),)),
    refusal=top_level_error,
    read_only=False,
    cluster=refuse_unless_coordinator(one_group),
)
