"""A consumer group's target assignment and each member's step towards it: the assignor the members
vote for (`preferred_assignor`), the target it computes (`new_target`, Kafka's TargetAssignmentBuilder),
and `reconciliation.reconcile`'s answer applied to a member and the group's partition books
(`step_towards`, Kafka's CurrentAssignmentBuilder); `owners`, the check that no partition has two."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .assignors import ASSIGNORS, Assignment, AssignmentMember
from .model import ConsumerGroup, ConsumerMember
from .reconciliation import MemberState, reconcile


def preferred_assignor(group: ConsumerGroup, default: str) -> str:
    """The server assignor most members ask for (by name on a tie), else `default`."""
    votes: dict[str, int] = {}
    for member in group.members.values():
        if member.server_assignor is not None:
            votes[member.server_assignor] = votes.get(member.server_assignor, 0) + 1
    if not votes:
        return default
    return max(sorted(votes), key=lambda name: votes[name])


def new_target(
    group: ConsumerGroup, assignor_name: str, member_topics: Callable[[ConsumerMember], Iterable[str]]
) -> None:
    """The group's target computed again by its assignor, at the group epoch (sticky: each member's
    previous target is given to the assignor)."""
    counts = {name: count for name, (_, count) in group.subscription_metadata.items()}
    members = [
        AssignmentMember(m.member_id, frozenset(member_topics(m)), group.target.get(m.member_id, {}))
        for m in group.members.values()
    ]
    assignor = ASSIGNORS[assignor_name]
    group.target = {mid: {t: ps for t, ps in a.items() if ps} for mid, a in assignor(members, counts).items()}
    group.assignment_epoch = group.group_epoch


def step_towards(group: ConsumerGroup, member: ConsumerMember, owned: Assignment | None, now: int) -> None:
    """Move `member` towards its target at the assignment epoch (revocations first), its partitions in
    the group's books and its rebalance deadline kept in step."""
    if member.member_epoch == group.assignment_epoch and member.state is MemberState.STABLE:
        return
    result = reconcile(
        member.state,
        member.member_epoch,
        member.assigned,
        member.pending_revocation,
        group.assignment_epoch,
        group.target.get(member.member_id, {}),
        owned,
        group.partition_epoch,
    )
    if result is None:
        return
    group.release_partitions(member)
    if result.member_epoch != member.member_epoch:
        member.previous_member_epoch = member.member_epoch
    member.state = result.state
    member.member_epoch = result.member_epoch
    member.assigned = result.assigned
    member.take_topic_ids(group.subscription_metadata)
    member.pending_revocation = result.pending_revocation
    group.claim_partitions(member)
    if member.classic is not None:
        return  # classic members have join and sync deadlines instead (Kafka)
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        if member.rebalance_deadline_ms is None:
            member.rebalance_deadline_ms = now + member.rebalance_timeout_ms
    else:
        member.rebalance_deadline_ms = None


def owners(groups: Iterable[ConsumerGroup]) -> dict[tuple[str, str, int], str]:
    """Every (group, topic, partition) owned by a member, for checks: two owners would be a bug."""
    result: dict[tuple[str, str, int], str] = {}
    for group in groups:
        for member in group.members.values():
            for assignment in (member.assigned, member.pending_revocation):
                for topic, ps in assignment.items():
                    for p in ps:
                        key = (group.group_id, topic, p)
                        if key in result:
                            raise AssertionError(f"{key} owned by {result[key]} and {member.member_id}")
                        result[key] = member.member_id
    return result
