"""ListGroups (key 16): v0-5. Every group with its state (v4+ filtered by state, v5 by type: classic
groups and KIP-848 consumer groups, whose protocol type is `consumer`, KIP-932 share groups, `share`,
and KIP-1071 streams groups, `streams`).

Authorization filters: without DESCRIBE on the cluster, only the groups the principal may DESCRIBE.

Version notes:
- v1: throttle time; v2: the response is sent before the client is throttled.
- v3: flexible versions.
- v4: StatesFilter and each group's state (KIP-518).
- v5: TypesFilter and each group's type (KIP-848).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import CLUSTER_NAME
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import (
    ListGroupsRequest,
    ListGroupsResponse,
)

from ..api import KafkaApi, top_level_error
from ..request_context import ClientInfo
from ..security.authorization import Filter

if TYPE_CHECKING:
    from ..runtime.group_runtime import GroupRuntime
    from ..runtime.share_runtime import ShareRuntime


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    groups: GroupRuntime
    share: ShareRuntime | None


def handle_list_groups(ctx: Uses, request: ListGroupsRequest, version: int, client: ClientInfo) -> ListGroupsResponse:
    states = {s.lower() for s in request.states_filter} if version >= 4 and request.states_filter else None
    types = {t.lower() for t in request.types_filter} if version >= 5 and request.types_filter else None
    groups = [
        ListGroupsResponse.ListedGroup(
            group_id=g.group_id, protocol_type=g.protocol_type, group_state=g.state.value, group_type="classic"
        )
        for g in ctx.groups.coordinator.list_groups()
        if (states is None or g.state.value.lower() in states) and (types is None or "classic" in types)
    ]
    consumer = ctx.groups.consumer
    if consumer is not None and (types is None or "consumer" in types):
        groups += [
            ListGroupsResponse.ListedGroup(
                group_id=group_id, protocol_type="consumer", group_state=group.state.value, group_type="consumer"
            )
            for group_id, group in sorted(consumer.groups.items())
            if states is None or group.state.value.lower() in states
        ]
    streams = ctx.groups.streams
    if streams is not None and (types is None or "streams" in types):
        groups += [
            ListGroupsResponse.ListedGroup(
                group_id=group_id, protocol_type="streams", group_state=group.state.value, group_type="streams"
            )
            for group_id, group in sorted(streams.groups.items())
            if states is None or group.state.value.lower() in states
        ]
    share = ctx.share
    if share is not None and (types is None or "share" in types):
        groups += [
            ListGroupsResponse.ListedGroup(
                group_id=group_id, protocol_type="share", group_state=state, group_type="share"
            )
            for group_id in sorted(share.groups.coordinator.groups)
            if (state := share.groups.coordinator.state(group_id).value) and (states is None or state.lower() in states)
        ]
    return ListGroupsResponse(version=version, throttle_time_ms=0, error_code=ErrorCode.NONE, groups=groups)


def _filter(gate, handler, ctx, body, version, client):
    response = handler.handle(ctx, body, version, client)
    if not gate.allowed(client, Op.DESCRIBE, Res.CLUSTER, CLUSTER_NAME):
        response.groups = [g for g in response.groups if gate.allowed(client, Op.DESCRIBE, Res.GROUP, g.group_id)]
    return response


API = KafkaApi(
    ListGroupsRequest,
    ListGroupsResponse,
    (0, 5),
    handle_list_groups,
    authorization=Filter(_filter),
    refusal=top_level_error,
    read_only=True,
)
