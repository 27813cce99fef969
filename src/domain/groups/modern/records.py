"""A consumer group's records in `__consumer_offsets`, as Kafka's group coordinator writes them.

Kafka keeps a KIP-848 group as five kinds of record, each keyed by group (and member), the last
value of a key winning and a tombstone (value None) deleting it:

    kind (key version)          key              value
    GROUP_EPOCH (3)             group            ConsumerGroupMetadataValue: the group epoch
    MEMBER_METADATA (5)         group, member    the member's subscription, ids, timeouts, assignor;
                                                 a classic member's session timeout and protocols
    TARGET_ASSIGNMENT_EPOCH (6) group            the assignment epoch
    TARGET_ASSIGNMENT_MEMBER(7) group, member    the member's target partitions (by topic id)
    CURRENT_ASSIGNMENT (8)      group, member    member epoch, previous epoch, state, assigned and
                                                 pending-revocation partitions (by topic id)

The coordinator marks what a call changed; `take_records` compares those keys with what was last
written and gives only the differences, so a heartbeat that changes nothing writes nothing. `restore`
rebuilds the groups from the last value of every key, as Kafka's replay does; members' sessions start
again at load time. Assignments are by topic id, as Kafka writes them; a topic deleted since is
dropped on restore.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Generic, Protocol, TypeVar

import attrs

from .model import ClassicMemberMetadata, ConsumerGroup, ConsumerMember
from .reconciliation import MemberState

_K = TypeVar("_K")
_R = TypeVar("_R", bound="_KindedRecord")
_V = TypeVar("_V")
_K_co = TypeVar("_K_co", covariant=True)
_V_co = TypeVar("_V_co", covariant=True)


class _Keyed(Protocol, Generic[_K_co, _V_co]):
    """A record of a compacted group log: its key, and its value or None for a tombstone."""

    @property
    def key(self) -> _K_co: ...

    @property
    def value(self) -> _V_co | None: ...


class _KindedRecord(Protocol):
    @property
    def kind(self) -> enum.Enum: ...

    @property
    def value(self) -> object | None: ...


class RecordKind(enum.IntEnum):
    GROUP_EPOCH = 3
    MEMBER_METADATA = 5
    TARGET_ASSIGNMENT_EPOCH = 6
    TARGET_ASSIGNMENT_MEMBER = 7
    CURRENT_ASSIGNMENT = 8


# Kafka's MemberState values (its modern.MemberState's bytes, read from the 4.2.2 jar) in the
# ConsumerGroup- and ShareGroupCurrentMemberAssignmentValue's State
STATE_CODES = {
    MemberState.STABLE: 0,
    MemberState.UNREVOKED_PARTITIONS: 1,
    MemberState.UNRELEASED_PARTITIONS: 2,
    MemberState.UNKNOWN: 127,
}
STATES_BY_CODE = {code: state for state, code in STATE_CODES.items()}

TopicIdPartitions = tuple[tuple[uuid.UUID, tuple[int, ...]], ...]


@attrs.frozen
class GroupEpoch:
    epoch: int
    metadata_hash: int = 0  # KIP-1101 (domain/groups/metadata_hash.py)


@attrs.frozen
class MemberMetadata:
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    rebalance_timeout_ms: int
    server_assignor: str | None
    classic: ClassicMemberMetadata | None = None  # tagged field 0: a member of the classic protocol


@attrs.frozen
class TargetAssignmentEpoch:
    assignment_epoch: int


@attrs.frozen
class TargetAssignmentMember:
    partitions: TopicIdPartitions


@attrs.frozen
class CurrentAssignment:
    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned: TopicIdPartitions
    pending_revocation: TopicIdPartitions


RecordValue = GroupEpoch | MemberMetadata | TargetAssignmentEpoch | TargetAssignmentMember | CurrentAssignment


@attrs.frozen
class ConsumerGroupRecord:
    kind: RecordKind
    group_id: str
    member_id: str | None  # None for the group's own records
    value: RecordValue | None  # None: a tombstone

    @property
    def key(self) -> tuple[RecordKind, str, str | None]:
        return (self.kind, self.group_id, self.member_id)


RecordKey = tuple[RecordKind, str, str | None]
MEMBER_KINDS = (RecordKind.MEMBER_METADATA, RecordKind.TARGET_ASSIGNMENT_MEMBER, RecordKind.CURRENT_ASSIGNMENT)


def by_topic_id(
    assignment: Mapping[str, frozenset[int]], topic_id: Callable[[str], uuid.UUID | None]
) -> TopicIdPartitions:
    result = []
    for name, partitions in sorted(assignment.items()):
        tid = topic_id(name)
        if tid is not None and partitions:
            result.append((tid, tuple(sorted(partitions))))
    return tuple(result)


def by_topic_name(
    partitions: TopicIdPartitions, topic_name: Callable[[uuid.UUID], str | None]
) -> dict[str, frozenset[int]]:
    result = {}
    for tid, ps in partitions:
        name = topic_name(tid)
        if name is not None:
            result[name] = frozenset(ps)
    return result


def current_values(
    group: ConsumerGroup, member_id: str | None, topic_id: Callable[[str], uuid.UUID | None]
) -> dict[RecordKey, RecordValue]:
    """The values the group's keys (or one member's) should hold now."""
    gid = group.group_id
    if member_id is None:
        return {
            (RecordKind.GROUP_EPOCH, gid, None): GroupEpoch(group.group_epoch, group.metadata_hash),
            (RecordKind.TARGET_ASSIGNMENT_EPOCH, gid, None): TargetAssignmentEpoch(group.assignment_epoch),
        }
    member = group.members.get(member_id)
    if member is None:
        return {}
    values: dict[RecordKey, RecordValue] = {
        (RecordKind.MEMBER_METADATA, gid, member_id): MemberMetadata(
            member.instance_id,
            member.rack_id,
            member.client_id,
            member.client_host,
            member.subscribed_topic_names,
            member.subscribed_topic_regex,
            member.rebalance_timeout_ms,
            member.server_assignor,
            member.classic,
        ),
        (RecordKind.CURRENT_ASSIGNMENT, gid, member_id): CurrentAssignment(
            member.member_epoch,
            member.previous_member_epoch,
            STATE_CODES[member.state],
            by_topic_id(member.assigned, topic_id),
            by_topic_id(member.pending_revocation, topic_id),
        ),
    }
    if member_id in group.target:
        values[(RecordKind.TARGET_ASSIGNMENT_MEMBER, gid, member_id)] = TargetAssignmentMember(
            by_topic_id(group.target[member_id], topic_id)
        )
    return values


def last_values(records: Iterable[_Keyed[_K, _V]]) -> dict[_K, _V]:
    """The last value of every key not deleted since (records in log order; a None value deletes):
    what a compacted log of group records says, for the consumer and the share groups alike."""
    values: dict[_K, _V] = {}
    for record in records:
        if record.value is None:
            values.pop(record.key, None)
        else:
            values[record.key] = record.value
    return values


# Kafka's order of a group's tombstones (ModernGroup.createGroupTombstoneRecords, removeMember): a
# member's current assignment, its target assignment, the target assignment epoch, the member's
# metadata, the group epoch. Kafka's replay refuses a member metadata tombstone before the member's
# assignment tombstone, so Kafka could not load a log written in another order.
TOMBSTONE_ORDER = (
    "CURRENT_ASSIGNMENT",
    "TARGET_ASSIGNMENT_MEMBER",
    "TARGET_ASSIGNMENT_EPOCH",
    "MEMBER_METADATA",
    "GROUP_EPOCH",
)


def in_kafka_order(records: list[_R]) -> list[_R]:
    """Tombstones first, in Kafka's order of kinds (TOMBSTONE_ORDER), then the values as they came."""

    def rank(record: _R) -> int:
        name = record.kind.name
        return TOMBSTONE_ORDER.index(name) if name in TOMBSTONE_ORDER else len(TOMBSTONE_ORDER)

    tombstones = sorted((r for r in records if r.value is None), key=rank)
    return tombstones + [r for r in records if r.value is not None]


