"""ShareGroupHeartbeat (key 76): v1. KIP-932 share groups: a member joins (epoch 0, with its
subscription), heartbeats, learns its assignment, leaves (-1). The client makes its member id.

The domain's ShareGroupCoordinator decides (the `simple` assignor: every member may be given every
partition of its topics); topics travel by id on the wire and by name in the domain.

Authorization: READ on the group; DESCRIBE on each subscribed topic (TOPIC_AUTHORIZATION_FAILED
otherwise, v1), as Kafka's KafkaApis.handleShareGroupHeartbeatRequest.

Version notes:
(v0 was KIP-932's early access and is not served)
- v1: the first stable version (KIP-932).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.groups.modern import HeartbeatAnswer
from trafka.domain.groups.share import ShareHeartbeat
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse

from ..api import KafkaApi, top_level_error
from ..connection.cluster import one_group, refuse_unless_coordinator
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, request_field
from .common.modern_groups import heartbeat_response

if TYPE_CHECKING:
    from trafka.domain.catalog import TopicCatalog

    from ..internal_topics import InternalTopics
    from ..runtime.share_runtime import ShareRuntime
    from ..security.authorization import AuthorizationGate


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    internal_topics: InternalTopics
    authorization: AuthorizationGate | None
    share: ShareRuntime | None


DISABLED = HeartbeatAnswer(ErrorCode.UNSUPPORTED_VERSION, "Share groups are disabled.")


def handle_share_group_heartbeat(
    ctx: Uses, request: ShareGroupHeartbeatRequest, version: int, client: ClientInfo
) -> ShareGroupHeartbeatResponse:
    if ctx.share is None:
        return _answer(version, DISABLED)
    names = request.subscribed_topic_names
    gate = ctx.authorization
    if names and gate is not None:
        refused = sorted(n for n in set(names) if not gate.allowed(client, Op.DESCRIBE, Res.TOPIC, n))
        if refused:
            message = f"The following topics are not authorized: {', '.join(refused)}."
            return _answer(version, HeartbeatAnswer(ErrorCode.TOPIC_AUTHORIZATION_FAILED, message))
    heartbeat = ShareHeartbeat(
        group_id=request.group_id,
        member_id=request.member_id,
        member_epoch=request.member_epoch,
        rack_id=request.rack_id,
        subscribed_topic_names=tuple(names) if names is not None else None,
        client_id=client.client_id,
        client_host=client.inet_address,  # as Kafka's InetAddress.toString(): /127.0.0.1
    )
    return _answer(version, ctx.share.heartbeat(heartbeat), ctx)


def _answer(version: int, answer: HeartbeatAnswer, ctx: Uses | None = None) -> ShareGroupHeartbeatResponse:
    return heartbeat_response(ShareGroupHeartbeatResponse, version, answer, ctx)


API = KafkaApi(
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
    (1, 1),
    handle_share_group_heartbeat,
    authorization=Checks((Check(Res.GROUP, Op.READ, request_field("group_id")),)),
    refusal=top_level_error,
    read_only=False,
    cluster=refuse_unless_coordinator(one_group),
)
