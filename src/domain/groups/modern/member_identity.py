"""Who a ConsumerGroupHeartbeat speaks for (KIP-848): a new or known dynamic member, or a static one
(KIP-345) that may replace the member of its instance id that left, and the member epoch check that
fences a stale or confused member. Pure functions over a group, split from the coordinator (issue 40,
item 6); a replaced member's key is marked in the coordinator's `dirty` set for its records."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import attrs

from ...errors import ErrorCode, KafkaError
from .assignors import Assignment
from .heartbeat import ConsumerHeartbeat
from .model import LEAVE_GROUP_STATIC_MEMBER_EPOCH, ConsumerGroup, ConsumerMember
from .reconciliation import MemberState


class EpochClaim(Protocol):
    """What a heartbeat says of its member: its epoch and the partitions it owns."""

    @property
    def member_epoch(self) -> int: ...

    @property
    def owned(self) -> Assignment | None: ...


def dynamic_member(group: ConsumerGroup, member_id: str, request: EpochClaim) -> ConsumerMember:
    """The member a heartbeat without an instance id speaks for: new at epoch 0, else the one it names,
    its epoch checked."""
    member = group.members.get(member_id)
    if member is None:
        if request.member_epoch != 0:
            raise KafkaError(
                ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}."
            )
        return ConsumerMember(member_id)
    if request.member_epoch == 0:
        # A member rejoining under its id (after it was fenced, or lost its state) starts over,
        # owning nothing; its target stays, so it gets its partitions back if nobody took them.
        group.release_partitions(member)
        member.assigned, member.pending_revocation = {}, {}
        member.member_epoch = member.previous_member_epoch = 0
        member.state = MemberState.STABLE
        member.rebalance_deadline_ms = None
        return member
    check_epoch(member, request)
    return member


def static_member(
    group: ConsumerGroup, member_id: str, instance_id: str, request: EpochClaim, dirty: set[tuple[str, str | None]]
) -> ConsumerMember:
    """The member a heartbeat with an instance id speaks for (KIP-345's static membership): a rejoin
    under a new member id replaces the one that left; another owner of the instance id is fenced."""
    existing_id = group.static_members.get(instance_id)
    existing = group.members.get(existing_id) if existing_id is not None else None
    if request.member_epoch == 0:
        if existing is None:
            return dynamic_member(group, member_id, request)
        if existing.member_id == member_id:
            return dynamic_member(group, member_id, request)
        # A classic static member is replaced at once (it never leaves with -2), as in Kafka.
        if existing.classic is None and existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            raise KafkaError(
                ErrorCode.UNRELEASED_INSTANCE_ID,
                f"Static member {member_id} with instance id {instance_id} cannot join the group because "
                f"the instance id is owned by {existing.member_id} member.",
            )
        return replace_static_member(group, existing, member_id, dirty)
    if existing is None:
        raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
    if existing.member_id != member_id:
        raise KafkaError(
            ErrorCode.FENCED_INSTANCE_ID,
            f"Static member {member_id} with instance id {instance_id} was fenced by member {existing.member_id}.",
        )
    check_epoch(existing, request)
    return existing


def replace_static_member(
    group: ConsumerGroup, existing: ConsumerMember, member_id: str, dirty: set[tuple[str, str | None]]
) -> ConsumerMember:
    """The instance comes back under a new member id: it takes the place, and the partitions, of
    the one that left (Kafka's replaceMember), without a new group epoch."""
    replacement = attrs.evolve(existing, member_id=member_id, member_epoch=0, previous_member_epoch=0)
    group.release_partitions(existing)
    dirty.add((group.group_id, existing.member_id))
    del group.members[existing.member_id]
    group.target[member_id] = group.target.pop(existing.member_id, {})
    group.members[member_id] = replacement
    if existing.instance_id is not None:
        group.static_members[existing.instance_id] = member_id
    group.claim_partitions(replacement)
    return replacement


def leaving_member(group: ConsumerGroup, request: ConsumerHeartbeat) -> ConsumerMember:
    """The member a leaving heartbeat (epoch -1, or -2 for a static member) speaks for: the one it
    names, or the static member of its instance id (FENCED_INSTANCE_ID if another member holds it)."""
    if request.instance_id is None:
        member = group.members.get(request.member_id)
        if member is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {request.member_id} is not a member.")
        return member
    existing_id = group.static_members.get(request.instance_id)
    member = group.members.get(existing_id) if existing_id is not None else None
    if member is None:
        raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {request.instance_id} is unknown.")
    if member.member_id != request.member_id:
        raise KafkaError(
            ErrorCode.FENCED_INSTANCE_ID,
            f"Static member {request.member_id} with instance id {request.instance_id} was fenced by "
            f"member {member.member_id}.",
        )
    return member


def check_epoch(member: ConsumerMember, request: EpochClaim) -> None:
    """A known member's epoch: its current one, or the previous one with a subset of its assignment."""
    epoch = request.member_epoch
    if epoch > member.member_epoch:
        raise KafkaError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The consumer group member has a greater member epoch ({epoch}) than the one known by the group "
            f"coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.",
        )
    if epoch < member.member_epoch:
        # The previous epoch with a subset of the current assignment: the answer that bumped its
        # epoch may have been lost.
        if epoch != member.previous_member_epoch or not is_subset(request.owned, member.assigned):
            raise KafkaError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The consumer group member has a smaller member epoch ({epoch}) than the one known by the "
                f"group coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.",
            )


def is_subset(owned: Assignment | None, assigned: Mapping[str, frozenset[int]]) -> bool:
    if owned is None:
        return False
    return all(ps <= assigned.get(topic, frozenset()) for topic, ps in owned.items() if ps)
