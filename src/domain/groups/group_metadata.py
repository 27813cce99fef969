"""Group metadata as Kafka keeps it in `__consumer_offsets`: what a GroupMetadataValue record holds
(and, beside it, what an OffsetCommitValue holds: a `CommittedOffset`).

The classic coordinator writes a group's metadata when a generation completes (the leader's
SyncGroup, with every member's assignment), when a rebalance leaves the group Empty (the new
generation, no members) and when a static member rejoins a Stable group under a new member id; a
deleted group gets a tombstone. At startup the last record of each group restores it as Kafka's
GroupMetadataManager.replay does: Empty without members, Stable with them, and every member's
session starts again at load time, so members that do not come back are removed after their session
timeout while a consumer that survived the restart simply carries on with its generation.

These are values only; the key and value bytes are the store adapter's business (Kafka's schemas).
"""

from __future__ import annotations

import uuid

import attrs

from .model import Group, Member, Protocol
from .state import GroupState


@attrs.frozen
class CommittedOffset:
    offset: int
    leader_epoch: int = -1
    metadata: str | None = ""
    commit_timestamp_ms: int = -1
    topic_id: uuid.UUID | None = None  # the topic's id when the commit named it so (OffsetCommit v10+)


@attrs.frozen
class MemberMetadata:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


@attrs.frozen
class GroupMetadata:
    protocol_type: str
    generation_id: int
    protocol_name: str | None
    leader_id: str | None
    current_state_timestamp_ms: int  # -1: unknown (a record of value version 0 or 1)
    members: tuple[MemberMetadata, ...] = ()


@attrs.frozen
class GroupMetadataRecord:
    """What the coordinator asks to be written (a deleted group's tombstone, offsets included, is the
    store's own `delete_group`)."""

    group_id: str
    metadata: GroupMetadata | None  # None: a tombstone (the group became a KIP-848 consumer group)


def snapshot(group: Group) -> GroupMetadata:
    """The record Kafka's `newGroupMetadataRecord` builds for this group as it is now."""
    return GroupMetadata(
        protocol_type=group.protocol_type or "",
        generation_id=group.generation_id,
        protocol_name=group.protocol_name,
        leader_id=group.leader_id,
        current_state_timestamp_ms=-1 if group.state_timestamp_ms is None else group.state_timestamp_ms,
        members=tuple(
            MemberMetadata(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                rebalance_timeout_ms=m.rebalance_timeout_ms,
                session_timeout_ms=m.session_timeout_ms,
                subscription=m.metadata_for(group.protocol_name),
                assignment=m.assignment,
            )
            for m in group.members.values()
        ),
    )


def empty(group: Group) -> GroupMetadata:
    """The record Kafka's `newEmptyGroupMetadataRecord` builds: generation 0, no protocol, leader or
    members, written when a JoinGroup created the group and its join wrote nothing else (a member told
    MEMBER_ID_REQUIRED, a join waiting for the rebalance)."""
    return GroupMetadata(
        protocol_type=group.protocol_type or "",
        generation_id=0,
        protocol_name=None,
        leader_id=None,
        current_state_timestamp_ms=-1 if group.state_timestamp_ms is None else group.state_timestamp_ms,
    )


def restore(group_id: str, metadata: GroupMetadata, now: int) -> Group:
    """The group a GroupMetadataValue describes, loaded at `now` (members' sessions start again)."""
    group = Group(
        group_id,
        state=GroupState.STABLE if metadata.members else GroupState.EMPTY,
        generation_id=metadata.generation_id,
        protocol_type=metadata.protocol_type or None,
        protocol_name=metadata.protocol_name,
        leader_id=metadata.leader_id,
        state_timestamp_ms=None if metadata.current_state_timestamp_ms < 0 else metadata.current_state_timestamp_ms,
    )
    for m in metadata.members:
        group.members[m.member_id] = Member(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id,
            client_id=m.client_id,
            client_host=m.client_host,
            session_timeout_ms=m.session_timeout_ms,
            # value version 0 has no rebalance timeout: Kafka takes the session timeout
            rebalance_timeout_ms=m.session_timeout_ms if m.rebalance_timeout_ms < 0 else m.rebalance_timeout_ms,
            protocol_type=metadata.protocol_type,
            protocols=(Protocol(metadata.protocol_name or "", m.subscription),),
            last_heartbeat_ms=now,
            assignment=m.assignment,
        )
        if m.group_instance_id is not None:
            group.static_members[m.group_instance_id] = m.member_id
    return group
