"""Online migration between the classic and the consumer group protocols (ADR 50), as Kafka's
GroupMetadataManager does it, per `group.consumer.migration.policy`.

Upgrade: the first ConsumerGroupHeartbeat (epoch 0) for a classic group that has members and uses the
`consumer` protocol type turns it into a consumer group (`to_consumer_group`, Kafka's
ConsumerGroup.fromClassicGroup): group epoch and assignment epoch = the classic generation, every
classic member a member at that epoch, STABLE, owning and targeted at the partitions of its last
ConsumerProtocol assignment, keeping its classic metadata (session timeout, supported protocols).
The classic members stay in the group speaking JoinGroup/SyncGroup/Heartbeat (classic_members.py).

Downgrade: when the last member of the consumer protocol leaves or is fenced and classic members
remain, the group turns back into a classic group (`to_classic_group`, Kafka's
ClassicGroup.fromConsumerGroup): generation = group epoch, Stable, each member's assignment its
target serialized in the ConsumerProtocol version of its own subscription; the classic coordinator
then starts a rebalance so that the members rejoin.

The ConsumerProtocol bytes are read and written through `EmbeddedProtocol`, a port: the wire adapter
implements it with kafka-python's ConsumerProtocolSubscription / ConsumerProtocolAssignment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import attrs

from ..model import Group, Member
from ..state import GroupState
from .model import ClassicMemberMetadata, ConsumerGroup, ConsumerMember
from .reconciliation import MemberState
from .settings import MigrationPolicy as MigrationPolicy  # declared beside the settings that hold it

CONSUMER_PROTOCOL_TYPE = "consumer"


@attrs.frozen
class ClassicSubscription:
    """A ConsumerProtocolSubscription: topics, the partitions the member owns (v1+), its rack (v3)."""

    topics: tuple[str, ...]
    owned: dict[str, frozenset[int]]
    rack_id: str | None = None


class EmbeddedProtocol(Protocol):
    """The ConsumerProtocol's embedded bytes (JoinGroup metadata, SyncGroup assignments).
    Malformed bytes raise ValueError."""

    def subscription(self, metadata: bytes) -> ClassicSubscription: ...

    def assignment(self, data: bytes) -> dict[str, frozenset[int]]: ...

    def encode_assignment(self, partitions: Mapping[str, frozenset[int]], subscription: bytes) -> bytes:
        """The assignment in the ConsumerProtocol version of `subscription` (the member's metadata)."""
        ...


def to_consumer_group(classic: Group, embedded: EmbeddedProtocol, now: int) -> ConsumerGroup:
    """The consumer group a classic group becomes (ValueError if its embedded protocol is malformed).

    A member with no assignment yet (it joined the rebalance under way) starts owning nothing; Kafka
    refuses such a group as malformed, trafka converts it and lets the member rejoin."""
    generation = classic.generation_id
    group = ConsumerGroup(classic.group_id, group_epoch=generation, assignment_epoch=generation)
    for m in classic.members.values():
        subscription = embedded.subscription(m.metadata_for(classic.protocol_name) or m.protocols[0].metadata)
        assigned = embedded.assignment(m.assignment) if m.assignment else {}
        assigned = {t: ps for t, ps in assigned.items() if ps}
        member = ConsumerMember(
            m.member_id,
            instance_id=m.group_instance_id,
            rack_id=subscription.rack_id,
            client_id=m.client_id,
            client_host=m.client_host,
            rebalance_timeout_ms=m.rebalance_timeout_ms,
            subscribed_topic_names=tuple(sorted(set(subscription.topics))),
            member_epoch=generation,
            previous_member_epoch=generation,
            state=MemberState.STABLE,
            assigned=assigned,
            session_deadline_ms=now + m.session_timeout_ms,
            classic=ClassicMemberMetadata(m.session_timeout_ms, m.protocols),
        )
        group.members[m.member_id] = member
        group.target[m.member_id] = dict(assigned)
        if m.group_instance_id is not None:
            group.static_members[m.group_instance_id] = m.member_id
    for member in group.members.values():  # a partition two members claim goes to the last one
        group.claim_partitions(member)
    for member in group.members.values():
        member.assigned = {
            t: frozenset(p for p in ps if group.partition_owners.get((t, p)) == member.member_id)
            for t, ps in member.assigned.items()
        }
    return group


def to_classic_group(
    group: ConsumerGroup, leaving_member_id: str | None, embedded: EmbeddedProtocol, now: int
) -> Group:
    """The classic group a consumer group becomes without `leaving_member_id`: Stable at generation =
    group epoch, each member's assignment its target. (When a classic static member replaced the last
    consumer-protocol one, the caller already put it in that member's place, target included.)"""
    classic = Group(
        group.group_id,
        state=GroupState.STABLE,
        generation_id=group.group_epoch,
        protocol_type=CONSUMER_PROTOCOL_TYPE,
        state_timestamp_ms=now,
    )
    for mid, member in group.members.items():
        if mid != leaving_member_id:
            classic.members[mid] = _classic_member(member, now)
            if member.instance_id is not None:
                classic.static_members[member.instance_id] = mid
    classic.leader_id = next(iter(classic.members), None)
    classic.protocol_name = classic.select_protocol()
    for m in classic.members.values():
        target = group.target.get(m.member_id, {})
        m.assignment = embedded.encode_assignment(target, m.metadata_for(classic.protocol_name))
    return classic


def _classic_member(member: ConsumerMember, now: int) -> Member:
    assert member.classic is not None
    return Member(
        member_id=member.member_id,
        group_instance_id=member.instance_id,
        client_id=member.client_id,
        client_host=member.client_host,
        session_timeout_ms=member.classic.session_timeout_ms,
        rebalance_timeout_ms=member.rebalance_timeout_ms,
        protocol_type=CONSUMER_PROTOCOL_TYPE,
        protocols=member.classic.supported_protocols,
        last_heartbeat_ms=now,
    )
