"""A streams group's records in `__consumer_offsets`, as Kafka's group coordinator writes them.

Kafka keeps a streams group as six kinds of record, each keyed by group (and member), the last value
of a key winning and a tombstone (value None) deleting it:

    kind (key version)           key              value
    METADATA (17)                group            the group epoch
    MEMBER_METADATA (19)         group, member    process id, endpoint, client tags, topology epoch...
    TARGET_ASSIGNMENT_EPOCH (20) group            the assignment epoch
    TARGET_ASSIGNMENT_MEMBER(21) group, member    the member's target tasks
    CURRENT_ASSIGNMENT (22)      group, member    member epoch, previous epoch, state, assigned and
                                                  pending-revocation tasks
    TOPOLOGY (23)                group            the topology the members sent

The coordinator marks what a call changed; `changes` compares those keys with what was last written
and gives only the differences. `restore` rebuilds the groups from the last value of every key, as
Kafka's replay does; members' sessions start again at load time.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping

import attrs

from ..modern.records import last_values, record_changes
from .model import Endpoint, StreamsGroup, StreamsMember
from .tasks import MemberState, TasksTuple
from .topology import Topology


class StreamsRecordKind(enum.IntEnum):
    METADATA = 17
    MEMBER_METADATA = 19
    TARGET_ASSIGNMENT_EPOCH = 20
    TARGET_ASSIGNMENT_MEMBER = 21
    CURRENT_ASSIGNMENT = 22
    TOPOLOGY = 23


GROUP_KINDS = (StreamsRecordKind.METADATA, StreamsRecordKind.TARGET_ASSIGNMENT_EPOCH, StreamsRecordKind.TOPOLOGY)

# Kafka's streams MemberState codes in StreamsGroupCurrentMemberAssignmentValue.State (its
# streams.MemberState's bytes, read from the 4.2.2 jar: they start at 1; UNKNOWN, 127, is read as STABLE)
STATE_CODES = {MemberState.STABLE: 1, MemberState.UNREVOKED_TASKS: 2, MemberState.UNRELEASED_TASKS: 3}
STATES_BY_CODE = {code: state for state, code in STATE_CODES.items()}


@attrs.frozen
class GroupEpoch:
    epoch: int
    assignment_configs: tuple[tuple[str, str], ...] = ()  # Kafka's LastAssignmentConfigs
    metadata_hash: int = 0  # KIP-1101 (domain/groups/metadata_hash.py)
    validated_topology_epoch: int = -1  # the topology epoch last configured ready; -1: none


@attrs.frozen
class MemberMetadata:
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    topology_epoch: int
    process_id: str
    user_endpoint: tuple[str, int] | None
    client_tags: tuple[tuple[str, str], ...]


@attrs.frozen
class AssignmentEpoch:
    epoch: int


@attrs.frozen
class TargetTasks:
    tasks: TasksTuple


@attrs.frozen
class CurrentAssignment:
    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned: TasksTuple
    pending_revocation: TasksTuple


StreamsRecordValue = GroupEpoch | MemberMetadata | AssignmentEpoch | TargetTasks | CurrentAssignment | Topology
StreamsRecordKey = tuple[StreamsRecordKind, str, str | None]


@attrs.frozen
class StreamsGroupRecord:
    kind: StreamsRecordKind
    group_id: str
    member_id: str | None  # None for the group's own records
    value: StreamsRecordValue | None  # None: a tombstone

    @property
    def key(self) -> StreamsRecordKey:
        return (self.kind, self.group_id, self.member_id)


def changes(
    written: dict[StreamsRecordKey, StreamsRecordValue],
    dirty: Iterable[tuple[str, str | None]],
    wanted: Mapping[tuple[str, str | None], Mapping[StreamsRecordKey, StreamsRecordValue]],
) -> list[StreamsGroupRecord]:
    """The records that bring `written` to `wanted` for the `dirty` (group, member) keys; `written`
    is updated. A key no longer wanted gets a tombstone."""
    records: list[StreamsGroupRecord] = []
    for gid, mid in sorted(dirty, key=lambda k: (k[0], k[1] or "")):
        want = wanted.get((gid, mid), {})
        kinds = GROUP_KINDS if mid is None else tuple(k for k in StreamsRecordKind if k not in GROUP_KINDS)
        for (kind, _, _), value in record_changes(written, [(kind, gid, mid) for kind in kinds], want):
            records.append(StreamsGroupRecord(kind, gid, mid, value))
    return records


def current_values(group: StreamsGroup, member_id: str | None) -> dict[StreamsRecordKey, StreamsRecordValue]:
    """The values the group's keys (or one member's) should hold now."""
    gid = group.group_id
    if member_id is None:
        values: dict[StreamsRecordKey, StreamsRecordValue] = {
            (StreamsRecordKind.METADATA, gid, None): GroupEpoch(
                group.group_epoch,
                group.last_assignment_configs or (),
                group.metadata_hash,
                group.validated_topology_epoch,
            ),
            (StreamsRecordKind.TARGET_ASSIGNMENT_EPOCH, gid, None): AssignmentEpoch(group.assignment_epoch),
        }
        if group.topology is not None:
            values[(StreamsRecordKind.TOPOLOGY, gid, None)] = group.topology
        return values
    member = group.members.get(member_id)
    if member is None:
        return {}
    endpoint = member.user_endpoint
    values = {
        (StreamsRecordKind.MEMBER_METADATA, gid, member_id): MemberMetadata(
            member.instance_id,
            member.rack_id,
            member.client_id,
            member.client_host,
            member.rebalance_timeout_ms,
            member.topology_epoch,
            member.process_id,
            (endpoint.host, endpoint.port) if endpoint is not None else None,
            member.client_tags,
        ),
        (StreamsRecordKind.CURRENT_ASSIGNMENT, gid, member_id): CurrentAssignment(
            member.member_epoch,
            member.previous_member_epoch,
            STATE_CODES[member.state],
            member.assigned,
            member.pending_revocation,
        ),
    }
    if member_id in group.target:
        values[(StreamsRecordKind.TARGET_ASSIGNMENT_MEMBER, gid, member_id)] = TargetTasks(group.target[member_id])
    return values


def restore(
    records: Iterable[StreamsGroupRecord], session_deadline_ms: int
) -> tuple[dict[StreamsRecordKey, StreamsRecordValue], dict[str, StreamsGroup]]:
    """The last value of every key (records in log order), and the groups they describe; members'
    sessions start again (`session_deadline_ms`)."""
    last: dict[StreamsRecordKey, StreamsRecordValue] = last_values(records)
    groups: dict[str, StreamsGroup] = {}
    for (_kind, gid, mid), value in sorted(last.items(), key=lambda kv: (kv[0][0] not in GROUP_KINDS, kv[0][0])):
        group = groups.setdefault(gid, StreamsGroup(gid))
        if isinstance(value, GroupEpoch):
            group.group_epoch = value.epoch
            group.last_assignment_configs = value.assignment_configs or None
            group.metadata_hash = value.metadata_hash
            group.validated_topology_epoch = value.validated_topology_epoch
        elif isinstance(value, AssignmentEpoch):
            group.assignment_epoch = value.epoch
        elif isinstance(value, Topology):
            group.topology = value
        elif mid is not None:
            member = group.members.setdefault(mid, StreamsMember(mid))
            member.session_deadline_ms = session_deadline_ms
            if isinstance(value, MemberMetadata):
                member.instance_id, member.rack_id = value.instance_id, value.rack_id
                member.client_id, member.client_host = value.client_id, value.client_host
                member.rebalance_timeout_ms, member.topology_epoch = value.rebalance_timeout_ms, value.topology_epoch
                member.process_id, member.client_tags = value.process_id, value.client_tags
                member.user_endpoint = Endpoint(*value.user_endpoint) if value.user_endpoint else None
            elif isinstance(value, TargetTasks):
                group.target[mid] = value.tasks
            elif isinstance(value, CurrentAssignment):
                member.member_epoch, member.previous_member_epoch = value.member_epoch, value.previous_member_epoch
                member.state = STATES_BY_CODE.get(value.state, MemberState.STABLE)
                member.assigned, member.pending_revocation = value.assigned, value.pending_revocation
    for group in groups.values():
        for member in group.members.values():
            group.claim(member)
    return last, groups