def record_changes(written: dict[_K, _V], keys: Iterable[_K], values: Mapping[_K, _V]) -> list[tuple[_K, _V | None]]:
    """What to append so the log says `values` for `keys`: each value that differs from what was last
    written, and a tombstone (None) for a key written before and gone now; `written` follows."""
    changes: list[tuple[_K, _V | None]] = []
    for key in keys:
        value = values.get(key)
        if value is None:
            if written.pop(key, None) is not None:
                changes.append((key, None))
        elif written.get(key) != value:
            written[key] = value
            changes.append((key, value))
    return changes


def changed_records(
    dirty: Iterable[tuple[str, str | None]],
    groups: Mapping[str, ConsumerGroup],
    written: dict[RecordKey, RecordValue],
    topic_id: Callable[[str], uuid.UUID | None],
) -> list[ConsumerGroupRecord]:
    """The records to write for the (group, member or None) keys a call changed, in Kafka's order: the
    keys whose value changed, tombstones for those gone; `written` follows."""
    records: list[ConsumerGroupRecord] = []
    for gid, mid in sorted(dirty, key=lambda k: (k[0], k[1] is not None, k[1] or "")):
        group = groups.get(gid)
        values = current_values(group, mid, topic_id) if group is not None else {}
        kinds = MEMBER_KINDS if mid is not None else (RecordKind.GROUP_EPOCH, RecordKind.TARGET_ASSIGNMENT_EPOCH)
        changes = record_changes(written, [(kind, gid, mid) for kind in kinds], values)
        records.extend(ConsumerGroupRecord(kind, gid, mid, value) for (kind, _, _), value in changes)
    return in_kafka_order(records)


