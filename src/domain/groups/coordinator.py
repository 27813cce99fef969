"""The group coordinator for Kafka's classic consumer group protocol, as a sans-I/O state machine.

Driven the way h11's `Connection` is: call `join`, `sync`, `heartbeat`, `leave` or `tick` with the
current time, and act on what comes back. Join and sync return `Completion`s, the answers decided by
that call (its own, or other members' waiting requests that it released). `next_deadline()` says when
`tick` must be called next for session timeouts, rebalance timeouts and the initial rebalance delay.
It never sleeps, reads a clock or touches a socket. The rules follow Kafka's GroupCoordinator.

At the moments Kafka writes a group's metadata to `__consumer_offsets` the coordinator queues it
(`_store_metadata`, table.py); the caller takes the records after each call and stores them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

import attrs

from ..errors import ErrorCode
from .model import Completion, Group, JoinRequest, JoinResult, Member, SyncRequest, SyncResult, join_result, sync_result
from .state import GroupEvent, GroupState
from .table import GroupTable


@attrs.frozen
class GroupSettings:
    min_session_timeout_ms: int = 6_000
    max_session_timeout_ms: int = 1_800_000
    initial_rebalance_delay_ms: int = 3_000


class GroupCoordinator(GroupTable):
    def __init__(
        self,
        settings: GroupSettings,
        new_member_id: Callable[[str], str],
        known_groups: Iterable[str] = (),
    ) -> None:
        super().__init__(known_groups)
        self._settings = settings
        self._new_member_id = new_member_id
        self._failed: list[tuple[str, str, str]] = []  # (group, member, why) removed by a timeout

    # -- JoinGroup -----------------------------------------------------------------------------

    def join(self, request: JoinRequest, now: int, token: Hashable) -> list[Completion]:
        existed, queued = request.group_id in self._groups, len(self._metadata_records)
        completions = self._join(request, now, token)
        self._store_if_created(request.group_id, existed, queued)  # Kafka's classicGroupJoinToClassicGroup
        return completions

    def _join(self, request: JoinRequest, now: int, token: Hashable) -> list[Completion]:
        def fail(error: ErrorCode, member_id: str = request.member_id) -> list[Completion]:
            return [Completion(token, JoinResult(error, member_id=member_id))]

        if not request.group_id:
            return fail(ErrorCode.INVALID_GROUP_ID)
        settings = self._settings
        if not settings.min_session_timeout_ms <= request.session_timeout_ms <= settings.max_session_timeout_ms:
            return fail(ErrorCode.INVALID_SESSION_TIMEOUT)
        group = self._groups.get(request.group_id)
        if group is None:
            if request.member_id:
                return fail(ErrorCode.UNKNOWN_MEMBER_ID)
            group = self._groups[request.group_id] = Group(request.group_id, state_timestamp_ms=now)
        if not group.supports(request.protocol_type, request.protocols):
            return fail(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)

        instance_id = request.group_instance_id
        if not request.member_id:
            if instance_id is not None:
                return self._join_static_without_id(group, request, now, token)
            member_id = self._new_member_id(request.client_id)
            if request.require_known_member_id:
                group.pending_members[member_id] = now + request.session_timeout_ms
                return fail(ErrorCode.MEMBER_ID_REQUIRED, member_id)
            return self._add_member_and_rebalance(group, member_id, request, now, token)

        member_id = request.member_id
        if member_id in group.pending_members:
            del group.pending_members[member_id]
            return self._add_member_and_rebalance(group, member_id, request, now, token)
        member = group.members.get(member_id)
        if instance_id is not None and group.static_members.get(instance_id) not in (None, member_id):
            return fail(ErrorCode.FENCED_INSTANCE_ID)
        if member is None:
            return fail(ErrorCode.UNKNOWN_MEMBER_ID)
        if instance_id is not None and member.group_instance_id != instance_id:
            return fail(ErrorCode.FENCED_INSTANCE_ID)
        return self._join_known_member(group, member, request, now, token)

    def _join_known_member(
        self, group: Group, member: Member, request: JoinRequest, now: int, token: Hashable
    ) -> list[Completion]:
        member.last_heartbeat_ms = now
        unchanged = member.protocols == request.protocols
        if group.state is GroupState.COMPLETING_REBALANCE and unchanged:
            return [Completion(token, join_result(group, member))]
        if group.state is GroupState.STABLE and unchanged and member.member_id != group.leader_id:
            return [Completion(token, join_result(group, member))]
        completions = self._replace_join_token(member, token)
        member.protocols = request.protocols
        member.session_timeout_ms = request.session_timeout_ms
        member.rebalance_timeout_ms = request.rebalance_timeout_ms
        return completions + self._prepare_rebalance(group, now)

    def _join_static_without_id(
        self, group: Group, request: JoinRequest, now: int, token: Hashable
    ) -> list[Completion]:
        instance_id = request.group_instance_id
        assert instance_id is not None
        old_id = group.static_members.get(instance_id)
        new_id = self._new_member_id(request.client_id)
        if old_id is None or old_id not in group.members:
            return self._add_member_and_rebalance(group, new_id, request, now, token)
        # A known static member came back with a new member id: fence the old id, keep the slot.
        old = group.members.pop(old_id)
        completions = []
        if old.join_token is not None:
            completions.append(Completion(old.join_token, JoinResult(ErrorCode.FENCED_INSTANCE_ID, member_id=old_id)))
        if old.sync_token is not None:
            completions.append(Completion(old.sync_token, SyncResult(ErrorCode.FENCED_INSTANCE_ID)))
        member = attrs.evolve(old, member_id=new_id, join_token=None, sync_token=None, last_heartbeat_ms=now)
        group.members[new_id] = member
        group.static_members[instance_id] = new_id
        if group.leader_id == old_id:
            group.leader_id = new_id
        member.protocols = request.protocols
        member.session_timeout_ms = request.session_timeout_ms
        member.rebalance_timeout_ms = request.rebalance_timeout_ms
        # Kafka rebalances only if the protocol the group would select next changes.
        if (
            group.state is GroupState.STABLE
            and group.candidate_protocols()
            and group.select_protocol() == group.protocol_name
        ):
            self._store_metadata(group)  # the new member id replaces the old one in the stored generation
            return completions + [Completion(token, join_result(group, member))]
        member.join_token = token
        return completions + self._prepare_rebalance(group, now)

    def _add_member_and_rebalance(
        self, group: Group, member_id: str, request: JoinRequest, now: int, token: Hashable
    ) -> list[Completion]:
        member = Member(
            member_id=member_id,
            group_instance_id=request.group_instance_id,
            client_id=request.client_id,
            client_host=request.client_host,
            session_timeout_ms=request.session_timeout_ms,
            rebalance_timeout_ms=request.rebalance_timeout_ms,
            protocol_type=request.protocol_type,
            protocols=request.protocols,
            last_heartbeat_ms=now,
            join_token=token,
        )
        if not group.members:
            group.protocol_type = request.protocol_type
        group.members[member_id] = member
        if request.group_instance_id is not None:
            group.static_members[request.group_instance_id] = member_id
        if group.leader_id is None:
            group.leader_id = member_id
        return self._prepare_rebalance(group, now, new_member=True)

    @staticmethod
    def _replace_join_token(member: Member, token: Hashable) -> list[Completion]:
        previous = member.join_token
        member.join_token = token
        if previous is None:
            return []
        return [Completion(previous, JoinResult(ErrorCode.REBALANCE_IN_PROGRESS, member_id=member.member_id))]

    def _prepare_rebalance(self, group: Group, now: int, new_member: bool = False) -> list[Completion]:
        completions = []
        if group.state is GroupState.COMPLETING_REBALANCE:
            completions += self._fail_pending_syncs(group, ErrorCode.REBALANCE_IN_PROGRESS, now)
        timeout = max((m.rebalance_timeout_ms for m in group.members.values()), default=0)
        if group.state is GroupState.EMPTY and self._settings.initial_rebalance_delay_ms > 0:
            group.initial_join_limit_ms = now + timeout
            group.rebalance_deadline_ms = min(now + self._settings.initial_rebalance_delay_ms, now + timeout)
        elif group.state is GroupState.PREPARING_REBALANCE and group.initial_join_limit_ms is not None:
            if new_member:
                group.rebalance_deadline_ms = min(
                    now + self._settings.initial_rebalance_delay_ms, group.initial_join_limit_ms
                )
        elif group.state is not GroupState.PREPARING_REBALANCE:
            group.rebalance_deadline_ms = now + timeout
        self._transition(group, GroupEvent.REBALANCE, now)
        return completions + self._maybe_complete_join(group, now)

    def _maybe_complete_join(self, group: Group, now: int) -> list[Completion]:
        if group.state is not GroupState.PREPARING_REBALANCE or group.initial_join_limit_ms is not None:
            return []
        if group.all_members_joined():
            return self._complete_join(group, now)
        return []

    def _complete_join(self, group: Group, now: int) -> list[Completion]:
        for member in [m for m in group.members.values() if m.join_token is None]:
            self._failed.append((group.group_id, member.member_id, "did not rejoin within the rebalance timeout"))
            self._remove_member(group, member)
        group.pending_members.clear()
        group.rebalance_deadline_ms = None
        group.initial_join_limit_ms = None
        group.generation_id += 1
        if not group.members:  # the protocol type stays: an emptied consumer group is still one
            group.protocol_name = None
            group.leader_id = None
            self._transition(group, GroupEvent.JOIN_COMPLETED_EMPTY, now)
            self._store_metadata(group)
            return []
        group.protocol_name = group.select_protocol()
        if group.leader_id not in group.members:
            group.leader_id = next(iter(group.members))
        self._transition(group, GroupEvent.JOIN_COMPLETED, now)
        group.sync_deadline_ms = now + max(m.rebalance_timeout_ms for m in group.members.values())
        completions = []
        for member in group.members.values():
            member.assignment = b""
            member.last_heartbeat_ms = now
            token, member.join_token = member.join_token, None
            completions.append(Completion(token, join_result(group, member)))
        return completions

    def _remove_member(self, group: Group, member: Member) -> list[Completion]:
        del group.members[member.member_id]
        if (
            member.group_instance_id is not None
            and group.static_members.get(member.group_instance_id) == member.member_id
        ):
            del group.static_members[member.group_instance_id]
        if group.leader_id == member.member_id:
            group.leader_id = next(iter(group.members), None)
        completions = []
        if member.join_token is not None:
            completions.append(
                Completion(member.join_token, JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id=member.member_id))
            )
        if member.sync_token is not None:
            completions.append(Completion(member.sync_token, SyncResult(ErrorCode.UNKNOWN_MEMBER_ID)))
        return completions

    def _fail_pending_syncs(self, group: Group, error: ErrorCode, now: int) -> list[Completion]:
        """Answer every waiting SyncGroup with `error`; each member's session starts again from now."""
        completions = []
        for member in group.members.values():
            if member.sync_token is not None:
                completions.append(Completion(member.sync_token, SyncResult(error)))
                member.sync_token = None
                member.last_heartbeat_ms = now
        return completions

    # -- SyncGroup -----------------------------------------------------------------------------

    def sync(self, request: SyncRequest, now: int, token: Hashable) -> list[Completion]:
        def answer(error: ErrorCode, assignment: bytes = b"") -> list[Completion]:
            return [Completion(token, SyncResult(error, assignment))]

        if not request.group_id:
            return answer(ErrorCode.INVALID_GROUP_ID)
        group = self._groups.get(request.group_id)
        member = group.members.get(request.member_id) if group else None
        if group is None or member is None:
            return answer(ErrorCode.UNKNOWN_MEMBER_ID)
        if request.group_instance_id is not None and member.group_instance_id != request.group_instance_id:
            return answer(ErrorCode.FENCED_INSTANCE_ID)
        if request.generation_id != group.generation_id:
            return answer(ErrorCode.ILLEGAL_GENERATION)
        if (request.protocol_type is not None and request.protocol_type != group.protocol_type) or (
            request.protocol_name is not None and request.protocol_name != group.protocol_name
        ):
            return answer(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        member.last_heartbeat_ms = now
        if group.state is GroupState.PREPARING_REBALANCE:
            return answer(ErrorCode.REBALANCE_IN_PROGRESS)
        if group.state is GroupState.STABLE:
            return [Completion(token, sync_result(group, member))]
        # CompletingRebalance: wait for the leader's assignment.
        completions = []
        if member.sync_token is not None:
            completions.append(Completion(member.sync_token, SyncResult(ErrorCode.REBALANCE_IN_PROGRESS)))
        member.sync_token = token
        if member.member_id != group.leader_id:
            return completions
        assignments = dict(request.assignments)
        for m in group.members.values():
            m.assignment = assignments.get(m.member_id, b"")
        group.sync_deadline_ms = None
        self._store_metadata(group)  # Kafka stores the generation before the group turns Stable
        self._transition(group, GroupEvent.LEADER_SYNCED, now)
        for m in group.members.values():
            if m.sync_token is not None:
                completions.append(Completion(m.sync_token, sync_result(group, m)))
                m.sync_token = None
                # Kafka's propagateAssignment: a member's session starts again when its SyncGroup is
                # answered; a follower that waited longer than its session for the leader is not
                # expired before it can send its first heartbeat.
                m.last_heartbeat_ms = now
        return completions

    # -- Heartbeat and LeaveGroup ----------------------------------------------------------------

    def heartbeat(
        self, group_id: str, member_id: str, generation_id: int, now: int, group_instance_id: str | None = None
    ) -> ErrorCode:
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID
        group = self._groups.get(group_id)
        member = group.members.get(member_id) if group else None
        if group is None or member is None:
            if group is not None and group_instance_id is not None and group_instance_id in group.static_members:
                return ErrorCode.FENCED_INSTANCE_ID
            return ErrorCode.UNKNOWN_MEMBER_ID
        # Kafka checks the instance id only when the request carries one (Heartbeat v0-2 cannot).
        if group_instance_id is not None and member.group_instance_id != group_instance_id:
            return ErrorCode.FENCED_INSTANCE_ID
        if generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        member.last_heartbeat_ms = now
        if group.state is GroupState.PREPARING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def leave(
        self, group_id: str, leaving: Iterable[tuple[str, str | None]], now: int
    ) -> tuple[list[ErrorCode], list[Completion]]:
        """Remove members given as (member_id, group_instance_id); one error code per member."""
        group = self._groups.get(group_id)
        errors: list[ErrorCode] = []
        completions: list[Completion] = []
        removed = False
        for member_id, instance_id in leaving:
            if group is None:
                errors.append(ErrorCode.UNKNOWN_MEMBER_ID)
                continue
            if instance_id is not None:
                current = group.static_members.get(instance_id)
                if current is None:
                    errors.append(ErrorCode.UNKNOWN_MEMBER_ID)
                    continue
                if member_id and member_id != current:
                    errors.append(ErrorCode.FENCED_INSTANCE_ID)
                    continue
                member_id = current
            if member_id in group.pending_members:
                del group.pending_members[member_id]
                errors.append(ErrorCode.NONE)
                removed = True
                continue
            member = group.members.get(member_id)
            if member is None:
                errors.append(ErrorCode.UNKNOWN_MEMBER_ID)
                continue
            completions += self._remove_member(group, member)
            errors.append(ErrorCode.NONE)
            removed = True
        if removed and group is not None:
            completions += self._after_members_removed(group, now)
        return errors, completions

    def _after_members_removed(self, group: Group, now: int) -> list[Completion]:
        if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            return self._prepare_rebalance(group, now)
        if group.state is GroupState.PREPARING_REBALANCE:
            return self._maybe_complete_join(group, now)
        return []

    # -- online migration with KIP-848 consumer groups (ADR 50) ------------------------------------

    def accepts_session_timeout(self, session_timeout_ms: int) -> bool:
        s = self._settings
        return s.min_session_timeout_ms <= session_timeout_ms <= s.max_session_timeout_ms

    def release(self, group_id: str) -> list[Completion]:
        """The group becomes a consumer group (upgrade): waiting joins and syncs are answered
        REBALANCE_IN_PROGRESS, so that their members join again, and its metadata gets a tombstone."""
        group = self._groups.pop(group_id)
        completions = []
        for member in group.members.values():
            if member.join_token is not None:
                rejoin = JoinResult(ErrorCode.REBALANCE_IN_PROGRESS, member_id=member.member_id)
                completions.append(Completion(member.join_token, rejoin))
            if member.sync_token is not None:
                completions.append(Completion(member.sync_token, SyncResult(ErrorCode.REBALANCE_IN_PROGRESS)))
        self._delete_metadata(group_id)
        return completions

    def adopt(self, group: Group, now: int, rebalance: bool) -> list[Completion]:
        """A consumer group turned back into this classic group (downgrade): stored as it is (Stable,
        each member's assignment), then rebalanced when a member's leaving caused it (Kafka)."""
        self._groups[group.group_id] = group
        self._store_metadata(group)
        if not rebalance:
            return []
        return self._prepare_rebalance(group, now)

    # -- time --------------------------------------------------------------------------------------

    def take_failed(self) -> list[tuple[str, str, str]]:
        """(group, member, why) of each member a timeout removed since the last call (Kafka logs them)."""
        failed, self._failed = self._failed, []
        return failed

    def next_deadline(self) -> int | None:
        deadlines = []
        for group in self._groups.values():
            if group.state is GroupState.PREPARING_REBALANCE and group.rebalance_deadline_ms is not None:
                deadlines.append(group.rebalance_deadline_ms)
            if group.state is GroupState.COMPLETING_REBALANCE and group.sync_deadline_ms is not None:
                deadlines.append(group.sync_deadline_ms)
            deadlines.extend(group.pending_members.values())
            for member in group.members.values():
                if member.join_token is None and member.sync_token is None:
                    deadlines.append(member.last_heartbeat_ms + member.session_timeout_ms)
        return min(deadlines, default=None)

    def tick(self, now: int) -> list[Completion]:
        """Apply every timeout that has passed by `now`."""
        completions: list[Completion] = []
        for group in list(self._groups.values()):
            expired_pending = [m for m, deadline in group.pending_members.items() if deadline <= now]
            for member_id in expired_pending:
                del group.pending_members[member_id]
            expired = [
                m
                for m in group.members.values()
                if m.join_token is None and m.sync_token is None and m.last_heartbeat_ms + m.session_timeout_ms <= now
            ]
            self._failed += [(group.group_id, m.member_id, "session timeout") for m in expired]
            if group.state is GroupState.COMPLETING_REBALANCE and group.sync_deadline_ms is not None:
                if group.sync_deadline_ms <= now:
                    unsynced = [m for m in group.members.values() if m.sync_token is None and m not in expired]
                    self._failed += [(group.group_id, m.member_id, "no SyncGroup in time") for m in unsynced]
                    expired += unsynced
            for member in expired:
                completions += self._remove_member(group, member)
            if expired:
                completions += self._after_members_removed(group, now)
            elif expired_pending:
                completions += self._maybe_complete_join(group, now)
            if (
                group.state is GroupState.PREPARING_REBALANCE
                and group.rebalance_deadline_ms is not None
                and group.rebalance_deadline_ms <= now
            ):
                group.initial_join_limit_ms = None
                completions += self._complete_join(group, now)
        return completions
