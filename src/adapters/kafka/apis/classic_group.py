"""The classic consumer group protocol: JoinGroup (key 11): v0-9, SyncGroup (key 14): v0-5,
Heartbeat (key 12): v0-4, LeaveGroup (key 13): v0-5; the domain's sans-I/O coordinator decides,
`GroupRuntime` holds its clock and parks the JoinGroup and SyncGroup answers that must wait.

Authorization: READ on the group, for each of the four.

Version notes:
JoinGroup:
- v1: RebalanceTimeoutMs; v2: throttle time; v4: MEMBER_ID_REQUIRED, a second join with the given id.
- v5: GroupInstanceId (static members, KIP-345); v6: flexible versions.
- v7: the response carries ProtocolType (KIP-559); v8: Reason (KIP-800); v9: SkipAssignment.
SyncGroup: v1 throttle time; v3 GroupInstanceId; v4 flexible versions; v5 ProtocolType and
ProtocolName in both directions, checked (KIP-559).
Heartbeat: v1 throttle time; v3 GroupInstanceId; v4 flexible versions.
LeaveGroup: v1 throttle time; v3 a batch of members by member and instance id; v4 flexible versions;
v5 Reason (KIP-800).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.groups import JoinRequest, JoinResult, Protocol, SyncRequest, SyncResult
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)

from ..api import KafkaApi, Parked, top_level_error
from ..connection.cluster import one_group, refuse_unless_coordinator
from ..request_context import ClientInfo
from ..runtime.group_runtime import GroupAnswer
from ..security.authorization import Check, Checks, request_field

if TYPE_CHECKING:
    from ..runtime.group_runtime import GroupRuntime


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    groups: GroupRuntime


def _join_response(result: JoinResult, version: int) -> JoinGroupResponse:
    return JoinGroupResponse(
        version=version,
        throttle_time_ms=0,
        error_code=result.error,
        generation_id=result.generation_id,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name if (result.protocol_name is not None or version >= 7) else "",
        leader=result.leader,
        skip_assignment=False,
        member_id=result.member_id,
        members=[
            JoinGroupResponse.JoinGroupResponseMember(
                member_id=m.member_id, group_instance_id=m.group_instance_id, metadata=m.metadata
            )
            for m in result.members
        ],
    )


def _deferred(outcome, respond):
    """The answer now, or parked until the coordinator decides it (a round completes, a timeout)."""
    if isinstance(outcome, GroupAnswer):
        return Parked((outcome,), None, lambda expired: None if outcome.result is None else respond(outcome.result))
    return respond(outcome)


def handle_join_group(ctx: Uses, request: JoinGroupRequest, version: int, client: ClientInfo):
    rebalance_timeout = request.rebalance_timeout_ms if version >= 1 else request.session_timeout_ms
    join = JoinRequest(
        group_id=request.group_id,
        member_id=request.member_id,
        protocol_type=request.protocol_type,
        protocols=tuple(Protocol(p.name, bytes(p.metadata)) for p in request.protocols),
        session_timeout_ms=request.session_timeout_ms,
        rebalance_timeout_ms=rebalance_timeout,
        group_instance_id=request.group_instance_id if version >= 5 else None,
        client_id=client.client_id,
        client_host=client.inet_address,  # as Kafka's InetAddress.toString(): /127.0.0.1
        require_known_member_id=version >= 4,
    )
    return _deferred(ctx.groups.join(join), lambda result: _join_response(result, version))


def _sync_response(result: SyncResult, version: int) -> SyncGroupResponse:
    return SyncGroupResponse(
        version=version,
        throttle_time_ms=0,
        error_code=result.error,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name,
        assignment=result.assignment,
    )


def handle_sync_group(ctx: Uses, request: SyncGroupRequest, version: int, client: ClientInfo):
    sync = SyncRequest(
        group_id=request.group_id,
        member_id=request.member_id,
        generation_id=request.generation_id,
        assignments=tuple((a.member_id, bytes(a.assignment)) for a in request.assignments),
        group_instance_id=request.group_instance_id if version >= 3 else None,
        protocol_type=request.protocol_type if version >= 5 else None,
        protocol_name=request.protocol_name if version >= 5 else None,
    )
    return _deferred(ctx.groups.sync(sync), lambda result: _sync_response(result, version))


def handle_heartbeat(ctx: Uses, request: HeartbeatRequest, version: int, client: ClientInfo) -> HeartbeatResponse:
    error = ctx.groups.heartbeat(
        request.group_id,
        request.member_id,
        request.generation_id,
        request.group_instance_id if version >= 3 else None,
    )
    return HeartbeatResponse(version=version, throttle_time_ms=0, error_code=error)


def handle_leave_group(ctx: Uses, request: LeaveGroupRequest, version: int, client: ClientInfo) -> LeaveGroupResponse:
    if version < 3:
        (error,) = ctx.groups.leave(request.group_id, [(request.member_id, None)])
        return LeaveGroupResponse(version=version, throttle_time_ms=0, error_code=error)
    leaving = [(m.member_id, m.group_instance_id) for m in request.members]
    errors = ctx.groups.leave(request.group_id, leaving)
    return LeaveGroupResponse(
        version=version,
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        members=[
            LeaveGroupResponse.MemberResponse(member_id=m, group_instance_id=i, error_code=e)
            for (m, i), e in zip(leaving, errors, strict=True)
        ],
    )


_GROUP_READ = Checks((Check(Res.GROUP, Op.READ, request_field("group_id")),))

JOIN_GROUP = KafkaApi(
    JoinGroupRequest,
    JoinGroupResponse,
    (0, 9),
    handle_join_group,
    authorization=_GROUP_READ,
    refusal=top_level_error,
    read_only=False,
    cluster=refuse_unless_coordinator(one_group),
)
SYNC_GROUP = KafkaApi(
    SyncGroupRequest,
    SyncGroupResponse,
    (0, 5),
    handle_sync_group,
    authorization=_GROUP_READ,
    refusal=top_level_error,
    read_only=False,
    cluster=refuse_unless_coordinator(one_group),
)
HEARTBEAT = KafkaApi(
    HeartbeatRequest,
    HeartbeatResponse,
    (0, 4),
    handle_heartbeat,
    authorization=_GROUP_READ,
    refusal=top_level_error,
    read_only=False,
    cluster=refuse_unless_coordinator(one_group),
)
LEAVE_GROUP = KafkaApi(
    LeaveGroupRequest,
    LeaveGroupResponse,
    (0, 5),
    handle_leave_group,
    authorization=_GROUP_READ,
    refusal=top_level_error,
    read_only=False,
    cluster=refuse_unless_coordinator(one_group),
)
APIS = (JOIN_GROUP, SYNC_GROUP, HEARTBEAT, LEAVE_GROUP)
