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
group's topics). Until its pattern is resolved a member's regex contributes no topic; the DESCRIBE
filter is applied here, to what matched.

Errors are Kafka's: INVALID_REQUEST for a malformed heartbeat, UNSUPPORTED_ASSIGNOR,
GROUP_MAX_SIZE_REACHED, UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID,
FENCED_INSTANCE_ID, GROUP_ID_NOT_FOUND for a group of the classic protocol that is not empty.
The classic coordinator's table is consulted for group ids, which both protocols share.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

import attrs

from ...configs import ConfigEntry
from ...errors import ErrorCode, KafkaError
from ...topics import Topic
from ..model import Completion
from .assignors import ASSIGNORS, Assignment, AssignmentMember
from .classic_members import ClassicMemberRequests
from .group_configs import ConsumerGroupConfigs
from .member_identity import dynamic_member, replace_static_member, static_member
from .migration import CONSUMER_PROTOCOL_TYPE, EmbeddedProtocol, to_classic_group, to_consumer_group
from .model import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroup,
    ConsumerMember,
    ModernGroupState,
)
from .reconciliation import MemberState, reconcile
from .records import (
    MEMBER_KINDS,
    ConsumerGroupRecord,
    RecordKey,
    RecordKind,
    RecordValue,
    current_values,
    in_kafka_order,
    record_changes,
    restore,
)
from .settings import ClassicGroups as ClassicGroups  # re-exported: the wiring names them here
from .settings import ConsumerGroupSettings as ConsumerGroupSettings

REGEX_REFRESH_MS = 10_000  # regexes are also resolved again when topics change (`topics_changed`)


class TopicLookup(Protocol):
    def get(self, name: str) -> Topic | None: ...

    def by_id(self, topic_id: uuid.UUID) -> Topic | None: ...

    @property
    def changes(self) -> int:
        """A counter that moves whenever a topic is created, grown or deleted."""
        ...

    def topics(self) -> list[Topic]: ...


@attrs.frozen
class ConsumerHeartbeat:
    """A ConsumerGroupHeartbeat request; None means "unchanged since the last heartbeat", as Kafka's."""

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: Assignment | None = None
    client_id: str = ""
    client_host: str = ""
    member_id_from_client: bool = True  # v1 (KIP-1082): the client makes its member id
    # Whether the member's principal may DESCRIBE a topic: what its regex may match (None: no authorizer)
    may_describe: Callable[[str], bool] | None = attrs.field(default=None, eq=False)


@attrs.frozen
class HeartbeatAnswer:
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: dict[str, frozenset[int]] | None = None


