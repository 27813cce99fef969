"""A share group's records in `__consumer_offsets`, as Kafka 4.2's group coordinator writes them.

Kafka keeps a share group (KIP-932) as six kinds of record, keyed by group (and member), the last
value of a key winning and a tombstone (value None) deleting it. The key's int16 version is the
record type (Kafka's `apiKey` of the coordinator record):

    kind (key version)             key              value
    MEMBER_METADATA (10)           group, member    ShareGroupMemberMetadataValue: rack, client id and
                                                    host, subscribed topic names
    GROUP_EPOCH (11)               group            ShareGroupMetadataValue: the group epoch
    TARGET_ASSIGNMENT_EPOCH (12)   group            the assignment epoch
    TARGET_ASSIGNMENT_MEMBER (13)  group, member    the member's target partitions (by topic id)
    CURRENT_ASSIGNMENT (14)        group, member    member epoch, previous epoch, state, assigned
                                                    partitions (by topic id)
    STATE_PARTITION_METADATA (15)  group            the topic partitions whose share-group state is
                                                    initialized (and being initialized or deleted)

The value shapes of 11-13 are the consumer group's (`modern.records`), reused. As for consumer
groups, the coordinator marks what a call changed and `take_records` gives only the keys whose value
differs from what was last written; `restore` rebuilds the groups from the last value of each key.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable, Iterable, Mapping

import attrs

from ..modern.model import ConsumerGroup, ConsumerMember
from ..modern.reconciliation import MemberState
from ..modern.records import (
    STATE_CODES,
    STATES_BY_CODE,
    GroupEpoch,
    TargetAssignmentEpoch,
    TargetAssignmentMember,
    TopicIdPartitions,
    by_topic_id,
    by_topic_name,
    last_values,
)


class ShareRecordKind(enum.IntEnum):
    MEMBER_METADATA = 10
    GROUP_EPOCH = 11
    TARGET_ASSIGNMENT_EPOCH = 12
    TARGET_ASSIGNMENT_MEMBER = 13
    CURRENT_ASSIGNMENT = 14
    STATE_PARTITION_METADATA = 15


@attrs.frozen
class ShareMemberMetadata:
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]


@attrs.frozen
class ShareCurrentAssignment:
    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned: TopicIdPartitions


# (topic id, topic name, partitions) and (topic id, topic name), as ShareGroupStatePartitionMetadataValue
TopicPartitionsInfo = tuple[tuple[uuid.UUID, str, tuple[int, ...]], ...]
TopicInfo = tuple[tuple[uuid.UUID, str], ...]


@attrs.frozen
class StatePartitionMetadata:
    initializing: TopicPartitionsInfo = ()
    initialized: TopicPartitionsInfo = ()
    deleting: TopicInfo = ()


ShareRecordValue = (
    GroupEpoch
    | ShareMemberMetadata
    | TargetAssignmentEpoch
    | TargetAssignmentMember
    | ShareCurrentAssignment
    | StatePartitionMetadata
)
ShareRecordKey = tuple[ShareRecordKind, str, str | None]
MEMBER_KINDS = (
    ShareRecordKind.MEMBER_METADATA,
    ShareRecordKind.TARGET_ASSIGNMENT_MEMBER,
    ShareRecordKind.CURRENT_ASSIGNMENT,
)
GROUP_KINDS = (
    ShareRecordKind.GROUP_EPOCH,
    ShareRecordKind.TARGET_ASSIGNMENT_EPOCH,
    ShareRecordKind.STATE_PARTITION_METADATA,
)


@attrs.frozen
class ShareGroupRecord:
    kind: ShareRecordKind
    group_id: str
    member_id: str | None  # None for the group's own records
    value: ShareRecordValue | None  # None: a tombstone

    @property
    def key(self) -> ShareRecordKey:
        return (self.kind, self.group_id, self.member_id)


def state_partitions(
    partitions: Mapping[str, Iterable[int]], topic_id: Callable[[str], uuid.UUID | None]
) -> StatePartitionMetadata:
    """The initialized share-partitions of a group (topic name -> partitions), by topic id."""
    initialized = []
    for name, ps in sorted(partitions.items()):
        tid = topic_id(name)
        if tid is not None and ps:
            initialized.append((tid, name, tuple(sorted(ps))))
    return StatePartitionMetadata(initialized=tuple(initialized))


def current_values(
    group: ConsumerGroup, member_id: str | None, topic_id: Callable[[str], uuid.UUID | None]
) -> dict[ShareRecordKey, ShareRecordValue]:
    """The values the group's own keys (or one member's) should hold now (not the state partitions)."""
    gid = group.group_id
    if member_id is None:
        return {
            (ShareRecordKind.GROUP_EPOCH, gid, None): GroupEpoch(group.group_epoch, group.metadata_hash),
            (ShareRecordKind.TARGET_ASSIGNMENT_EPOCH, gid, None): TargetAssignmentEpoch(group.assignment_epoch),
        }
    member = group.members.get(member_id)
    if member is None:
        return {}
    values: dict[ShareRecordKey, ShareRecordValue] = {
        (ShareRecordKind.MEMBER_METADATA, gid, member_id): ShareMemberMetadata(
            member.rack_id, member.client_id, member.client_host, member.subscribed_topic_names
        ),
        (ShareRecordKind.CURRENT_ASSIGNMENT, gid, member_id): ShareCurrentAssignment(
            member.member_epoch,
            member.previous_member_epoch,
            STATE_CODES[member.state],
            by_topic_id(member.assigned, topic_id),
        ),
    }
    if member_id in group.target:
        values[(ShareRecordKind.TARGET_ASSIGNMENT_MEMBER, gid, member_id)] = TargetAssignmentMember(
            by_topic_id(group.target[member_id], topic_id)
        )
    return values


def latest(records: Iterable[ShareGroupRecord]) -> dict[ShareRecordKey, ShareRecordValue]:
    """The last value of every key not deleted since (records in log order)."""
    return last_values(records)


def restore(
    records: Iterable[ShareGroupRecord], topic_name: Callable[[uuid.UUID], str | None], assignor: str
) -> dict[str, ConsumerGroup]:
    """The share groups the last value of each key describes. A member whose metadata was deleted is
    not a member; assignments to topics deleted since are dropped."""
    values = latest(records)
    groups: dict[str, ConsumerGroup] = {}
    for (_, gid, mid), value in values.items():
        group = groups.setdefault(gid, ConsumerGroup(gid, assignor=assignor))
        if isinstance(value, GroupEpoch):
            group.group_epoch = value.epoch
            group.metadata_hash = value.metadata_hash
        elif isinstance(value, TargetAssignmentEpoch):
            group.assignment_epoch = value.assignment_epoch
        elif isinstance(value, TargetAssignmentMember) and mid is not None:
            group.target[mid] = by_topic_name(value.partitions, topic_name)
        elif isinstance(value, ShareMemberMetadata) and mid is not None:
            member = group.members.setdefault(mid, ConsumerMember(mid))
            member.rack_id = value.rack_id
            member.client_id = value.client_id
            member.client_host = value.client_host
            member.subscribed_topic_names = value.subscribed_topic_names
        elif isinstance(value, ShareCurrentAssignment) and mid is not None:
            member = group.members.setdefault(mid, ConsumerMember(mid))
            member.member_epoch = value.member_epoch
            member.previous_member_epoch = value.previous_member_epoch
            member.state = STATES_BY_CODE.get(value.state, MemberState.STABLE)
            member.assigned = by_topic_name(value.assigned, topic_name)
    for group in groups.values():
        for mid in [m for m in group.members if (ShareRecordKind.MEMBER_METADATA, group.group_id, m) not in values]:
            del group.members[mid]
        group.target = {m: a for m, a in group.target.items() if m in group.members}
    return groups
