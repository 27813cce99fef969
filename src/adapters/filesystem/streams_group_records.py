"""KIP-1071 streams group records in `__consumer_offsets`: the domain's `StreamsGroupRecord` to and
from Kafka's keys (int16 key version = record type, then group [and member]) and flexible values
(Kafka's StreamsGroup*Key/Value schemas)."""

from __future__ import annotations

from typing import Any

from trafka.domain.groups.streams import Subtopology, TopicInfo, Topology
from trafka.domain.groups.streams.records import (
    AssignmentEpoch,
    CurrentAssignment,
    GroupEpoch,
    MemberMetadata,
    StreamsGroupRecord,
    StreamsRecordKind,
    TargetTasks,
)
from trafka.domain.groups.streams.tasks import TasksTuple

from .metadata_records import (
    STREAMS_GROUP_RECORDS,
    decode_group_key,
    decode_versioned,
    encode_group_key,
    encode_versioned,
)

Kind = StreamsRecordKind
# Kafka's key and value classes of each kind, from the one table the dump-log decoder reads too (the
# kind is the key version).
KEYS: dict[StreamsRecordKind, Any] = {kind: STREAMS_GROUP_RECORDS[int(kind)][0] for kind in StreamsRecordKind}
VALUES: dict[StreamsRecordKind, Any] = {kind: STREAMS_GROUP_RECORDS[int(kind)][1] for kind in StreamsRecordKind}
KEY_VERSIONS = frozenset(int(kind) for kind in StreamsRecordKind)
VALUE_VERSION = 0


def encode_key(record: StreamsGroupRecord) -> bytes:
    return encode_group_key(KEYS, record.kind, record.group_id, record.member_id)


def _task_ids(cls: Any, tasks: Any) -> list[Any]:
    return [cls(subtopology_id=sid, partitions=sorted(ps)) for sid, ps in sorted(tasks.items())]


def _tasks(entries: Any) -> dict[str, frozenset[int]]:
    return {e.subtopology_id: frozenset(e.partitions) for e in entries}


def encode_value(record: StreamsGroupRecord) -> bytes | None:
    v = record.value
    if v is None:
        return None
    cls = VALUES[record.kind]
    if isinstance(v, GroupEpoch):
        configs = [cls.LastAssignmentConfig(key=k, value=c) for k, c in v.assignment_configs]
        value = cls(
            version=VALUE_VERSION,
            epoch=v.epoch,
            metadata_hash=v.metadata_hash,
            validated_topology_epoch=v.validated_topology_epoch,
            last_assignment_configs=configs,
        )
    elif isinstance(v, AssignmentEpoch):
        value = cls(version=VALUE_VERSION, assignment_epoch=v.epoch)
    elif isinstance(v, MemberMetadata):
        endpoint = cls.Endpoint(host=v.user_endpoint[0], port=v.user_endpoint[1]) if v.user_endpoint else None
        value = cls(
            version=VALUE_VERSION,
            instance_id=v.instance_id,
            rack_id=v.rack_id,
            client_id=v.client_id,
            client_host=v.client_host,
            rebalance_timeout_ms=v.rebalance_timeout_ms,
            topology_epoch=v.topology_epoch,
            process_id=v.process_id,
            user_endpoint=endpoint,
            client_tags=[cls.KeyValue(key=k, value=val) for k, val in v.client_tags],
        )
    elif isinstance(v, TargetTasks):
        t = cls.TaskIds
        value = cls(
            version=VALUE_VERSION,
            active_tasks=_task_ids(t, v.tasks.active),
            standby_tasks=_task_ids(t, v.tasks.standby),
            warmup_tasks=_task_ids(t, v.tasks.warmup),
        )
    elif isinstance(v, CurrentAssignment):
        t = cls.TaskIds
        value = cls(
            version=VALUE_VERSION,
            member_epoch=v.member_epoch,
            previous_member_epoch=v.previous_member_epoch,
            state=v.state,
            active_tasks=_task_ids(t, v.assigned.active),
            standby_tasks=_task_ids(t, v.assigned.standby),
            warmup_tasks=_task_ids(t, v.assigned.warmup),
            active_tasks_pending_revocation=_task_ids(t, v.pending_revocation.active),
            standby_tasks_pending_revocation=_task_ids(t, v.pending_revocation.standby),
            warmup_tasks_pending_revocation=_task_ids(t, v.pending_revocation.warmup),
        )
    else:
        value = _topology_value(cls, v)
    return encode_versioned(value, VALUE_VERSION)