def restore(
    records: Iterable[ConsumerGroupRecord], topic_name: Callable[[uuid.UUID], str | None]
) -> dict[str, ConsumerGroup]:
    """The groups the last value of each key describes (records in log order; tombstones delete)."""
    latest = last_values(records)
    groups: dict[str, ConsumerGroup] = {}
    for (_, gid, mid), value in latest.items():
        group = groups.setdefault(gid, ConsumerGroup(gid))
        if isinstance(value, GroupEpoch):
            group.group_epoch = value.epoch
            group.metadata_hash = value.metadata_hash
        elif isinstance(value, TargetAssignmentEpoch):
            group.assignment_epoch = value.assignment_epoch
        elif isinstance(value, TargetAssignmentMember) and mid is not None:
            group.target[mid] = by_topic_name(value.partitions, topic_name)
        elif isinstance(value, MemberMetadata) and mid is not None:
            member = group.members.setdefault(mid, ConsumerMember(mid))
            member.instance_id = value.instance_id
            member.rack_id = value.rack_id
            member.client_id = value.client_id
            member.client_host = value.client_host
            member.subscribed_topic_names = value.subscribed_topic_names
            member.subscribed_topic_regex = value.subscribed_topic_regex
            member.rebalance_timeout_ms = value.rebalance_timeout_ms
            member.server_assignor = value.server_assignor
            member.classic = value.classic
        elif isinstance(value, CurrentAssignment) and mid is not None:
            member = group.members.setdefault(mid, ConsumerMember(mid))
            member.member_epoch = value.member_epoch
            member.previous_member_epoch = value.previous_member_epoch
            member.state = STATES_BY_CODE.get(value.state, MemberState.UNKNOWN)
            member.assigned = by_topic_name(value.assigned, topic_name)
            member.pending_revocation = by_topic_name(value.pending_revocation, topic_name)
    for group in groups.values():
        # a member whose metadata was deleted (tombstone) but not its assignment is not a member
        for mid in [m for m in group.members if (RecordKind.MEMBER_METADATA, group.group_id, m) not in latest]:
            del group.members[mid]
        group.target = {m: a for m, a in group.target.items() if m in group.members}
        for member in group.members.values():
            if member.instance_id is not None:
                group.static_members[member.instance_id] = member.member_id
            group.claim_partitions(member)
    return groups
