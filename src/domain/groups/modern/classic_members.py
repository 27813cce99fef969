"""Members of a consumer group that speak the classic protocol, as Kafka's GroupMetadataManager serves
them (classicGroupJoinToConsumerGroup, classicGroupSyncToConsumerGroup,
classicGroupHeartbeatToConsumerGroup, classicGroupLeaveToConsumerGroup). ADR 50.

Such a member is an ordinary member of the consumer group with `classic` metadata: the broker
computes its target, and its JoinGroup does the consumer heartbeat's three steps (its subscription
and owned partitions come from the ConsumerProtocol metadata of its first protocol). The JoinGroup
answer is at once: generation = the member's epoch, no leader, no member list; SyncGroup hands it the
partitions it owns now, serialized in its subscription's ConsumerProtocol version. Heartbeat answers
REBALANCE_IN_PROGRESS when it must join again: the group epoch is ahead of it, it must revoke
partitions, or partitions it waited for were released. Classic members have no rebalance timeout;
instead a member told to rejoin must join within its rebalance timeout, and one that joined must sync
within it (the join and sync deadlines), else it is fenced, as its session timeout (its own, from
JoinGroup) fences it too.

`ClassicMembers` is a collaborator of `ConsumerGroupCoordinator` (which holds it as `classic_members`):
it answers the four classic requests and changes the groups only through what the coordinator offers
it (`ConsumerGroupMembers`: the groups, the three steps of a heartbeat, dropping a member, the downgrade).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

from ...errors import ErrorCode, KafkaError
from ..model import JoinRequest, JoinResult, SyncRequest, SyncResult
from .migration import CONSUMER_PROTOCOL_TYPE, EmbeddedProtocol
from .model import ClassicMemberMetadata, ConsumerGroup, ConsumerMember
from .reconciliation import MemberState

if TYPE_CHECKING:
    from .assignors import Assignment
    from .settings import ClassicGroups, ConsumerGroupSettings


class ConsumerGroupMembers(Protocol):
    """What the classic members' requests use of the coordinator: its groups and settings, and the
    changes a member's join or leave makes to its group, done as for a consumer-protocol member."""

    groups: dict[str, ConsumerGroup]
    settings: ConsumerGroupSettings

    def changed(self, group_id: str, member_id: str | None) -> None:
        """The group's (member id None) or a member's records are to be written again."""
        ...

    def update_group(
        self,
        group: ConsumerGroup,
        member: ConsumerMember,
        new_member: bool,
        before: tuple[object, object],
        owned: Assignment | None,
        now: int,
    ) -> None: ...

    def replace_static_member(
        self, group: ConsumerGroup, existing: ConsumerMember, member_id: str
    ) -> ConsumerMember: ...

    def drop_member(self, group: ConsumerGroup, member: ConsumerMember) -> None: ...

    def bump_after_removal(self, group: ConsumerGroup) -> None: ...

    def downgrade(self, group: ConsumerGroup, leaving_member_id: str | None, now: int, rebalance: bool) -> None: ...