def _topology_value(cls: Any, topology: Topology) -> Any:
    sub = cls.Subtopology

    def info(t: TopicInfo) -> Any:
        return sub.TopicInfo(
            name=t.name,
            partitions=t.partitions,
            replication_factor=t.replication_factor,
            topic_configs=[sub.TopicInfo.TopicConfig(key=k, value=v) for k, v in t.configs],
        )

    subtopologies = []
    for s in topology.subtopologies:
        repartition_names = [t.name for t in s.repartition_source_topics]
        groups = [
            sub.CopartitionGroup(
                source_topics=[s.source_topics.index(t) for t in sorted(g) if t in s.source_topics],
                source_topic_regex=[],
                repartition_source_topics=[repartition_names.index(t) for t in sorted(g) if t in repartition_names],
            )
            for g in s.copartition_groups
        ]
        subtopologies.append(
            sub(
                subtopology_id=s.subtopology_id,
                source_topics=list(s.source_topics),
                source_topic_regex=[],
                state_changelog_topics=[info(t) for t in s.state_changelog_topics],
                repartition_sink_topics=list(s.repartition_sink_topics),
                repartition_source_topics=[info(t) for t in s.repartition_source_topics],
                copartition_groups=groups,
            )
        )
    return cls(version=VALUE_VERSION, epoch=topology.epoch, subtopologies=subtopologies)


def _topology(v: Any) -> Topology:
    def info(t: Any) -> TopicInfo:
        return TopicInfo(t.name, t.partitions, t.replication_factor, tuple((c.key, c.value) for c in t.topic_configs))

    subtopologies = []
    for s in v.subtopologies:
        repartition = tuple(info(t) for t in s.repartition_source_topics)
        groups = tuple(
            frozenset(
                [s.source_topics[i] for i in g.source_topics]
                + [repartition[i].name for i in g.repartition_source_topics]
            )
            for g in s.copartition_groups
        )
        subtopologies.append(
            Subtopology(
                s.subtopology_id,
                tuple(s.source_topics),
                tuple(s.repartition_sink_topics),
                tuple(info(t) for t in s.state_changelog_topics),
                repartition,
                groups,
            )
        )
    return Topology(v.epoch, tuple(subtopologies))


def decode(key: bytes, value: bytes | None) -> StreamsGroupRecord | None:
    """The record, or None for a key version that is not a streams group's."""
    found = decode_group_key(KEYS, key)
    if found is None:
        return None
    version, group_id, member_id = found
    kind = StreamsRecordKind(version)
    if value is None:
        return StreamsGroupRecord(kind, group_id, member_id, None)
    v = decode_versioned(VALUES[kind], value)
    decoded: Any
    if kind is Kind.METADATA:
        decoded = GroupEpoch(
            v.epoch,
            tuple((c.key, c.value) for c in v.last_assignment_configs or ()),
            v.metadata_hash or 0,
            -1 if v.validated_topology_epoch is None else v.validated_topology_epoch,
        )
    elif kind is Kind.TARGET_ASSIGNMENT_EPOCH:
        decoded = AssignmentEpoch(v.assignment_epoch)
    elif kind is Kind.MEMBER_METADATA:
        endpoint = (v.user_endpoint.host, v.user_endpoint.port) if v.user_endpoint is not None else None
        decoded = MemberMetadata(
            v.instance_id,
            v.rack_id,
            v.client_id,
            v.client_host,
            v.rebalance_timeout_ms,
            v.topology_epoch,
            v.process_id,
            endpoint,
            tuple((kv.key, kv.value) for kv in v.client_tags),
        )
    elif kind is Kind.TARGET_ASSIGNMENT_MEMBER:
        decoded = TargetTasks(TasksTuple(_tasks(v.active_tasks), _tasks(v.standby_tasks), _tasks(v.warmup_tasks)))
    elif kind is Kind.CURRENT_ASSIGNMENT:
        decoded = CurrentAssignment(
            v.member_epoch,
            v.previous_member_epoch,
            v.state,
            TasksTuple(_tasks(v.active_tasks), _tasks(v.standby_tasks), _tasks(v.warmup_tasks)),
            TasksTuple(
                _tasks(v.active_tasks_pending_revocation),
                _tasks(v.standby_tasks_pending_revocation),
                _tasks(v.warmup_tasks_pending_revocation),
            ),
        )
    else:
        decoded = _topology(v)
    return StreamsGroupRecord(kind, group_id, member_id, decoded)
