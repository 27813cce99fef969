"""A modern (KIP-848) group and its members: the epochs, the target and the current assignments.

`ModernGroup` is what consumer groups and share groups (KIP-932) have in common: a group epoch bumped
whenever what should be assigned changes (a member joins, leaves, changes its subscription; a
subscribed topic gains partitions, appears or goes), the target assignment computed for that epoch
(its assignment epoch), and members each at their own member epoch, with a session deadline. A
consumer group adds revocation: each partition's owner (`partition_owners`; its partition epoch is
that member's epoch, -1 if none) so a partition is handed over only once its previous owner gave it up.
"""

from __future__ import annotations

import enum

import attrs

from ..model import Protocol
from .reconciliation import MemberState

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


@attrs.frozen
class ClassicMemberMetadata:
    """A member of a consumer group that speaks the classic protocol (JoinGroup, SyncGroup, Heartbeat):
    its session timeout and the protocols (assignor names and ConsumerProtocol subscriptions) it sent."""

    session_timeout_ms: int
    supported_protocols: tuple[Protocol, ...]

    @property
    def protocol_name(self) -> str:
        return self.supported_protocols[0].name


class ModernGroupState(enum.Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


@attrs.define
class ConsumerMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: dict[str, frozenset[int]] = attrs.field(factory=dict)
    # the ids of the assigned topics when they were assigned: Kafka keys an assignment by topic id,
    # so a topic deleted and created again under its name is a new assignment the member is sent
    assigned_topic_ids: dict[str, str] = attrs.field(factory=dict)
    pending_revocation: dict[str, frozenset[int]] = attrs.field(factory=dict)
    session_deadline_ms: int | None = None
    rebalance_deadline_ms: int | None = None  # while it must revoke partitions (UNREVOKED_PARTITIONS)
    # A classic-protocol member (online migration, ADR 50): its metadata, and when it must join or sync
    classic: ClassicMemberMetadata | None = None
    join_deadline_ms: int | None = None
    sync_deadline_ms: int | None = None

    def subscription(self) -> tuple[tuple[str, ...], str | None]:
        return self.subscribed_topic_names, self.subscribed_topic_regex

    def deadlines(self) -> tuple[int, ...]:
        """When it is fenced unless it heartbeats (session), revokes (rebalance), joins or syncs (classic)."""
        times = (self.session_deadline_ms, self.rebalance_deadline_ms, self.join_deadline_ms, self.sync_deadline_ms)
        return tuple(d for d in times if d is not None)

    def assignment_by_id(self) -> tuple[dict[str, frozenset[int]], dict[str, str]]:
        """The assignment as the member was given it: partitions and their topics' ids."""
        return dict(self.assigned), dict(self.assigned_topic_ids)

    def take_topic_ids(self, metadata: dict[str, tuple[str, int]]) -> None:
        """Record the ids of the assigned topics (from the group's subscription metadata)."""
        self.assigned_topic_ids = {name: metadata[name][0] for name in self.assigned if name in metadata}


@attrs.define
class ConsumerGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ConsumerMember] = attrs.field(factory=dict)
    static_members: dict[str, str] = attrs.field(factory=dict)  # instance id -> member id
    target: dict[str, dict[str, frozenset[int]]] = attrs.field(factory=dict)  # member id -> assignment
    partition_owners: dict[tuple[str, int], str] = attrs.field(factory=dict)  # assigned or being revoked
    subscription_metadata: dict[str, tuple[str, int]] = attrs.field(factory=dict)  # topic -> (id, partitions)
    metadata_hash: int = 0  # KIP-1101: the subscribed topics' hash, written beside the group epoch
    assignor: str = ""
    state_timestamp_ms: int | None = None

    @property
    def state(self) -> ModernGroupState:
        if not self.members:
            return ModernGroupState.EMPTY
        if self.group_epoch != self.assignment_epoch:
            return ModernGroupState.ASSIGNING
        for m in self.members.values():
            if m.member_epoch != self.assignment_epoch or m.state is not MemberState.STABLE:
                return ModernGroupState.RECONCILING
        return ModernGroupState.STABLE

    def partition_epoch(self, topic: str, partition: int) -> int:
        """The epoch of the member owning the partition (assigned or being revoked), -1 if none."""
        owner = self.partition_owners.get((topic, partition))
        return -1 if owner is None else self.members[owner].member_epoch

    def release_partitions(self, member: ConsumerMember) -> None:
        for assignment in (member.assigned, member.pending_revocation):
            for topic, ps in assignment.items():
                for p in ps:
                    if self.partition_owners.get((topic, p)) == member.member_id:
                        del self.partition_owners[(topic, p)]

    def claim_partitions(self, member: ConsumerMember) -> None:
        for assignment in (member.assigned, member.pending_revocation):
            for topic, ps in assignment.items():
                for p in ps:
                    self.partition_owners[(topic, p)] = member.member_id