class ClassicMembers:
    def __init__(
        self,
        coordinator: ConsumerGroupMembers,
        classic: ClassicGroups,
        embedded: EmbeddedProtocol,
        new_member_id: Callable[[], str],
    ) -> None:
        self._coordinator = coordinator
        self._classic = classic
        self._embedded = embedded
        self._new_member_id = new_member_id

    # -- JoinGroup -------------------------------------------------------------------------------

    def join(self, request: JoinRequest, now: int) -> JoinResult:
        coordinator = self._coordinator
        group = coordinator.groups[request.group_id]
        unknown = not request.member_id
        member_id = request.member_id or self._new_member_id()
        if not self._classic.accepts_session_timeout(request.session_timeout_ms):
            return JoinResult(ErrorCode.INVALID_SESSION_TIMEOUT, member_id=request.member_id)
        if len(group.members) >= coordinator.settings.max_size and member_id not in group.members:
            return JoinResult(ErrorCode.GROUP_MAX_SIZE_REACHED, member_id=request.member_id)
        if not _supports_classic(group, request.protocol_type, [p.name for p in request.protocols]):
            return JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id=request.member_id)
        instance_id = request.group_instance_id
        if unknown and request.require_known_member_id and instance_id is None:
            return JoinResult(ErrorCode.MEMBER_ID_REQUIRED, member_id=member_id)
        try:
            subscription = self._embedded.subscription(request.protocols[0].metadata)
        except ValueError:  # Kafka: IllegalStateException, "Malformed embedded consumer protocol"
            return JoinResult(ErrorCode.UNKNOWN_SERVER_ERROR, member_id=request.member_id)

        downgrade = False
        if instance_id is None:
            member = group.members.get(member_id) or ConsumerMember(member_id)
        else:
            existing_id = group.static_members.get(instance_id)
            existing = group.members.get(existing_id) if existing_id is not None else None
            if unknown:
                if existing is None:
                    member = ConsumerMember(member_id)
                else:
                    # The last consumer-protocol member replaced by a classic one: the group turns classic.
                    downgrade = (
                        existing.classic is None
                        and all(m.classic is not None for m in group.members.values() if m is not existing)
                        and coordinator.settings.migration_policy.downgrade_enabled
                    )
                    member = coordinator.replace_static_member(group, existing, member_id)
            elif existing is None:
                return JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id=request.member_id)
            elif existing.member_id != member_id:
                return JoinResult(ErrorCode.FENCED_INSTANCE_ID, member_id=request.member_id)
            else:
                member = existing

        new_member = member.member_id not in group.members
        before = (member.subscription(), member.server_assignor)
        if instance_id is not None:
            member.instance_id = instance_id
        if subscription.rack_id is not None:
            member.rack_id = subscription.rack_id
        if request.rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = request.rebalance_timeout_ms
        member.subscribed_topic_names = tuple(sorted(set(subscription.topics)))
        member.subscribed_topic_regex = None
        member.client_id = request.client_id
        member.client_host = request.client_host
        member.classic = ClassicMemberMetadata(request.session_timeout_ms, request.protocols)
        coordinator.update_group(group, member, new_member, before, subscription.owned, now)
        coordinator.changed(group.group_id, None)
        coordinator.changed(group.group_id, member.member_id)
        answer = JoinResult(
            ErrorCode.NONE,
            generation_id=member.member_epoch,
            protocol_type=CONSUMER_PROTOCOL_TYPE,
            protocol_name=member.classic.protocol_name,
            leader="",
            member_id=member.member_id,
        )
        if downgrade:
            coordinator.downgrade(group, None, now, rebalance=False)
            return answer
        member.join_deadline_ms = None
        member.session_deadline_ms = now + request.session_timeout_ms
        member.sync_deadline_ms = now + member.rebalance_timeout_ms
        return answer

    # -- SyncGroup -------------------------------------------------------------------------------

    def sync(self, request: SyncRequest, now: int) -> SyncResult:
        group = self._coordinator.groups[request.group_id]
        if not group.members:
            return SyncResult(ErrorCode.UNKNOWN_MEMBER_ID)
        try:
            member = _classic_member(group, request.member_id, request.group_instance_id)
        except KafkaError as error:
            return SyncResult(error.code)
        assert member.classic is not None
        if request.generation_id != member.member_epoch:
            return SyncResult(ErrorCode.ILLEGAL_GENERATION)
        if (request.protocol_type is not None and request.protocol_type != CONSUMER_PROTOCOL_TYPE) or (
            request.protocol_name is not None and request.protocol_name != member.classic.protocol_name
        ):
            return SyncResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        if self._must_rejoin_now(group, member):
            if member.join_deadline_ms is None:
                member.join_deadline_ms = now + member.rebalance_timeout_ms
            return SyncResult(ErrorCode.REBALANCE_IN_PROGRESS)
        member.sync_deadline_ms = None
        member.session_deadline_ms = now + member.classic.session_timeout_ms
        assignment = self._embedded.encode_assignment(member.assigned, member.classic.supported_protocols[0].metadata)
        return SyncResult(ErrorCode.NONE, assignment, request.protocol_type, request.protocol_name)

    @staticmethod
    def _must_rejoin_now(group: ConsumerGroup, member: ConsumerMember) -> bool:
        """Kafka's throwIfRebalanceInProgress: a new epoch, unless it is still revoking."""
        return group.group_epoch > member.member_epoch and member.state is not MemberState.UNREVOKED_PARTITIONS

    # -- Heartbeat -------------------------------------------------------------------------------

    def heartbeat(
        self, group_id: str, member_id: str, generation_id: int, now: int, group_instance_id: str | None = None
    ) -> ErrorCode:
        group = self._coordinator.groups[group_id]
        try:
            member = _classic_member(group, member_id, group_instance_id)
        except KafkaError as error:
            return error.code
        assert member.classic is not None
        if generation_id != member.member_epoch:
            return ErrorCode.ILLEGAL_GENERATION
        member.session_deadline_ms = now + member.classic.session_timeout_ms
        if (
            member.member_epoch < group.group_epoch
            or member.state is MemberState.UNREVOKED_PARTITIONS
            or (member.state is MemberState.UNRELEASED_PARTITIONS and not _waiting_on_unreleased(group, member))
        ):
            if member.join_deadline_ms is None:
                member.join_deadline_ms = now + member.rebalance_timeout_ms
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    # -- LeaveGroup ------------------------------------------------------------------------------

    def leave(self, group_id: str, leaving: Iterable[tuple[str, str | None]], now: int) -> list[ErrorCode]:
        """Classic members leave (no downgrade: Kafka checks that only when a consumer member goes)."""
        group = self._coordinator.groups[group_id]
        errors = []
        removed = False
        for member_id, instance_id in leaving:
            member = None
            if instance_id is None:
                member = group.members.get(member_id)
                error = ErrorCode.UNKNOWN_MEMBER_ID if member is None or member.classic is None else ErrorCode.NONE
            else:
                existing_id = group.static_members.get(instance_id)
                member = group.members.get(existing_id) if existing_id is not None else None
                if member is None:
                    error = ErrorCode.UNKNOWN_MEMBER_ID
                elif member_id and member_id != member.member_id:
                    error = ErrorCode.FENCED_INSTANCE_ID
                elif member.classic is None:
                    error = ErrorCode.UNKNOWN_MEMBER_ID
                else:
                    error = ErrorCode.NONE
            if error is ErrorCode.NONE and member is not None:
                self._coordinator.drop_member(group, member)
                removed = True
            errors.append(error)
        if removed:
            self._coordinator.bump_after_removal(group)
        return errors


