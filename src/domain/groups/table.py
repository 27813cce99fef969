"""The table of consumer groups and its administrative side: describe, list, delete, commit fencing.

`GroupCoordinator` (coordinator.py) adds the rebalance protocol on top of this table. The table is
also where group metadata comes and goes: `load` restores the groups of `__consumer_offsets`, and
the records the coordinator queues wait here until `take_metadata_records` hands them to the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..errors import ErrorCode
from .group_metadata import GroupMetadata, GroupMetadataRecord, empty, restore, snapshot
from .model import Group, GroupDescription, GroupListing, MemberDescription
from .state import GroupEvent, GroupState, next_state


class GroupTable:
    def __init__(self, known_groups: Iterable[str] = ()) -> None:
        self._groups: dict[str, Group] = {g: Group(g) for g in known_groups}
        self._metadata_records: list[GroupMetadataRecord] = []

    def load(self, metadata: Mapping[str, GroupMetadata], now: int) -> None:
        """Groups as their last GroupMetadataValue left them; members must heartbeat within a session."""
        for group_id, value in metadata.items():
            self._groups[group_id] = restore(group_id, value, now)

    def take_metadata_records(self) -> list[GroupMetadataRecord]:
        """The group metadata to write to `__consumer_offsets` since the last call, oldest first."""
        records, self._metadata_records = self._metadata_records, []
        return records

    def _store_metadata(self, group: Group) -> None:
        self._metadata_records.append(GroupMetadataRecord(group.group_id, snapshot(group)))

    def _store_if_created(self, group_id: str, existed: bool, queued: int) -> None:
        """A group a JoinGroup created is written at once, empty at generation 0, when the join wrote
        nothing else (`queued`: the records queued before it), as Kafka's classicGroupJoinToClassicGroup."""
        group = self._groups.get(group_id)
        if not existed and group is not None and len(self._metadata_records) == queued:
            self._metadata_records.append(GroupMetadataRecord(group_id, empty(group)))

    def _delete_metadata(self, group_id: str) -> None:
        """A tombstone for the group's metadata (its offsets stay): it became a consumer group."""
        self._metadata_records.append(GroupMetadataRecord(group_id, None))

    def _transition(self, group: Group, event: GroupEvent, now: int | None = None) -> None:
        group.state = next_state(group.state, event)
        if now is not None:
            group.state_timestamp_ms = now

    # -- queries -------------------------------------------------------------------------------

    def group(self, group_id: str) -> Group | None:
        return self._groups.get(group_id)

    def list_groups(self) -> list[GroupListing]:
        return [
            GroupListing(g.group_id, g.protocol_type or "", g.state)
            for g in sorted(self._groups.values(), key=lambda g: g.group_id)
        ]

    def describe(self, group_id: str) -> GroupDescription:
        group = self._groups.get(group_id)
        if group is None:
            return GroupDescription(group_id, GroupState.DEAD, "", "", ())
        stable = group.state is GroupState.STABLE
        members = tuple(
            MemberDescription(
                m.member_id,
                m.group_instance_id,
                m.client_id,
                m.client_host,
                m.metadata_for(group.protocol_name) if stable else b"",
                m.assignment if stable else b"",
            )
            for m in group.members.values()
        )
        return GroupDescription(group_id, group.state, group.protocol_type or "", group.protocol_name or "", members)

    # -- offsets commit fencing and deletion -----------------------------------------------------

    def validate_offset_commit(
        self,
        group_id: str,
        member_id: str,
        generation_id: int,
        now: int,
        group_instance_id: str | None = None,
        transactional: bool = False,
    ) -> ErrorCode:
        """Whether a commit from this member and generation may be stored: Kafka's
        ClassicGroup.validateOffsetCommit. A TxnOffsetCommit (`transactional`) is not refused while the
        group completes a rebalance, nor without a member when its group has members; an OffsetCommit
        keeps its member's session alive in a Stable or PreparingRebalance group, as a heartbeat does."""
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID
        group = self._groups.get(group_id)
        if group is None:
            if generation_id < 0:
                self._groups[group_id] = Group(group_id)
                return ErrorCode.NONE
            return ErrorCode.ILLEGAL_GENERATION
        if generation_id < 0 and group.state is GroupState.EMPTY:
            return ErrorCode.NONE
        if generation_id >= 0 or member_id or group_instance_id is not None:
            error = self._validate_member(group, member_id, group_instance_id)
            if error is not ErrorCode.NONE:
                return error
            if generation_id != group.generation_id:
                return ErrorCode.ILLEGAL_GENERATION
        elif not transactional and group.state is not GroupState.EMPTY:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if transactional:
            return ErrorCode.NONE
        if group.state is GroupState.COMPLETING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        member = group.members.get(member_id)
        if member is not None and group.state in (GroupState.STABLE, GroupState.PREPARING_REBALANCE):
            member.last_heartbeat_ms = now
        return ErrorCode.NONE

    @staticmethod
    def _validate_member(group: Group, member_id: str, group_instance_id: str | None) -> ErrorCode:
        """Kafka's ClassicGroup.validateMember: a static member by its instance id, else by member id."""
        if group_instance_id is not None:
            current = group.static_members.get(group_instance_id)
            if current is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            return ErrorCode.NONE if current == member_id else ErrorCode.FENCED_INSTANCE_ID
        return ErrorCode.NONE if member_id in group.members else ErrorCode.UNKNOWN_MEMBER_ID

    def is_classic_group(self, group_id: str) -> bool:
        return group_id in self._groups

    def is_empty_classic_group(self, group_id: str) -> bool:
        group = self._groups.get(group_id)
        return group is not None and group.state is GroupState.EMPTY

    def ensure_group(self, group_id: str) -> None:
        """Make a group known (Empty) because it has committed offsets."""
        self._groups.setdefault(group_id, Group(group_id))

    def delete(self, group_id: str) -> ErrorCode:
        group = self._groups.get(group_id)
        if group is None:
            return ErrorCode.GROUP_ID_NOT_FOUND
        if group.state is not GroupState.EMPTY:
            return ErrorCode.NON_EMPTY_GROUP
        self._transition(group, GroupEvent.DELETED)
        del self._groups[group_id]
        return ErrorCode.NONE
