"""StreamsGroupDescribe (key 89): v0-1. A streams group (KIP-1071) as Kafka describes it: its state and
epochs, its topology (subtopologies with their source, repartition and changelog topics; null until a
member sent one), and each member with its process, endpoint, client tags and its current and target
active, standby and warm-up tasks. With Kafka 4.4's surface (unpinned, or `kafka_version="4.4"`) each
member's task offsets and end offsets are the ones it last reported in its heartbeat, as Kafka 4.4
keeps them (the lag of a task is their difference); Kafka 4.2 always answers them empty.

Version notes:
- v1 (Kafka 4.4, KIP-1331 and KIP-1357) asks with `IncludeTopologyDescription` for the
topology description the members pushed (StreamsGroupTopologyDescriptionUpdate, key 93), answered with
`TopologyDescriptionStatus` (NOT_REQUESTED, NOT_STORED, AVAILABLE), and names the group's task assignor
(`AssignorName`).

A group of another type, or none, is GROUP_ID_NOT_FOUND, as Kafka answers.
Authorization filters as ConsumerGroupDescribe: a group the principal may not DESCRIBE is
GROUP_AUTHORIZATION_FAILED; the authorized operations are filled from the ACLs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.groups.streams import TasksTuple, TopicInfo
from trafka.domain.groups.streams.description import DescriptionStatus, Node, TopologyDescription
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import StreamsGroupDescribeRequest, StreamsGroupDescribeResponse

from ..api import KafkaApi
from ..connection.cluster import groups_in, refuse_unless_coordinator
from ..request_context import ClientInfo
from ..security.authorization import Filter
from .common.authorized_operations import GROUP_OPERATIONS, as_int32

STREAMS_GROUP_HEARTBEAT = 88
ASSIGNOR_NAME = "sticky"  # Kafka's StickyTaskAssignor, the only one trafka has (its own tie-breaks, ADR 82)

if TYPE_CHECKING:
    from ..api import HandlerRegistry
    from ..runtime.group_runtime import GroupRuntime


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    groups: GroupRuntime
    registry: HandlerRegistry


Described = StreamsGroupDescribeResponse.DescribedGroup


def handle_streams_group_describe(
    ctx: Uses, request: StreamsGroupDescribeRequest, version: int, client: ClientInfo
) -> StreamsGroupDescribeResponse:
    streams = ctx.groups.streams
    api = ctx.registry.get(STREAMS_GROUP_HEARTBEAT)
    reports_offsets = api is not None and api.max_version >= 1  # Kafka 4.4's surface
    described = []
    for group_id in request.group_ids:
        group = streams.groups.get(group_id) if streams is not None else None
        if not group_id:
            described.append(_error(group_id, ErrorCode.INVALID_GROUP_ID, "The group id is invalid."))
            continue
        if group is None:
            described.append(_error(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found."))
            continue
        topology = None
        if group.topology is not None:
            topology = Described.Topology(
                epoch=group.topology.epoch,
                subtopologies=[
                    Described.Topology.Subtopology(
                        subtopology_id=s.subtopology_id,
                        source_topics=list(s.source_topics),
                        repartition_sink_topics=list(s.repartition_sink_topics),
                        state_changelog_topics=[_topic_info(t) for t in s.state_changelog_topics],
                        repartition_source_topics=[_topic_info(t) for t in s.repartition_source_topics],
                    )
                    for s in group.topology.subtopologies
                ],
            )
        members = [
            Described.Member(
                member_id=m.member_id,
                member_epoch=m.member_epoch,
                instance_id=m.instance_id,
                rack_id=m.rack_id,
                client_id=m.client_id,
                client_host=m.client_host,
                topology_epoch=m.topology_epoch,
                process_id=m.process_id,
                user_endpoint=Described.Member.Endpoint(host=m.user_endpoint.host, port=m.user_endpoint.port)
                if m.user_endpoint is not None
                else None,
                client_tags=[Described.Member.KeyValue(key=k, value=v) for k, v in m.client_tags],
                task_offsets=_task_offsets(m.task_offsets) if reports_offsets else [],
                task_end_offsets=_task_offsets(m.task_end_offsets) if reports_offsets else [],
                assignment=_assignment(m.assigned),
                target_assignment=_assignment(group.target.get(m.member_id, TasksTuple())),
                is_classic=False,
            )
            for m in sorted(group.members.values(), key=lambda m: m.member_id)
        ]
        status, description = DescriptionStatus.NOT_REQUESTED, None
        if version >= 1 and request.include_topology_description and streams is not None:
            status, description = streams.topology_description(group_id)
        described.append(
            Described(
                error_code=ErrorCode.NONE,
                error_message=None,
                group_id=group_id,
                group_state=group.state.value,
                group_epoch=group.group_epoch,
                assignment_epoch=group.assignment_epoch,
                topology=topology,
                members=members,
                authorized_operations=as_int32(GROUP_OPERATIONS if request.include_authorized_operations else None),
                topology_description=_description(description) if description is not None else None,
                topology_description_status=int(status),
                assignor_name=ASSIGNOR_NAME,
            )
        )
    return StreamsGroupDescribeResponse(version=version, throttle_time_ms=0, groups=described)


def _error(group_id: str, error: int, message: str | None) -> Any:
    return Described(
        error_code=error,
        error_message=message,
        group_id=group_id,
        group_state="",
        group_epoch=-1,
        assignment_epoch=-1,
        topology=None,
        members=[],
        authorized_operations=-2147483648,
        topology_description=None,
        topology_description_status=int(DescriptionStatus.NOT_REQUESTED),
        assignor_name=None,
    )


def _topic_info(t: TopicInfo) -> Any:
    return Described.Topology.Subtopology.TopicInfo(
        name=t.name,
        partitions=t.partitions,
        replication_factor=t.replication_factor,
        topic_configs=[Described.Member.KeyValue(key=k, value=v) for k, v in t.configs],
    )


def _task_offsets(offsets: Mapping[tuple[str, int], int]) -> list[Any]:
    return [
        Described.Member.TaskOffset(subtopology_id=sid, partition=p, offset=offset)
        for (sid, p), offset in sorted(offsets.items())
    ]


def _node(cls: Any, node: Node) -> Any:
    return cls.TopologyDescriptionNode(
        name=node.name,
        node_type=node.node_type,
        source_topics=list(node.source_topics),
        sink_topic=node.sink_topic,
        stores=list(node.stores),
        successors=list(node.successors),
    )


def _description(description: TopologyDescription) -> Any:
    Wire = Described.TopologyDescription
    Sub, Store = Wire.TopologyDescriptionSubtopology, Wire.TopologyDescriptionGlobalStore
    return Wire(
        subtopologies=[
            Sub(subtopology_id=s.subtopology_id, nodes=[_node(Sub, n) for n in s.nodes])
            for s in description.subtopologies
        ],
        global_stores=[
            Store(source=_node(Store, g.source), processor=_node(Store, g.processor)) for g in description.global_stores
        ],
    )


def _task_ids(tasks: Mapping[str, frozenset[int]]) -> list[Any]:
    return [
        Described.Member.Assignment.TaskIds(subtopology_id=sid, partitions=sorted(ps))
        for sid, ps in sorted(tasks.items())
    ]


def _assignment(tasks: TasksTuple) -> Any:
    return Described.Member.Assignment(
        active_tasks=_task_ids(tasks.active),
        standby_tasks=_task_ids(tasks.standby),
        warmup_tasks=_task_ids(tasks.warmup),
    )


def _filter(gate, handler, ctx, body, version, client):
    response = handler.handle(ctx, body, version, client)
    for group in response.groups:
        if not gate.allowed(client, Op.DESCRIBE, Res.GROUP, group.group_id):
            group.error_code = ErrorCode.GROUP_AUTHORIZATION_FAILED
            group.error_message = None
            group.members = []
            group.topology = None
            group.group_state = ""
        elif body.include_authorized_operations and group.error_code == ErrorCode.NONE:
            group.authorized_operations = as_int32(frozenset(gate.operations(client, Res.GROUP, group.group_id)))
    return response


def _refusal(api: KafkaApi, request: Any, version: int, error: int) -> Any:
    return api.empty_response(version, groups=[_error(g, error, None) for g in request.group_ids])


API = KafkaApi(
    StreamsGroupDescribeRequest,
    StreamsGroupDescribeResponse,
    (0, 1),
    handle_streams_group_describe,
    authorization=Filter(_filter),
    refusal=_refusal,
    read_only=True,
    cluster=refuse_unless_coordinator(groups_in("group_ids")),
)
