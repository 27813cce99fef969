"""Share-group membership (KIP-932): ShareGroupHeartbeat as a sans-I/O state machine on the modern
group shape (`modern.model`: group epoch, target assignment and its epoch, member epochs).

Kafka's GroupMetadataManager.shareGroupHeartbeat in its three steps, as the consumer coordinator's:
(1) create or update the member, bumping the group epoch when its subscription or the subscribed
topics' partitions changed; (2) compute a new target assignment with the `simple` assignor when the
group epoch is ahead; (3) the member takes its target at once: a share-group partition has no single
owner, so nothing is revoked first and the member epoch jumps to the assignment epoch.
`tick(now)` fences members whose session expired. Members that leave or are fenced are reported
(`departed`) so that the records they hold are released. What a call changed is marked, and
`take_records` gives the group's records to write to `__consumer_offsets` (`records`); `load`
replays them at start-up, so a restart keeps the group epoch and its members' epochs.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable

import attrs

from ...errors import ErrorCode, KafkaError
from ..metadata_hash import MetadataHasher
from ..modern.assignors import SHARE_ASSIGNORS, AssignmentMember
from ..modern.consumer import HeartbeatAnswer, TopicLookup
from ..modern.model import LEAVE_GROUP_MEMBER_EPOCH, ConsumerGroup, ConsumerMember, ModernGroupState
from ..modern.records import in_kafka_order, record_changes
from . import records as share_records
from .records import MEMBER_KINDS, ShareGroupRecord, ShareRecordKey, ShareRecordKind, ShareRecordValue

SHARE_ASSIGNOR = "simple"


@attrs.frozen
class ShareGroupSettings:
    """Kafka's `group.share.*` membership configs."""

    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 5_000
    max_size: int = 200
    # group.share.min/max.*: the range a group's own share.session.timeout.ms and
    # share.heartbeat.interval.ms may take (Kafka's GroupConfig, issue 42)
    min_session_timeout_ms: int = 45_000
    max_session_timeout_ms: int = 60_000
    min_heartbeat_interval_ms: int = 5_000
    max_heartbeat_interval_ms: int = 15_000


@attrs.frozen
class ShareHeartbeat:
    """A ShareGroupHeartbeat request; None means "unchanged since the last heartbeat"."""

    group_id: str
    member_id: str
    member_epoch: int
    rack_id: str | None = None
    subscribed_topic_names: tuple[str, ...] | None = None
    client_id: str = ""
    client_host: str = ""


