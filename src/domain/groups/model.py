"""Values the group coordinator takes and gives, and its per-group bookkeeping.

Requests and results are frozen values in Kafka's vocabulary. A request that must wait (JoinGroup,
SyncGroup) carries an opaque `token` from the adapter; the coordinator hands it back in a
`Completion` when the answer is decided, now or on a later call.
"""

from __future__ import annotations

from collections.abc import Hashable

import attrs

from ..errors import ErrorCode
from .state import GroupState


@attrs.frozen
class Protocol:
    name: str
    metadata: bytes


@attrs.frozen
class JoinRequest:
    group_id: str
    member_id: str
    protocol_type: str
    protocols: tuple[Protocol, ...]
    session_timeout_ms: int
    rebalance_timeout_ms: int
    group_instance_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    require_known_member_id: bool = True


@attrs.frozen
class JoinedMember:
    member_id: str
    group_instance_id: str | None
    metadata: bytes


@attrs.frozen
class JoinResult:
    error: ErrorCode
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    member_id: str = ""
    members: tuple[JoinedMember, ...] = ()


@attrs.frozen
class SyncRequest:
    group_id: str
    member_id: str
    generation_id: int
    assignments: tuple[tuple[str, bytes], ...] = ()
    group_instance_id: str | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None


@attrs.frozen
class SyncResult:
    error: ErrorCode
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol_name: str | None = None


@attrs.frozen
class Completion:
    """The answer to a waiting JoinGroup or SyncGroup, for the request that carried `token`."""

    token: Hashable
    result: JoinResult | SyncResult


@attrs.frozen
class MemberDescription:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@attrs.frozen
class GroupDescription:
    group_id: str
    state: GroupState
    protocol_type: str
    protocol_name: str
    members: tuple[MemberDescription, ...]


@attrs.frozen
class GroupListing:
    group_id: str
    protocol_type: str
    state: GroupState


@attrs.define
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: tuple[Protocol, ...]
    last_heartbeat_ms: int
    assignment: bytes = b""
    join_token: Hashable | None = None
    sync_token: Hashable | None = None

    def metadata_for(self, protocol_name: str | None) -> bytes:
        for protocol in self.protocols:
            if protocol.name == protocol_name:
                return protocol.metadata
        return b""

    def protocol_names(self) -> list[str]:
        return [p.name for p in self.protocols]


@attrs.define
class Group:
    group_id: str
    state: GroupState = GroupState.EMPTY
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, Member] = attrs.field(factory=dict)
    pending_members: dict[str, int] = attrs.field(factory=dict)  # member id -> join deadline (ms)
    static_members: dict[str, str] = attrs.field(factory=dict)  # group.instance.id -> member id
    rebalance_deadline_ms: int | None = None
    initial_join_limit_ms: int | None = None  # set while the initial rebalance delay is running
    sync_deadline_ms: int | None = None
    state_timestamp_ms: int | None = None  # when the group entered its state (Kafka's currentStateTimestamp)

    def candidate_protocols(self) -> set[str]:
        """Protocol names every member supports."""
        names: set[str] | None = None
        for member in self.members.values():
            mine = set(member.protocol_names())
            names = mine if names is None else names & mine
        return names or set()

    def supports(self, protocol_type: str, protocols: tuple[Protocol, ...]) -> bool:
        if not protocol_type or not protocols:
            return False
        if not self.members:
            return True
        return protocol_type == self.protocol_type and bool(self.candidate_protocols() & {p.name for p in protocols})

    def select_protocol(self) -> str:
        """Kafka's vote: each member votes for its first candidate; most votes wins."""
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for member in self.members.values():
            choice = next(name for name in member.protocol_names() if name in candidates)
            votes[choice] = votes.get(choice, 0) + 1
        first = next(iter(self.members.values())).protocol_names()
        ordered = [name for name in first if name in votes]
        return max(ordered, key=lambda name: votes[name])  # ties: the first member's preference

    def all_members_joined(self) -> bool:
        return not self.pending_members and all(m.join_token is not None for m in self.members.values())


def join_result(group: Group, member: Member) -> JoinResult:
    """What a member is answered once its group's join completes: the leader gets every member's metadata."""
    is_leader = member.member_id == group.leader_id
    members = (
        tuple(
            JoinedMember(m.member_id, m.group_instance_id, m.metadata_for(group.protocol_name))
            for m in group.members.values()
        )
        if is_leader
        else ()
    )
    return JoinResult(
        ErrorCode.NONE,
        generation_id=group.generation_id,
        protocol_type=group.protocol_type,
        protocol_name=group.protocol_name,
        leader=group.leader_id or "",
        member_id=member.member_id,
        members=members,
    )


def sync_result(group: Group, member: Member) -> SyncResult:
    """What a member is answered once its group's assignment is set: its own assignment."""
    return SyncResult(ErrorCode.NONE, member.assignment, group.protocol_type, group.protocol_name)
