"""The KIP-848 consumer group coordinator: ConsumerGroupHeartbeat as a sans-I/O state machine.

One call, `heartbeat(request, now)`, does what Kafka's GroupMetadataManager.consumerGroupHeartbeat
does, in its three steps: (1) create or update the member and, if its subscription or the
partitions of the subscribed topics changed, bump the group epoch; (2) if the group epoch is ahead
of the assignment epoch, compute a new target assignment with the group's assignor; (3) move the
member towards its target (reconciliation.py: revoke first, then assign what others released).
`tick(now)` fences members whose session expired or who did not revoke within their rebalance
timeout; `next_deadline()` says when `tick` is due. Time is an argument; nothing here sleeps.

Regex subscriptions are resolved outside, as Kafka resolves them off the request path (ADR 68): the
coordinator says which patterns need resolving (`take_regex_work`), the runtime matches them with RE2
in a worker thread, and `regexes_resolved` applies the matches (a new group epoch if they changed the
group's topics; `subscriptions.py`).

Errors are Kafka's: INVALID_REQUEST for a malformed heartbeat and UNSUPPORTED_ASSIGNOR (heartbeat.py),
GROUP_MAX_SIZE_REACHED, UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID,
FENCED_INSTANCE_ID, GROUP_ID_NOT_FOUND for a group of the classic protocol that is not empty.
The classic coordinator's table is consulted for group ids, which both protocols share.

Beside it, by concern (issue 40): the request, its checks and what it sets (`heartbeat.py`), who a
heartbeat speaks for (`member_identity.py`), the target and each member's step towards it
(`targets.py`), the classic members' requests (`classic_members.py`, a collaborator given this
coordinator as `ConsumerGroupMembers`), what the groups subscribe to (`subscriptions.py`, regexes
included), the per-group configs (`group_configs.py`), the offset commit and fetch checks
(`offset_checks.py`), the records (`records.py`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping

from ...configs import ConfigEntry
from ...errors import ErrorCode, KafkaError
from ..metadata_hash import MetadataHasher
from ..model import Completion
from .assignors import Assignment
from .classic_members import ClassicMembers
from .group_configs import ConsumerGroupConfigs
from .heartbeat import ConsumerHeartbeat as ConsumerHeartbeat  # re-exported: the rooms and runtimes name them here
from .heartbeat import HeartbeatAnswer as HeartbeatAnswer
from .heartbeat import is_full, take_request, validate
from .member_identity import dynamic_member, leaving_member, replace_static_member, static_member
from .migration import CONSUMER_PROTOCOL_TYPE, EmbeddedProtocol, to_classic_group, to_consumer_group
from .model import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroup,
    ConsumerMember,
    ModernGroupState,
)
from .offset_checks import validate_commit, validate_fetch
from .reconciliation import MemberState
from .records import ConsumerGroupRecord, RecordKey, RecordValue, changed_records, current_values, restore
from .settings import ClassicGroups as ClassicGroups  # re-exported: the wiring names them here
from .settings import ConsumerGroupSettings as ConsumerGroupSettings
from .subscriptions import REGEX_REFRESH_MS as REGEX_REFRESH_MS
from .subscriptions import Subscriptions
from .subscriptions import TopicLookup as TopicLookup
from .targets import new_target, preferred_assignor, step_towards


class ConsumerGroupCoordinator:
    def __init__(
        self,
        settings: ConsumerGroupSettings,
        topics: TopicLookup,
        classic: ClassicGroups,
        new_member_id: Callable[[], str],
        embedded: EmbeddedProtocol,
        hasher: MetadataHasher | None = None,
    ) -> None:
        """`embedded`: the ConsumerProtocol bytes of classic members (online migration, ADR 50);
        `hasher`: the groups' metadata hashes (KIP-1101; without one they are 0)."""
        self.settings = settings
        self._topics = topics
        self._classic = classic
        self._new_member_id = new_member_id
        self._embedded = embedded
        self._completions: list[Completion] = []  # classic requests a migration answered
        self.groups: dict[str, ConsumerGroup] = {}
        self.subscriptions = Subscriptions(
            topics, lambda: self.groups.values(), hasher or MetadataHasher()
        )  # names and regexes
        self.configs = ConsumerGroupConfigs(settings)  # the GROUP config resource's overrides, validated
        # What `__consumer_offsets` holds for each key, and the (group, member or None) keys a call changed.
        self._written: dict[RecordKey, RecordValue] = {}
        self._dirty: set[tuple[str, str | None]] = set()
        self.classic_members = ClassicMembers(self, classic, embedded, new_member_id)  # JoinGroup... (ADR 50)

    # -- ConsumerGroupHeartbeat ------------------------------------------------------------------

    def heartbeat(self, request: ConsumerHeartbeat, now: int) -> HeartbeatAnswer:
        try:
            validate(request, self.settings.assignors)
            if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                answer = self._leave(request, now)
            else:
                answer = self._heartbeat(request, now)
        except KafkaError as error:
            return HeartbeatAnswer(error.code, error.message)
        if request.group_id in self.groups:
            self._dirty.add((request.group_id, None))
            self._dirty.add((request.group_id, answer.member_id))
        return answer

    def _group(self, group_id: str, create: bool, now: int) -> ConsumerGroup:
        group = self.groups.get(group_id)
        if group is not None:
            return group
        if self._classic.is_classic_group(group_id):
            if create and self._classic.is_empty_classic_group(group_id):
                self._classic.delete(group_id)  # an empty classic group gives way, as in Kafka
            elif create and self._upgradable(group_id):
                return self._upgrade(group_id, now)
            else:
                raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        if not create:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Consumer group {group_id} not found.")
        group = self.groups[group_id] = ConsumerGroup(group_id)
        return group

    def _heartbeat(self, request: ConsumerHeartbeat, now: int) -> HeartbeatAnswer:
        joining = request.member_epoch == 0
        group = self._group(request.group_id, create=joining, now=now)
        member_id = request.member_id or self._new_member_id()
        if len(group.members) >= self.settings.max_size and member_id not in group.members:
            raise KafkaError(
                ErrorCode.GROUP_MAX_SIZE_REACHED,
                f"The consumer group has reached its maximum capacity of {self.settings.max_size} members.",
            )
        if request.instance_id is None:
            member = dynamic_member(group, member_id, request)
        else:
            member = static_member(group, member_id, request.instance_id, request, self._dirty)
        new_member = member.member_id not in group.members
        before = (member.subscription(), member.server_assignor)
        take_request(member, request)
        if request.may_describe is not None:
            self.subscriptions.describable(group.group_id, member, request.may_describe)
        previous_assigned = member.assignment_by_id()
        self.update_group(group, member, new_member, before, request.owned, now)
        member.session_deadline_ms = now + self.session_timeout_ms(group.group_id)
        full = is_full(request)
        return HeartbeatAnswer(
            member_id=member.member_id,
            member_epoch=member.member_epoch,
            heartbeat_interval_ms=self.heartbeat_interval_ms(group.group_id),
            # sent when it changed, topic ids included (Kafka keys it by topic id)
            assignment=dict(member.assigned) if full or member.assignment_by_id() != previous_assigned else None,
        )

    def update_group(
        self,
        group: ConsumerGroup,
        member: ConsumerMember,
        new_member: bool,
        before: tuple[object, object],
        owned: Assignment | None,
        now: int,
    ) -> None:
        """Kafka's three steps once the member is updated: a new group epoch if its subscription (or
        the subscribed topics) changed, a new target if the group epoch moved, then reconciliation."""
        if new_member:
            group.members[member.member_id] = member
            if member.instance_id is not None:
                group.static_members[member.instance_id] = member.member_id
            group.claim_partitions(member)
        bump = member.subscription() != before[0] or member.server_assignor != before[1]
        if bump:
            self.subscriptions.changed(group.group_id)
        if self.subscriptions.refresh_metadata(group, now) or bump:
            group.group_epoch += 1
            group.assignor = self._preferred_assignor(group)
        if group.group_epoch > group.assignment_epoch:
            self._update_target(group)
        step_towards(group, member, owned, now)

    def replace_static_member(self, group: ConsumerGroup, existing: ConsumerMember, member_id: str) -> ConsumerMember:
        return replace_static_member(group, existing, member_id, self._dirty)

    def changed(self, group_id: str, member_id: str | None) -> None:
        self._dirty.add((group_id, member_id))

    def _leave(self, request: ConsumerHeartbeat, now: int) -> HeartbeatAnswer:
        group = self.groups.get(request.group_id)
        if group is None:
            if self._classic.is_classic_group(request.group_id):
                raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {request.group_id} is not a consumer group.")
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Consumer group {request.group_id} not found.")
        member = leaving_member(group, request)
        if request.instance_id is not None and request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # It will be back: it keeps its place and its partitions until its session expires.
            group.release_partitions(member)
            member.pending_revocation = {}
            member.previous_member_epoch = member.member_epoch
            member.member_epoch = LEAVE_GROUP_STATIC_MEMBER_EPOCH
            member.state = MemberState.STABLE
            member.rebalance_deadline_ms = None
            group.claim_partitions(member)
            return HeartbeatAnswer(member_id=member.member_id, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH)
        self.remove_member(group, member, now)
        return HeartbeatAnswer(member_id=request.member_id, member_epoch=request.member_epoch)

    def remove_member(self, group: ConsumerGroup, member: ConsumerMember, now: int) -> None:
        """Fence a member (it left, its session expired, it did not revoke or join or sync in time): a
        new group epoch; or, when the last consumer-protocol member goes and classic members remain,
        the group turns classic (Kafka's validateOnlineDowngradeWithFencedMember)."""
        others = [m for m in group.members.values() if m is not member]
        if (
            member.classic is None
            and others
            and all(m.classic is not None for m in others)
            and self.settings.migration_policy.downgrade_enabled
        ):
            self.downgrade(group, member.member_id, now, rebalance=True)
            return
        self.drop_member(group, member)
        self.bump_after_removal(group)

    def drop_member(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        group.release_partitions(member)
        del group.members[member.member_id]
        group.target.pop(member.member_id, None)
        self._dirty.update(((group.group_id, member.member_id), (group.group_id, None)))
        self.subscriptions.member_gone(group.group_id, member.member_id)
        if member.instance_id is not None and group.static_members.get(member.instance_id) == member.member_id:
            del group.static_members[member.instance_id]

    def bump_after_removal(self, group: ConsumerGroup) -> None:
        self.subscriptions.changed(group.group_id)
        self.subscriptions.refresh_metadata(group, None)
        group.group_epoch += 1
        group.assignor = self._preferred_assignor(group)
        self._dirty.add((group.group_id, None))

    # -- online migration (ADR 50) ---------------------------------------------------------------

    def _upgradable(self, group_id: str) -> bool:
        """Kafka's validateOnlineUpgrade."""
        classic = self._classic.group(group_id)
        return (
            classic is not None
            and self.settings.migration_policy.upgrade_enabled
            and classic.protocol_type == CONSUMER_PROTOCOL_TYPE
            and len(classic.members) <= self.settings.max_size
        )

    def _upgrade(self, group_id: str, now: int) -> ConsumerGroup:
        """Kafka's convertToConsumerGroup: the classic group's members become the consumer group's."""
        classic = self._classic.group(group_id)
        assert classic is not None
        try:
            group = to_consumer_group(classic, self._embedded, now)
        except ValueError:
            raise KafkaError(
                ErrorCode.GROUP_ID_NOT_FOUND,
                f"Cannot upgrade the classic group {group_id} to consumer group because the embedded "
                "consumer protocol is malformed.",
            ) from None
        self._completions += self._classic.release(group_id)
        self.groups[group_id] = group
        self.subscriptions.changed(group_id)
        self.subscriptions.refresh_metadata(group, now)
        group.assignor = self._preferred_assignor(group)
        self._dirty.add((group_id, None))
        self._dirty.update((group_id, mid) for mid in group.members)
        return group

    def downgrade(self, group: ConsumerGroup, leaving_member_id: str | None, now: int, rebalance: bool) -> None:
        """Kafka's convertToClassicGroup: tombstones for the consumer group, the classic group stored."""
        classic = to_classic_group(group, leaving_member_id, self._embedded, now)
        self._forget(group.group_id)
        self._completions += self._classic.adopt(classic, now, rebalance)

    def _forget(self, group_id: str) -> None:
        """The group is gone: every key it wrote gets a tombstone at the next `take_records`."""
        self.groups.pop(group_id, None)
        self.subscriptions.group_gone(group_id)
        self._dirty.update((gid, mid) for _, gid, mid in self._written if gid == group_id)
        self._dirty.add((group_id, None))

    def take_completions(self) -> list[Completion]:
        """Waiting classic requests a migration answered (REBALANCE_IN_PROGRESS on upgrade)."""
        completions, self._completions = self._completions, []
        return completions

    # -- what the groups subscribe to: `self.subscriptions` (subscriptions.py) -----------------

    def topics_changed(self) -> None:
        """Topics were created or deleted: every regular expression in use is resolved again."""
        self.subscriptions.topics_changed()

    def take_regex_work(self) -> tuple[frozenset[str], tuple[str, ...]] | None:
        """The patterns to resolve and the topic names to match them against (`Subscriptions`)."""
        return self.subscriptions.take_regex_work()

    def regexes_resolved(self, matches: Mapping[str, frozenset[str]], now: int) -> None:
        """Apply resolved patterns: the groups whose topics they change start a new epoch; their members
        learn their new target on their next heartbeat."""
        for group in self.subscriptions.resolved(matches, now):
            group.group_epoch += 1
            group.assignor = self._preferred_assignor(group)
            self._dirty.add((group.group_id, None))

    # -- target assignment and reconciliation: targets.py -----------------------------------------

    def _preferred_assignor(self, group: ConsumerGroup) -> str:
        return preferred_assignor(group, self.settings.assignors[0])

    def _update_target(self, group: ConsumerGroup) -> None:
        assignor = group.assignor or self._preferred_assignor(group)
        new_target(group, assignor, lambda m: self.subscriptions.member_topics(group.group_id, m))
        self._dirty.update((group.group_id, mid) for mid in group.members)

    # -- time ----------------------------------------------------------------------------------

    def next_deadline(self) -> int | None:
        deadlines = [d for group in self.groups.values() for m in group.members.values() for d in m.deadlines()]
        return min(deadlines, default=None)

    def tick(self, now: int) -> list[tuple[str, str]]:
        """Fence the members whose session expired or who did not revoke in time; (group, member) each."""
        fenced = []
        for group in list(self.groups.values()):
            for member in list(group.members.values()):
                if self.groups.get(group.group_id) is not group:
                    break  # downgraded to a classic group by the previous fencing
                if any(d <= now for d in member.deadlines()):
                    self.remove_member(group, member, now)
                    fenced.append((group.group_id, member.member_id))
        return fenced

    # -- records in __consumer_offsets ----------------------------------------------------------

    def _topic_id(self, name: str) -> uuid.UUID | None:
        topic = self._topics.get(name)
        return topic.topic_id if topic is not None else None

    def _topic_name(self, topic_id: uuid.UUID) -> str | None:
        topic = self._topics.by_id(topic_id)
        return topic.name if topic is not None else None

    def take_records(self) -> list[ConsumerGroupRecord]:
        """The records to write since the last call: the keys that changed, tombstones for those gone."""
        records = changed_records(self._dirty, self.groups, self._written, self._topic_id)
        self._dirty.clear()
        return records

    def load(self, records: Iterable[ConsumerGroupRecord], now: int) -> None:
        """The groups `__consumer_offsets` kept; every member's session starts again at `now`."""
        self.groups = restore(records, self._topic_name)
        for group in self.groups.values():
            if self._classic.is_empty_classic_group(group.group_id):
                self._classic.delete(group.group_id)  # known there only because it has offsets
            elif self._classic.group(group.group_id) is not None:
                # An upgrade interrupted between its two writes (the consumer group's records go first):
                # the consumer group is the newer, the classic group's tombstone is written again.
                self._completions += self._classic.release(group.group_id)
            group.assignor = self._preferred_assignor(group)
            stored_hash = group.metadata_hash
            self.subscriptions.refresh_metadata(group, now)
            for member in group.members.values():
                member.take_topic_ids(group.subscription_metadata)
                member.session_deadline_ms = now + self.session_timeout_ms(group.group_id)
                if member.classic is not None:
                    member.session_deadline_ms = now + member.classic.session_timeout_ms
                elif member.state is MemberState.UNREVOKED_PARTITIONS:
                    member.rebalance_deadline_ms = now + member.rebalance_timeout_ms
            self._written.update(current_values(group, None, self._topic_id))
            for mid in group.members:
                self._written.update(current_values(group, mid, self._topic_id))
            if group.members and group.metadata_hash != stored_hash:
                # Kafka compares the hash it loaded with the topics' at the next heartbeat: a new epoch
                group.group_epoch += 1
                self._dirty.add((group.group_id, None))

    # -- the GROUP config resource and the per-group configs: `self.configs` (group_configs.py) ---

    def describe_group_configs(self, group_id: str, keys: Iterable[str] | None) -> list[ConfigEntry]:
        return self.configs.describe(group_id, keys)

    def alter_group_configs(
        self, group_id: str, changes: Mapping[str, tuple[int, str | None]], validate_only: bool
    ) -> None:
        self.configs.alter(group_id, changes, validate_only)

    def session_timeout_ms(self, group_id: str) -> int:
        return self.configs.session_timeout_ms(group_id)

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self.configs.heartbeat_interval_ms(group_id)

    # -- offsets, admin ------------------------------------------------------------------------

    def validate_offset_commit(
        self,
        group_id: str,
        member_id: str,
        member_epoch: int,
        version: int,
        transactional: bool = False,
        instance_id: str | None = None,
    ) -> ErrorCode:
        """Kafka's ConsumerGroup.validateOffsetCommit for a consumer group (`group_id` must be one)."""
        return validate_commit(self.groups[group_id], member_id, member_epoch, version, transactional, instance_id)

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode:
        return validate_fetch(self.groups[group_id], member_id, member_epoch)

    def delete(self, group_id: str) -> ErrorCode:
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.GROUP_ID_NOT_FOUND
        if group.members:
            return ErrorCode.NON_EMPTY_GROUP
        del self.groups[group_id]
        # its GROUP configs stay: they are the id's, as Kafka's (kept across DeleteGroups)
        self._dirty.update((gid, mid) for _, gid, mid in self._written if gid == group_id)
        self._dirty.add((group_id, None))
        return ErrorCode.NONE

    def give_way_to_classic(self, group_id: str) -> ErrorCode:
        """A classic member joins (JoinGroup) a group that is not a consumer group with members
        (`hosts_classic_join`): an empty consumer group of that id is deleted (its offsets stay), as
        Kafka's maybeDeleteEmptyConsumerGroup."""
        group = self.groups.get(group_id)
        if group is None or group.members:
            return ErrorCode.NONE
        return self.delete(group_id)

    # -- members of the classic protocol: `self.classic_members` (classic_members.py, ADR 50) ------

    def hosts_classic_join(self, group_id: str) -> bool:
        """A JoinGroup for this group goes to the consumer group: it exists and has members (Kafka)."""
        group = self.groups.get(group_id)
        return group is not None and bool(group.members)

    def state(self, group_id: str) -> ModernGroupState:
        group = self.groups.get(group_id)
        return ModernGroupState.DEAD if group is None else group.state

    def has_members(self, group_id: str) -> bool:
        group = self.groups.get(group_id)
        return group is not None and bool(group.members)

    def subscribed_topics(self, group_id: str) -> set[str]:
        group = self.groups.get(group_id)
        return set(group.subscription_metadata) if group is not None else set()
