"""DescribeGroups (key 15): v0-6. Classic groups: state, protocol, members and their assignments. An
unknown group is Dead with no members; from v6 it is also GROUP_ID_NOT_FOUND with Kafka's message
(KIP-1043).

Authorization filters: a group the principal may not DESCRIBE is answered GROUP_AUTHORIZATION_FAILED
with nothing of it; the authorized operations are filled from the ACLs.

Version notes:
- v1: throttle time; v2: the response is sent before the client is throttled.
- v3: IncludeAuthorizedOperations; v4: each member's GroupInstanceId.
- v5: flexible versions.
- v6: GROUP_ID_NOT_FOUND for an unknown group (KIP-1043).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.groups.state import GroupState
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import (
    DescribeGroupsRequest,
    DescribeGroupsResponse,
)

from ..api import KafkaApi, top_level_error
from ..connection.cluster import groups_in, refuse_unless_coordinator
from ..request_context import ClientInfo
from ..security.authorization import Filter
from .common.authorized_operations import GROUP_OPERATIONS, as_bits

if TYPE_CHECKING:
    from ..runtime.group_runtime import GroupRuntime


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    groups: GroupRuntime


def handle_describe_groups(ctx: Uses, request: DescribeGroupsRequest, version: int, client: ClientInfo):
    described = []
    for group_id in request.groups:
        d = ctx.groups.coordinator.describe(group_id)
        error, message = ErrorCode.NONE if group_id else ErrorCode.INVALID_GROUP_ID, None
        if version >= 6 and group_id and d.state is GroupState.DEAD:
            error, message = ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found."
        described.append(
            DescribeGroupsResponse.DescribedGroup(
                error_code=error,
                error_message=message,
                group_id=group_id,
                group_state=d.state.value,
                protocol_type=d.protocol_type,
                protocol_data=d.protocol_name,
                members=[
                    DescribeGroupsResponse.DescribedGroup.DescribedGroupMember(
                        member_id=m.member_id,
                        group_instance_id=m.group_instance_id,
                        client_id=m.client_id,
                        client_host=m.client_host,
                        member_metadata=m.metadata,
                        member_assignment=m.assignment,
                    )
                    for m in d.members
                ],
                authorized_operations=as_bits(
                    GROUP_OPERATIONS if version >= 3 and request.include_authorized_operations else None
                ),
            )
        )
    return DescribeGroupsResponse(version=version, throttle_time_ms=0, groups=described)


def _filter(gate, handler, ctx, body, version, client):
    response = handler.handle(ctx, body, version, client)
    for group in response.groups:
        if not gate.allowed(client, Op.DESCRIBE, Res.GROUP, group.group_id):
            group.error_code = ErrorCode.GROUP_AUTHORIZATION_FAILED
            group.members = []
            group.group_state = group.protocol_type = group.protocol_data = ""
        elif group.authorized_operations is not None:
            group.authorized_operations = gate.operations(client, Res.GROUP, group.group_id)
    return response


API = KafkaApi(
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    (0, 6),
    handle_describe_groups,
    authorization=Filter(_filter),
    refusal=top_level_error,
    read_only=True,
    cluster=refuse_unless_coordinator(groups_in("groups")),
)
