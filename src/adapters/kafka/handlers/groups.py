"""FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DescribeGroups, ListGroups, DeleteGroups.

This broker coordinates every group. JoinGroup and SyncGroup may wait for other members: they return
a `Deferred`, so the connection keeps reading other requests while they wait.
"""

from __future__ import annotations

from kafka.protocol.admin import (
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    ListGroupsRequest,
    ListGroupsResponse,
)
from kafka.protocol.consumer import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse

from trafka.domain.errors import ErrorCode
from trafka.domain.groups import JoinRequest, JoinResult, Protocol, SyncRequest, SyncResult

from ..api import Deferred, HandlerRegistry
from ..context import BrokerContext, ClientInfo
from .authorized import GROUP_OPERATIONS, as_bits

GROUP_KEY = 0
TRANSACTION_KEY = 1


def _coordinator_for(ctx: BrokerContext, key: str, key_type: int) -> tuple[ErrorCode, str | None]:
    if key_type not in (GROUP_KEY, TRANSACTION_KEY):
        return ErrorCode.INVALID_REQUEST, f"unknown coordinator key type {key_type}"
    return ErrorCode.NONE, None


def handle_find_coordinator(ctx: BrokerContext, request: FindCoordinatorRequest, version: int, client: ClientInfo):
    node, host, port = ctx.policy.node_id, client.advertised.host, client.advertised.port
    key_type = request.key_type if version >= 1 else GROUP_KEY
    if version < 4:
        error, message = _coordinator_for(ctx, request.key, key_type)
        ok = error is ErrorCode.NONE
        return FindCoordinatorResponse(
            version=version,
            throttle_time_ms=0,
            error_code=error,
            error_message=message,
            node_id=node if ok else -1,
            host=host if ok else "",
            port=port if ok else -1,
        )
    coordinators = []
    for key in request.coordinator_keys:
        error, message = _coordinator_for(ctx, key, key_type)
        ok = error is ErrorCode.NONE
        coordinators.append(
            FindCoordinatorResponse.Coordinator(
                key=key,
                node_id=node if ok else -1,
                host=host if ok else "",
                port=port if ok else -1,
                error_code=error,
                error_message=message,
            )
        )
    return FindCoordinatorResponse(version=version, throttle_time_ms=0, coordinators=coordinators)


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
    if callable(outcome):

        async def wait():
            return respond(await outcome())

        return Deferred(wait)
    return respond(outcome)


def handle_join_group(ctx: BrokerContext, request: JoinGroupRequest, version: int, client: ClientInfo):
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
        client_host=client.host,
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


def handle_sync_group(ctx: BrokerContext, request: SyncGroupRequest, version: int, client: ClientInfo):
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


def handle_heartbeat(
    ctx: BrokerContext, request: HeartbeatRequest, version: int, client: ClientInfo
) -> HeartbeatResponse:
    error = ctx.groups.heartbeat(
        request.group_id,
        request.member_id,
        request.generation_id,
        request.group_instance_id if version >= 3 else None,
    )
    return HeartbeatResponse(version=version, throttle_time_ms=0, error_code=error)


def handle_leave_group(
    ctx: BrokerContext, request: LeaveGroupRequest, version: int, client: ClientInfo
) -> LeaveGroupResponse:
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


def handle_describe_groups(ctx: BrokerContext, request: DescribeGroupsRequest, version: int, client: ClientInfo):
    described = []
    for group_id in request.groups:
        d = ctx.groups.coordinator.describe(group_id)
        described.append(
            DescribeGroupsResponse.DescribedGroup(
                error_code=ErrorCode.NONE if group_id else ErrorCode.INVALID_GROUP_ID,
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


def handle_list_groups(
    ctx: BrokerContext, request: ListGroupsRequest, version: int, client: ClientInfo
) -> ListGroupsResponse:
    states = {s.lower() for s in request.states_filter} if version >= 4 and request.states_filter else None
    types = {t.lower() for t in request.types_filter} if version >= 5 and request.types_filter else None
    groups = [
        ListGroupsResponse.ListedGroup(
            group_id=g.group_id, protocol_type=g.protocol_type, group_state=g.state.value, group_type="classic"
        )
        for g in ctx.groups.coordinator.list_groups()
        if (states is None or g.state.value.lower() in states) and (types is None or "classic" in types)
    ]
    return ListGroupsResponse(version=version, throttle_time_ms=0, error_code=ErrorCode.NONE, groups=groups)


def handle_delete_groups(
    ctx: BrokerContext, request: DeleteGroupsRequest, version: int, client: ClientInfo
) -> DeleteGroupsResponse:
    results = [
        DeleteGroupsResponse.DeletableGroupResult(group_id=g, error_code=ctx.groups.offsets.delete_group(g))
        for g in request.groups_names
    ]
    return DeleteGroupsResponse(version=version, throttle_time_ms=0, results=results)


def register(registry: HandlerRegistry) -> None:
    registry.register(FindCoordinatorRequest, FindCoordinatorResponse, (0, 6), handle_find_coordinator)
    registry.register(JoinGroupRequest, JoinGroupResponse, (0, 9), handle_join_group)
    registry.register(SyncGroupRequest, SyncGroupResponse, (0, 5), handle_sync_group)
    registry.register(HeartbeatRequest, HeartbeatResponse, (0, 4), handle_heartbeat)
    registry.register(LeaveGroupRequest, LeaveGroupResponse, (0, 5), handle_leave_group)
    registry.register(DescribeGroupsRequest, DescribeGroupsResponse, (0, 5), handle_describe_groups)
    registry.register(ListGroupsRequest, ListGroupsResponse, (0, 5), handle_list_groups)
    registry.register(DeleteGroupsRequest, DeleteGroupsResponse, (0, 2), handle_delete_groups)