class ConsumerGroupCoordinator(ClassicMemberRequests):
    def __init__(
        self,
        settings: ConsumerGroupSettings,
        topics: TopicLookup,
        classic: ClassicGroups,
        new_member_id: Callable[[], str],
        embedded: EmbeddedProtocol,
    ) -> None:
        """`embedded`: the ConsumerProtocol bytes of classic members (online migration, ADR 50)."""
        self.settings = settings
        self._topics = topics
        self._classic = classic
        self._new_member_id = new_member_id
        self._embedded = embedded
        self._completions: list[Completion] = []  # classic requests a migration answered
        self.groups: dict[str, ConsumerGroup] = {}
        # group id -> (the topics its members subscribe to, names and resolved regexes; when the
        # regexes are resolved again): recomputed when a subscription changes, the members change,
        # topics are created or deleted (`topics_changed`), or every REGEX_REFRESH_MS.
        self._subscribed: dict[str, tuple[frozenset[str], int]] = {}
        self._topic_changes = topics.changes
        self._may_describe: dict[tuple[str, str], Callable[[str], bool]] = {}  # (group, member): its ACLs
        self.configs = ConsumerGroupConfigs(settings)  # the GROUP config resource's overrides, validated
        # pattern -> the topic names it matched when last resolved, only for
        # patterns some member subscribes with; and the patterns that need resolving (again).
        self._regex_matches: dict[str, frozenset[str]] = {}
        self._regex_wanted: set[str] = set()
        # What `__consumer_offsets` holds for each key, and the (group, member or None) keys a call changed.
        self._written: dict[RecordKey, RecordValue] = {}
        self._dirty: set[tuple[str, str | None]] = set()

    # -- ConsumerGroupHeartbeat ------------------------------------------------------------------

    def heartbeat(self, request: ConsumerHeartbeat, now: int) -> HeartbeatAnswer:
        try:
            self._validate(request)
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

    def _validate(self, request: ConsumerHeartbeat) -> None:
        def invalid(message: str) -> KafkaError:
            return KafkaError(ErrorCode.INVALID_REQUEST, message)

        if not request.group_id:
            raise invalid("GroupId can't be empty.")
        if request.instance_id == "":
            raise invalid("InstanceId can't be empty.")
        if request.rack_id == "":
            raise invalid("RackId can't be empty.")
        if request.member_id_from_client and not request.member_id:
            raise invalid("MemberId can't be empty.")
        epoch = request.member_epoch
        if epoch > 0 or epoch == LEAVE_GROUP_MEMBER_EPOCH:
            if not request.member_id:
                raise invalid("MemberId can't be empty.")
        elif epoch == 0:
            if request.rebalance_timeout_ms == -1:
                raise invalid("RebalanceTimeoutMs must be provided in first request.")
            if request.owned is None or any(request.owned.values()):
                raise invalid("TopicPartitions must be empty when (re-)joining.")
            if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
                raise invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
        elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if not request.member_id:
                raise invalid("MemberId can't be empty.")
            if request.instance_id is None:
                raise invalid("InstanceId can't be null.")
        else:
            raise invalid("MemberEpoch is invalid.")
        if request.server_assignor is not None and request.server_assignor not in self.settings.assignors:
            raise KafkaError(
                ErrorCode.UNSUPPORTED_ASSIGNOR,
                f"ServerAssignor {request.server_assignor} is not supported. "
                f"Supported assignors: {', '.join(self.settings.assignors)}.",
            )

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
        if request.instance_id is not None:
            member.instance_id = request.instance_id
        if request.rack_id is not None:
            member.rack_id = request.rack_id
        if request.rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = request.rebalance_timeout_ms
        if request.server_assignor is not None:
            member.server_assignor = request.server_assignor
        if request.subscribed_topic_names is not None:
            member.subscribed_topic_names = tuple(sorted(set(request.subscribed_topic_names)))
        if request.subscribed_topic_regex is not None:
            member.subscribed_topic_regex = request.subscribed_topic_regex or None
        member.client_id = request.client_id
        member.client_host = request.client_host
        member.classic = None  # a member speaking the consumer protocol is no classic member any more
        member.join_deadline_ms = member.sync_deadline_ms = None
        if request.may_describe is not None and (group.group_id, member.member_id) not in self._may_describe:
            self._may_describe[(group.group_id, member.member_id)] = request.may_describe
            if member.subscribed_topic_regex is not None:
                self._subscribed.pop(group.group_id, None)
        previous_assigned = member.assignment_by_id()
        self._update_group(group, member, new_member, before, request.owned, now)
        member.session_deadline_ms = now + self.session_timeout_ms(group.group_id)
        full = request.member_epoch == 0 or (
            request.rebalance_timeout_ms != -1
            and (request.subscribed_topic_names is not None or request.subscribed_topic_regex is not None)
            and request.owned is not None
        )
        return HeartbeatAnswer(
            member_id=member.member_id,
            member_epoch=member.member_epoch,
            heartbeat_interval_ms=self.heartbeat_interval_ms(group.group_id),
            # sent when it changed, topic ids included (Kafka keys it by topic id)
            assignment=dict(member.assigned) if full or member.assignment_by_id() != previous_assigned else None,
        )

    def _update_group(
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
            self._subscribed.pop(group.group_id, None)
        if self._refresh_subscription_metadata(group, now) or bump:
            group.group_epoch += 1
            group.assignor = self._preferred_assignor(group)
        if group.group_epoch > group.assignment_epoch:
            self._update_target(group)
        self._reconcile(group, member, owned, now)

    def _replace_static_member(self, group: ConsumerGroup, existing: ConsumerMember, member_id: str) -> ConsumerMember:
        return replace_static_member(group, existing, member_id, self._dirty)

    def _leave(self, request: ConsumerHeartbeat, now: int) -> HeartbeatAnswer:
        group = self.groups.get(request.group_id)
        if group is None:
            if self._classic.is_classic_group(request.group_id):
                raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {request.group_id} is not a consumer group.")
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Consumer group {request.group_id} not found.")
        if request.instance_id is None:
            member = group.members.get(request.member_id)
            if member is None:
                raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {request.member_id} is not a member.")
        else:
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
            if request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
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
            self._downgrade(group, member.member_id, now, rebalance=True)
            return
        self._drop_member(group, member)
        self._bump_after_removal(group)

    def _drop_member(self, group: ConsumerGroup, member: ConsumerMember) -> None:
        group.release_partitions(member)
        del group.members[member.member_id]
        group.target.pop(member.member_id, None)
        self._dirty.update(((group.group_id, member.member_id), (group.group_id, None)))
        self._may_describe.pop((group.group_id, member.member_id), None)
        if member.instance_id is not None and group.static_members.get(member.instance_id) == member.member_id:
            del group.static_members[member.instance_id]

    def _bump_after_removal(self, group: ConsumerGroup) -> None:
        self._subscribed.pop(group.group_id, None)
        self._refresh_subscription_metadata(group, None)
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
        self._subscribed.pop(group_id, None)
        self._refresh_subscription_metadata(group, now)
        group.assignor = self._preferred_assignor(group)
        self._dirty.add((group_id, None))
        self._dirty.update((group_id, mid) for mid in group.members)
        return group

    def _downgrade(self, group: ConsumerGroup, leaving_member_id: str | None, now: int, rebalance: bool) -> None:
        """Kafka's convertToClassicGroup: tombstones for the consumer group, the classic group stored."""
        classic = to_classic_group(group, leaving_member_id, self._embedded, now)
        self._forget(group.group_id)
        self._completions += self._classic.adopt(classic, now, rebalance)

    def _forget(self, group_id: str) -> None:
        """The group is gone: every key it wrote gets a tombstone at the next `take_records`."""
        self.groups.pop(group_id, None)
        self._subscribed.pop(group_id, None)
        for key in [k for k in self._may_describe if k[0] == group_id]:
            del self._may_describe[key]
        self._dirty.update((gid, mid) for _, gid, mid in self._written if gid == group_id)
        self._dirty.add((group_id, None))

    def take_completions(self) -> list[Completion]:
        """Waiting classic requests a migration answered (REBALANCE_IN_PROGRESS on upgrade)."""
        completions, self._completions = self._completions, []
        return completions

    # -- target assignment and reconciliation --------------------------------------------------

    def _subscribed_topics(self, group_id: str, member: ConsumerMember) -> set[str]:
        """Its topic names, and the topics its regex matches that its principal may DESCRIBE (as Kafka)."""
        topics = set(member.subscribed_topic_names)
        pattern = member.subscribed_topic_regex
        if pattern is not None:
            matched = self._regex_matches.get(pattern)
            if matched is None:
                self._regex_wanted.add(pattern)  # no topic until resolved, as Kafka
                return topics
            may_describe = self._may_describe.get((group_id, member.member_id))
            topics |= {t for t in matched if may_describe is None or may_describe(t)}
        return topics

    def _patterns_in_use(self, group: ConsumerGroup | None = None) -> set[str]:
        groups = self.groups.values() if group is None else (group,)
        return {m.subscribed_topic_regex for g in groups for m in g.members.values() if m.subscribed_topic_regex}

    def topics_changed(self) -> None:
        """Topics were created or deleted: every regular expression in use is resolved again."""
        self._subscribed.clear()
        self._regex_wanted |= self._patterns_in_use()

    def take_regex_work(self) -> tuple[frozenset[str], tuple[str, ...]] | None:
        """The patterns to resolve and the topic names to match them against: every topic the lookup
        knows, internal ones included, as Kafka's refreshRegularExpressions matches every topic of the
        metadata image; None when there is nothing to do. Each pattern is handed out once per request."""
        if not self._regex_wanted:
            return None
        patterns, self._regex_wanted = frozenset(self._regex_wanted), set()
        return patterns, tuple(t.name for t in self._topics.topics())

    def regexes_resolved(self, matches: Mapping[str, frozenset[str]], now: int) -> None:
        """Apply resolved patterns (Kafka's handleRegularExpressionsResult): the groups whose topics
        they change start a new epoch; their members learn their new target on their next heartbeat."""
        in_use = self._patterns_in_use()
        self._regex_matches = {p: m for p, m in {**self._regex_matches, **matches}.items() if p in in_use}
        for group in self.groups.values():
            if not self._patterns_in_use(group) & matches.keys():
                continue
            self._subscribed.pop(group.group_id, None)
            if self._refresh_subscription_metadata(group, now):
                group.group_epoch += 1
                group.assignor = self._preferred_assignor(group)
                self._dirty.add((group.group_id, None))

    def _group_subscription(self, group: ConsumerGroup, now: int | None) -> frozenset[str]:
        if self._topics.changes != self._topic_changes:
            self._topic_changes = self._topics.changes
            self.topics_changed()
        cached = self._subscribed.get(group.group_id)
        if cached is not None and (now is None or now < cached[1]):
            return cached[0]
        if cached is not None:
            self._regex_wanted |= self._patterns_in_use(group)  # resolved again every REGEX_REFRESH_MS
        names = frozenset(t for m in group.members.values() for t in self._subscribed_topics(group.group_id, m))
        self._subscribed[group.group_id] = (names, (now or 0) + REGEX_REFRESH_MS)
        return names

    def _refresh_subscription_metadata(self, group: ConsumerGroup, now: int | None) -> bool:
        """The subscribed topics' ids and partition counts; True when they changed (a new group epoch)."""
        metadata: dict[str, tuple[str, int]] = {}
        for name in self._group_subscription(group, now):
            topic = self._topics.get(name)
            if topic is not None:
                metadata[name] = (str(topic.topic_id), topic.partition_count)
        if metadata == group.subscription_metadata:
            return False
        group.subscription_metadata = metadata
        return True

    def _preferred_assignor(self, group: ConsumerGroup) -> str:
        votes: dict[str, int] = {}
        for member in group.members.values():
            if member.server_assignor is not None:
                votes[member.server_assignor] = votes.get(member.server_assignor, 0) + 1
        if not votes:
            return self.settings.assignors[0]
        return max(sorted(votes), key=lambda name: votes[name])

    def _update_target(self, group: ConsumerGroup) -> None:
        counts = {name: count for name, (_, count) in group.subscription_metadata.items()}
        members = [
            AssignmentMember(
                m.member_id, frozenset(self._subscribed_topics(group.group_id, m)), group.target.get(m.member_id, {})
            )
            for m in group.members.values()
        ]
        assignor = ASSIGNORS[group.assignor or self._preferred_assignor(group)]
        group.target = {mid: {t: ps for t, ps in a.items() if ps} for mid, a in assignor(members, counts).items()}
        group.assignment_epoch = group.group_epoch
        self._dirty.update((group.group_id, mid) for mid in group.members)

    def _reconcile(self, group: ConsumerGroup, member: ConsumerMember, owned: Assignment | None, now: int) -> None:
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

    # -- time ----------------------------------------------------------------------------------

    def next_deadline(self) -> int | None:
        deadlines = [
            d
            for group in self.groups.values()
            for m in group.members.values()
            for d in (m.session_deadline_ms, m.rebalance_deadline_ms, m.join_deadline_ms, m.sync_deadline_ms)
            if d is not None
        ]
        return min(deadlines, default=None)

    def tick(self, now: int) -> list[tuple[str, str]]:
        """Fence the members whose session expired or who did not revoke in time; (group, member) each."""
        fenced = []
        for group in list(self.groups.values()):
            for member in list(group.members.values()):
                if self.groups.get(group.group_id) is not group:
                    break  # downgraded to a classic group by the previous fencing
                deadlines = (
                    member.session_deadline_ms,
                    member.rebalance_deadline_ms,
                    member.join_deadline_ms,
                    member.sync_deadline_ms,
                )
                if any(d is not None and d <= now for d in deadlines):
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
        records: list[ConsumerGroupRecord] = []
        for gid, mid in sorted(self._dirty, key=lambda k: (k[0], k[1] is not None, k[1] or "")):
            group = self.groups.get(gid)
            values = current_values(group, mid, self._topic_id) if group is not None else {}
            kinds = MEMBER_KINDS if mid is not None else (RecordKind.GROUP_EPOCH, RecordKind.TARGET_ASSIGNMENT_EPOCH)
            changes = record_changes(self._written, [(kind, gid, mid) for kind in kinds], values)
            records.extend(ConsumerGroupRecord(kind, gid, mid, value) for (kind, _, _), value in changes)
        self._dirty.clear()
        return in_kafka_order(records)

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
            self._refresh_subscription_metadata(group, now)
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
        """Kafka's ConsumerGroup.validateOffsetCommit for a consumer group (`group_id` must be one), of an
        OffsetCommit or (`transactional`) a TxnOffsetCommit, which need not name a member."""
        group = self.groups[group_id]
        if member_epoch < 0 and not group.members:
            return ErrorCode.NONE
        if transactional and member_epoch == -1 and not member_id and instance_id is None:
            return ErrorCode.NONE
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if not transactional and version < 9 and member.classic is None:
            return ErrorCode.UNSUPPORTED_VERSION
        if member_epoch != member.member_epoch:
            return ErrorCode.ILLEGAL_GENERATION if member.classic is not None else ErrorCode.STALE_MEMBER_EPOCH
        return ErrorCode.NONE

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode:
        """Kafka's ConsumerGroup.validateOffsetFetch: an admin's fetch (epoch -1, no member) always may."""
        group = self.groups[group_id]
        if member_epoch < 0 and member_id is None:
            return ErrorCode.NONE
        member = group.members.get(member_id or "")
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member_epoch != member.member_epoch:
            return ErrorCode.ILLEGAL_GENERATION if member.classic is not None else ErrorCode.STALE_MEMBER_EPOCH
        return ErrorCode.NONE

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

    def state(self, group_id: str) -> ModernGroupState:
        group = self.groups.get(group_id)
        return ModernGroupState.DEAD if group is None else group.state

    def has_members(self, group_id: str) -> bool:
        group = self.groups.get(group_id)
        return group is not None and bool(group.members)

    def subscribed_topics(self, group_id: str) -> set[str]:
        group = self.groups.get(group_id)
        return set(group.subscription_metadata) if group is not None else set()


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
