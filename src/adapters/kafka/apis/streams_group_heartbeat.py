"""StreamsGroupHeartbeat (key 88): v0-1. KIP-1071's streams groups, as Kafka 4.2 serves them to Kafka
Streams with `group.protocol=streams`: a member joins (epoch 0) with its topology and process id,
heartbeats with the tasks it owns (served while `streams.version` is finalized at 1, Kafka 4.2's
level for new clusters; UpdateFeatures can turn it off), learns its active, standby and warm-up tasks from the
coordinator (the domain's StreamsGroupCoordinator), leaves with epoch -1.

The internal topics the coordinator finds missing (repartition and changelog topics, with the
partition counts it derived) are created here before the answer leaves, as Kafka's KafkaApis does,
with the configs the topology gives them (a changelog's `cleanup.policy=compact`); the answer still
says MISSING_INTERNAL_TOPICS and the next heartbeat finds them.

Version notes:
- v1 (Kafka 4.4, KIP-1331) has the same request; its answer carries the acceptable
recovery lag as an int64 (v0's int32 becomes `AcceptableRecoveryLagLegacy`, which no Kafka broker
sets: 0) and
`TopologyDescriptionRequired`, set while the broker keeps descriptions (a topology description plugin
is configured) and has none of the group's current topology epoch: the member then pushes it with
StreamsGroupTopologyDescriptionUpdate (key 93). The reported task offsets and end offsets are kept
per member for StreamsGroupDescribe, as Kafka 4.4 keeps them. Kafka 4.2's coordinator answers the
acceptable recovery lag and task offset interval as 0 (it sets neither); Kafka 4.4's answers its
`group.streams.acceptable.recovery.lag` (10000) and `group.streams.task.offset.interval.ms` (60000):
trafka answers as the release whose surface it serves.

Authorization (Kafka's KafkaApis.handleStreamsGroupHeartbeat): READ on the group; on join, DESCRIBE on
every topic the topology names, else TOPIC_AUTHORIZATION_FAILED; creating internal topics needs
CREATE on the cluster or on each topic, else they are not created and the status says which.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.features import STREAMS_VERSION
from trafka.domain.groups.streams import (
    Endpoint,
    Status,
    StreamsAnswer,
    StreamsHeartbeat,
    StreamsStatus,
    Subtopology,
    TasksTuple,
    TopicInfo,
    Topology,
)
from trafka.domain.security.acls import CLUSTER_NAME
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse

from ..api import KafkaApi, top_level_error
from ..connection.cluster import one_group, refuse_unless_coordinator
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, request_field
from .api_versions import feature_ceilings

if TYPE_CHECKING:
    from trafka.domain.catalog import TopicCatalog
    from trafka.domain.features import FeatureControl

    from ..api import HandlerRegistry
    from ..runtime.group_runtime import GroupRuntime
    from ..security.authorization import AuthorizationGate


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    groups: GroupRuntime
    features: FeatureControl
    authorization: AuthorizationGate | None
    registry: HandlerRegistry


Response = StreamsGroupHeartbeatResponse
API_KEY = 88


def handle_streams_group_heartbeat(
    ctx: Uses, request: StreamsGroupHeartbeatRequest, version: int, client: ClientInfo
) -> StreamsGroupHeartbeatResponse:
    if ctx.groups.streams is None or not ctx.features.finalized(feature_ceilings(ctx.registry)).get(STREAMS_VERSION):
        return _answer(version, StreamsAnswer(ErrorCode.UNSUPPORTED_VERSION, "The streams group protocol is disabled."))
    unsupported = _unsupported_feature(request, _kafka_44(ctx))
    if unsupported is not None:  # Kafka's answer carries the error alone
        return _answer(version, StreamsAnswer(ErrorCode.INVALID_REQUEST, unsupported))
    try:
        topology = _topology(request.topology) if request.topology is not None else None
        task_offsets = _task_offsets(request.task_offsets)
        task_end_offsets = _task_offsets(request.task_end_offsets)
    except KafkaError as error:
        return _answer(version, StreamsAnswer(error.code, error.message, member_id=request.member_id))
    gate = ctx.authorization
    if gate is not None and topology is not None:
        named = {t for s in topology.subtopologies for t in s.source_topics + s.repartition_sink_topics}
        named |= set(topology.internal_topics())
        if not all(gate.allowed(client, Op.DESCRIBE, Res.TOPIC, t) for t in named):
            return _answer(
                version,
                StreamsAnswer(
                    ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                    "The group uses topics that the client is not authorized to describe.",
                    member_id=request.member_id,
                ),
            )
    endpoint = request.user_endpoint
    heartbeat = StreamsHeartbeat(
        group_id=request.group_id,
        member_id=request.member_id,
        member_epoch=request.member_epoch,
        endpoint_information_epoch=request.endpoint_information_epoch,
        instance_id=request.instance_id,
        rack_id=request.rack_id,
        rebalance_timeout_ms=request.rebalance_timeout_ms,
        topology=topology,
        owned=_owned(request),
        process_id=request.process_id,
        user_endpoint=Endpoint(endpoint.host, endpoint.port) if endpoint is not None else None,
        client_tags=tuple((kv.key, kv.value) for kv in request.client_tags)
        if request.client_tags is not None
        else None,
        shutdown_application=request.shutdown_application,
        client_id=client.client_id,
        client_host=client.inet_address,  # as Kafka's InetAddress.toString(): /127.0.0.1
        task_offsets=task_offsets,
        task_end_offsets=task_end_offsets,
        asks_description=version >= 1,
    )
    answer = ctx.groups.streams_heartbeat(heartbeat)
    if not _kafka_44(ctx):  # Kafka 4.2's coordinator sets neither: its members get 0 for both
        answer = attrs.evolve(answer, acceptable_recovery_lag=0, task_offset_interval_ms=0)
    if answer.to_create:
        refused = _create_internal_topics(ctx, client, answer.to_create)
        if refused:
            statuses = answer.statuses + (
                Status(
                    StreamsStatus.MISSING_INTERNAL_TOPICS, f"Unauthorized to CREATE on topics {', '.join(refused)}."
                ),
            )
            answer = attrs.evolve(answer, statuses=statuses)
    return _answer(version, answer)


def _unsupported_feature(request: StreamsGroupHeartbeatRequest, kafka_44: bool) -> str | None:
    """Kafka's throwIfStreamsGroupHeartbeatRequestIsUsingUnsupportedFeatures, in its order: static
    membership (Kafka 4.4 serves it, trafka not yet), then, before Kafka 4.4, task offsets and non-empty
    warm-up tasks, then source topic regular expressions."""
    if request.instance_id is not None:
        return "Static membership is not yet supported."
    if not kafka_44:
        if request.task_offsets is not None:
            return "TaskOffsets are not supported yet."
        if request.task_end_offsets is not None:
            return "TaskEndOffsets are not supported yet."
        if request.warmup_tasks:
            return "WarmupTasks are not supported yet."
    for s in request.topology.subtopologies if request.topology is not None else ():
        if s.source_topic_regex:
            return "Regular expressions for source topics are not supported yet."
    return None


def _kafka_44(ctx: Uses) -> bool:
    """Kafka 4.4's surface: this API's v1 is served (unpinned, or `kafka_version="4.4"`)."""
    api = ctx.registry.get(API_KEY)
    return api is not None and api.max_version >= 1


def _create_internal_topics(ctx: Uses, client: ClientInfo, topics: tuple[TopicInfo, ...]) -> list[str]:
    """Create what the coordinator found missing; the names the principal may not CREATE."""
    gate = ctx.authorization
    refused = []
    may_create_all = gate is None or gate.allowed(client, Op.CREATE, Res.CLUSTER, CLUSTER_NAME)
    for info in topics:
        if not may_create_all and not gate.allowed(client, Op.CREATE, Res.TOPIC, info.name):  # type: ignore[union-attr]
            refused.append(info.name)
            continue
        try:
            ctx.catalog.create(info.name, info.partitions, info.replication_factor or -1, dict(info.configs))
        except KafkaError:
            pass  # created meanwhile, or refused by the broker's rules: the next heartbeat says what is missing
    return refused


def _topology(wire: Any) -> Topology:
    subtopologies = []
    for s in wire.subtopologies:
        sources = tuple(s.source_topics)
        repartition_sources = tuple(_topic_info(t) for t in s.repartition_source_topics)
        groups = []
        for g in s.copartition_groups:
            try:
                names = [sources[i] for i in g.source_topics] + [
                    repartition_sources[i].name for i in g.repartition_source_topics
                ]
            except IndexError:
                raise KafkaError(
                    ErrorCode.STREAMS_INVALID_TOPOLOGY,
                    f"Copartition group of subtopology {s.subtopology_id} refers to a topic that does not exist.",
                ) from None
            if any(i < 0 for i in list(g.source_topics) + list(g.repartition_source_topics)):
                raise KafkaError(ErrorCode.STREAMS_INVALID_TOPOLOGY, "Copartition group indexes must not be negative.")
            groups.append(frozenset(names))
        subtopologies.append(
            Subtopology(
                subtopology_id=s.subtopology_id,
                source_topics=sources,
                repartition_sink_topics=tuple(s.repartition_sink_topics),
                state_changelog_topics=tuple(_topic_info(t) for t in s.state_changelog_topics),
                repartition_source_topics=repartition_sources,
                copartition_groups=tuple(groups),
            )
        )
    return Topology(epoch=wire.epoch, subtopologies=tuple(subtopologies))


def _task_offsets(wire: Any) -> dict[tuple[str, int], int] | None:
    """A member's task offsets (null: unchanged); a task given twice is INVALID_REQUEST, as Kafka's
    MemberTaskOffsets."""
    if wire is None:
        return None
    offsets: dict[tuple[str, int], int] = {}
    for t in wire:
        if (t.subtopology_id, t.partition) in offsets:
            raise KafkaError(
                ErrorCode.INVALID_REQUEST,
                f"Task offsets contain a duplicate entry for subtopology {t.subtopology_id} and partition {t.partition}.",
            )
        offsets[(t.subtopology_id, t.partition)] = t.offset
    return offsets


def _topic_info(t: Any) -> TopicInfo:
    return TopicInfo(
        name=t.name,
        partitions=t.partitions,
        replication_factor=t.replication_factor,
        configs=tuple((c.key, c.value) for c in t.topic_configs),
    )


def _owned(request: StreamsGroupHeartbeatRequest) -> TasksTuple | None:
    if request.active_tasks is None and request.standby_tasks is None and request.warmup_tasks is None:
        return None

    def tasks(wire: Any) -> dict[str, frozenset[int]]:
        return {t.subtopology_id: frozenset(t.partitions) for t in wire or ()}

    return TasksTuple(tasks(request.active_tasks), tasks(request.standby_tasks), tasks(request.warmup_tasks))


def _task_ids(tasks: Any) -> list[Any]:
    return [Response.TaskIds(subtopology_id=sid, partitions=sorted(ps)) for sid, ps in sorted(tasks.items())]


def _answer(version: int, answer: StreamsAnswer) -> StreamsGroupHeartbeatResponse:
    assignment = answer.assignment
    endpoints = None
    if answer.partitions_by_endpoint is not None:
        Entry = Response.EndpointToPartitions
        endpoints = [
            Entry(
                user_endpoint=Entry.Endpoint(host=e.endpoint.host, port=e.endpoint.port),
                active_partitions=[Entry.TopicPartition(topic=t, partitions=list(ps)) for t, ps in e.active.items()],
                standby_partitions=[
                    Response.TopicPartition(topic=t, partitions=list(ps)) for t, ps in e.standby.items()
                ],
            )
            for e in answer.partitions_by_endpoint
        ]
    ok = answer.error == ErrorCode.NONE
    return Response(
        version=version,
        throttle_time_ms=0,
        error_code=answer.error,
        error_message=answer.message,
        member_id=answer.member_id,
        member_epoch=answer.member_epoch,
        heartbeat_interval_ms=answer.heartbeat_interval_ms,
        acceptable_recovery_lag_legacy=0,  # v0's field: neither Kafka 4.2 nor 4.4 sets it
        acceptable_recovery_lag=answer.acceptable_recovery_lag,
        topology_description_required=answer.topology_description_required and ok,
        task_offset_interval_ms=answer.task_offset_interval_ms,
        # an error answer's is empty, not null: Kafka's field default
        status=[Response.Status(status_code=s.code, status_detail=s.detail) for s in answer.statuses] if ok else [],
        active_tasks=_task_ids(assignment.active) if assignment is not None and ok else None,
        standby_tasks=_task_ids(assignment.standby) if assignment is not None and ok else None,
        warmup_tasks=_task_ids(assignment.warmup) if assignment is not None and ok else None,
        endpoint_information_epoch=answer.endpoint_information_epoch,
        partitions_by_user_endpoint=endpoints,
    )


API = KafkaApi(
    StreamsGroupHeartbeatRequest,
    StreamsGroupHeartbeatResponse,
    (0, 1),
    handle_streams_group_heartbeat,
    authorization=Checks((Check(Res.GROUP, Op.READ, request_field("group_id")),)),
    refusal=top_level_error,
    read_only=False,
    cluster=refuse_unless_coordinator(one_group),
)