class ShareGroupCoordinator:
    def __init__(
        self,
        settings: ShareGroupSettings,
        topics: TopicLookup,
        other_group: Callable[[str], bool],
        hasher: MetadataHasher | None = None,
    ) -> None:
        """`hasher`: the groups' metadata hashes (KIP-1101; without one they are 0)."""
        self.settings = settings
        self._topics = topics
        self._hasher = hasher or MetadataHasher()
        self._other_group = other_group  # a classic or consumer group holds this id
        self.groups: dict[str, ConsumerGroup] = {}
        self.group_configs: dict[str, dict[str, int]] = {}
        # (group, member, fenced) that left or were fenced, drained by the caller
        self.departed: list[tuple[str, str, bool]] = []
        # records: (group, member or None) changed since `take_records`, and the values last written
        self._dirty: set[tuple[str, str | None]] = set()
        self._written: dict[ShareRecordKey, ShareRecordValue] = {}

    def heartbeat(self, request: ShareHeartbeat, now: int) -> HeartbeatAnswer:
        try:
            self._validate(request)
            if request.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
                return self._leave(request)
            return self._heartbeat(request, now)
        except KafkaError as error:
            return HeartbeatAnswer(error.code, error.message)

    @staticmethod
    def _validate(request: ShareHeartbeat) -> None:
        def invalid(message: str) -> KafkaError:
            return KafkaError(ErrorCode.INVALID_REQUEST, message)

        if not request.group_id:
            raise invalid("GroupId can't be empty.")
        if not request.member_id:
            raise invalid("MemberId can't be empty.")
        if request.rack_id == "":
            raise invalid("RackId can't be empty.")
        if request.member_epoch == 0:
            if not request.subscribed_topic_names:
                raise invalid("SubscribedTopicNames must be set in first request.")
        elif request.member_epoch < LEAVE_GROUP_MEMBER_EPOCH:
            raise invalid("MemberEpoch is invalid.")

    def is_other_group(self, group_id: str) -> bool:
        return self._other_group(group_id)

    def create_empty(self, group_id: str) -> None:
        """An empty share group (AlterShareGroupOffsets may make one before any member joins)."""
        if group_id not in self.groups:
            self.groups[group_id] = ConsumerGroup(group_id, assignor=SHARE_ASSIGNOR)
            self._dirty.add((group_id, None))

    def check_empty(self, group_id: str, create: bool) -> ErrorCode:
        """Whether an admin may set the group's share-partitions (Alter/DeleteShareGroupOffsets): an empty
        share group, or none yet (made empty if `create`); NON_EMPTY_GROUP while it has members."""
        group = self.groups.get(group_id)
        if group is None:
            if not create or self.is_other_group(group_id):
                return ErrorCode.GROUP_ID_NOT_FOUND
            self.create_empty(group_id)
            return ErrorCode.NONE
        return ErrorCode.NON_EMPTY_GROUP if group.members else ErrorCode.NONE

    def _group(self, group_id: str, create: bool) -> ConsumerGroup:
        group = self.groups.get(group_id)
        if group is not None:
            return group
        if self._other_group(group_id):
            raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        if not create:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Share group {group_id} not found.")
        group = self.groups[group_id] = ConsumerGroup(group_id, assignor=SHARE_ASSIGNOR)
        self._dirty.add((group_id, None))
        return group

    def _heartbeat(self, request: ShareHeartbeat, now: int) -> HeartbeatAnswer:
        group = self._group(request.group_id, create=request.member_epoch == 0)
        member = group.members.get(request.member_id)
        if member is None:
            if request.member_epoch != 0:
                raise KafkaError(
                    ErrorCode.UNKNOWN_MEMBER_ID,
                    f"Member {request.member_id} is not a member of group {group.group_id}.",
                )
            if len(group.members) >= self.settings.max_size:
                raise KafkaError(
                    ErrorCode.GROUP_MAX_SIZE_REACHED,
                    f"The share group has reached its maximum capacity of {self.settings.max_size} members.",
                )
            member = ConsumerMember(request.member_id)
        elif request.member_epoch not in (0, member.member_epoch):
            raise KafkaError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The share group member has a member epoch ({request.member_epoch}) other than the one known "
                f"by the group coordinator ({member.member_epoch}). The member must rejoin.",
            )
        new_member = member.member_id not in group.members
        before = member.subscribed_topic_names
        if request.rack_id is not None:
            member.rack_id = request.rack_id
        if request.subscribed_topic_names is not None:
            member.subscribed_topic_names = tuple(sorted(set(request.subscribed_topic_names)))
        member.client_id = request.client_id
        member.client_host = request.client_host
        if new_member:
            group.members[member.member_id] = member
        if self._refresh_metadata(group) or new_member or member.subscribed_topic_names != before:
            group.group_epoch += 1
        if group.group_epoch > group.assignment_epoch:
            self._update_target(group)
        previous = member.assignment_by_id()
        if member.member_epoch != group.assignment_epoch:
            member.previous_member_epoch = member.member_epoch
            member.member_epoch = group.assignment_epoch
            member.assigned = dict(group.target.get(member.member_id, {}))
            member.take_topic_ids(group.subscription_metadata)
        member.session_deadline_ms = now + self.session_timeout_ms(group.group_id)
        self._dirty.add((group.group_id, None))
        self._dirty.add((group.group_id, member.member_id))
        full = request.member_epoch == 0 or request.subscribed_topic_names is not None
        return HeartbeatAnswer(
            member_id=member.member_id,
            member_epoch=member.member_epoch,
            heartbeat_interval_ms=self.heartbeat_interval_ms(group.group_id),
            # sent when it changed, topic ids included (Kafka's hasAssignedPartitionsChanged on a map
            # keyed by topic id): a topic created again under its name is a new assignment
            assignment=dict(member.assigned) if full or member.assignment_by_id() != previous else None,
        )

    def _leave(self, request: ShareHeartbeat) -> HeartbeatAnswer:
        group = self._group(request.group_id, create=False)
        member = group.members.get(request.member_id)
        if member is None:
            raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {request.member_id} is not a member.")
        self.remove_member(group, member)
        return HeartbeatAnswer(member_id=request.member_id, member_epoch=LEAVE_GROUP_MEMBER_EPOCH)

    def remove_member(self, group: ConsumerGroup, member: ConsumerMember, fenced: bool = False) -> None:
        del group.members[member.member_id]
        group.target.pop(member.member_id, None)
        self._refresh_metadata(group)
        group.group_epoch += 1
        self.departed.append((group.group_id, member.member_id, fenced))
        self._dirty.add((group.group_id, None))
        self._dirty.add((group.group_id, member.member_id))

    def _refresh_metadata(self, group: ConsumerGroup) -> bool:
        metadata: dict[str, tuple[str, int]] = {}
        for name in {t for m in group.members.values() for t in m.subscribed_topic_names}:
            topic = self._topics.get(name)
            if topic is not None:
                metadata[name] = (str(topic.topic_id), topic.partition_count)
        if metadata == group.subscription_metadata:
            return False
        group.subscription_metadata = metadata
        group.metadata_hash = self._hasher.group_hash(metadata)
        return True

    def topics_changed(self) -> None:
        """Topics were created, deleted or grew: groups subscribed to them get a new target."""
        for group in self.groups.values():
            if self._refresh_metadata(group):
                group.group_epoch += 1
                self._dirty.add((group.group_id, None))

    def _update_target(self, group: ConsumerGroup) -> None:
        counts = {name: count for name, (_, count) in group.subscription_metadata.items()}
        members = [
            AssignmentMember(m.member_id, frozenset(m.subscribed_topic_names), group.target.get(m.member_id, {}))
            for m in group.members.values()
        ]
        group.target = SHARE_ASSIGNORS[SHARE_ASSIGNOR](members, counts)
        group.assignment_epoch = group.group_epoch
        self._dirty.update((group.group_id, mid) for mid in group.members)

    # -- time ----------------------------------------------------------------------------------------

    def next_deadline(self) -> int | None:
        return min(
            (
                m.session_deadline_ms
                for g in self.groups.values()
                for m in g.members.values()
                if m.session_deadline_ms is not None
            ),
            default=None,
        )

    def tick(self, now: int) -> list[tuple[str, str]]:
        fenced = []
        for group in self.groups.values():
            for member in list(group.members.values()):
                if member.session_deadline_ms is not None and member.session_deadline_ms <= now:
                    self.remove_member(group, member, fenced=True)
                    fenced.append((group.group_id, member.member_id))
        return fenced

    # -- configs, admin ----------------------------------------------------------------------------

    def session_timeout_ms(self, group_id: str) -> int:
        return self.group_configs.get(group_id, {}).get("share.session.timeout.ms", self.settings.session_timeout_ms)

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self.group_configs.get(group_id, {}).get(
            "share.heartbeat.interval.ms", self.settings.heartbeat_interval_ms
        )

    def state(self, group_id: str) -> ModernGroupState:
        group = self.groups.get(group_id)
        if group is None:
            return ModernGroupState.DEAD
        return ModernGroupState.STABLE if group.members else ModernGroupState.EMPTY

    def delete(self, group_id: str) -> ErrorCode:
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.GROUP_ID_NOT_FOUND
        if group.members:
            return ErrorCode.NON_EMPTY_GROUP
        del self.groups[group_id]  # its configs stay: they are the id's, as Kafka keeps them
        self._dirty.add((group_id, None))
        return ErrorCode.NONE

    # -- records in __consumer_offsets ----------------------------------------------------------

    def topic_id(self, name: str) -> uuid.UUID | None:
        """The id of the topic named `name` now (None: no such topic)."""
        return self._topic_id(name)

    def _topic_id(self, name: str) -> uuid.UUID | None:
        topic = self._topics.get(name)
        return topic.topic_id if topic is not None else None

    def _topic_name(self, topic_id: uuid.UUID) -> str | None:
        topic = self._topics.by_id(topic_id)
        return topic.name if topic is not None else None

    @property
    def has_changes(self) -> bool:
        """Whether a call changed something `take_records` would write."""
        return bool(self._dirty)

    def take_records(self) -> list[ShareGroupRecord]:
        """The records to write since the last call: the keys that changed, tombstones for those gone
        (a deleted group's own keys and every key of its members)."""
        records: list[ShareGroupRecord] = []
        for gid, mid in sorted(self._dirty, key=lambda k: (k[0], k[1] is not None, k[1] or "")):
            group = self.groups.get(gid)
            if group is None and mid is None:  # deleted: every key of the group goes
                gone = sorted(
                    (k for k in self._written if k[1] == gid and k[0] is not ShareRecordKind.STATE_PARTITION_METADATA),
                    key=lambda k: (k[2] is None, k[2] or "", k[0]),
                )
                for key in gone:
                    del self._written[key]
                    records.append(ShareGroupRecord(key[0], gid, key[2], None))
                continue
            values = share_records.current_values(group, mid, self._topic_id) if group is not None else {}
            kinds = (
                MEMBER_KINDS
                if mid is not None
                else (ShareRecordKind.GROUP_EPOCH, ShareRecordKind.TARGET_ASSIGNMENT_EPOCH)
            )
            changes = record_changes(self._written, [(kind, gid, mid) for kind in kinds], values)
            records.extend(ShareGroupRecord(kind, gid, mid, value) for (kind, _, _), value in changes)
        self._dirty.clear()
        return in_kafka_order(records)

    def load(self, records: Iterable[ShareGroupRecord], now: int) -> None:
        """The share groups `__consumer_offsets` kept: group, assignment and member epochs as they were;
        every member's session starts again at `now` (a member that does not come back is fenced)."""
        self.groups = share_records.restore(records, self._topic_name, SHARE_ASSIGNOR)
        for group in self.groups.values():
            stored_hash = group.metadata_hash
            self._refresh_metadata(group)
            for member in group.members.values():
                member.take_topic_ids(group.subscription_metadata)
                member.session_deadline_ms = now + self.session_timeout_ms(group.group_id)
            self._written.update(share_records.current_values(group, None, self._topic_id))
            for mid in group.members:
                self._written.update(share_records.current_values(group, mid, self._topic_id))
            if group.members and group.metadata_hash != stored_hash:
                # Kafka compares the hash it loaded with the topics' at the next heartbeat: a new epoch
                group.group_epoch += 1
                self._dirty.add((group.group_id, None))