def _supports_classic(group: ConsumerGroup, protocol_type: str, names: list[str]) -> bool:
    """Kafka's ConsumerGroup.supportsClassicProtocols: one protocol every classic member supports."""
    if protocol_type != CONSUMER_PROTOCOL_TYPE or not names:
        return False
    classic = [m.classic for m in group.members.values() if m.classic is not None]
    return any(all(name in {p.name for p in c.supported_protocols} for c in classic) for name in names)


def _classic_member(group: ConsumerGroup, member_id: str, instance_id: str | None) -> ConsumerMember:
    """Kafka's validateConsumerGroupMember + throwIfMemberDoesNotUseClassicProtocol."""
    if instance_id is None:
        member = group.members.get(member_id)
        if member is None:
            raise KafkaError(
                ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}."
            )
    else:
        existing_id = group.static_members.get(instance_id)
        member = group.members.get(existing_id) if existing_id is not None else None
        if member is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if member.member_id != member_id:
            raise KafkaError(ErrorCode.FENCED_INSTANCE_ID, f"Static member {member_id} was fenced.")
    if member.classic is None:
        raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member.member_id} does not use the classic protocol.")
    return member


def _waiting_on_unreleased(group: ConsumerGroup, member: ConsumerMember) -> bool:
    """Kafka's waitingOnUnreleasedPartition: a partition of its target still owned by another member."""
    for topic, partitions in group.target.get(member.member_id, {}).items():
        mine = member.assigned.get(topic, frozenset())
        for p in partitions - mine:
            if group.partition_owners.get((topic, p)) not in (None, member.member_id):
                return True
    return False
