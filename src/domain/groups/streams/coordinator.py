"""The streams group coordinator (KIP-1071): Kafka's GroupMetadataManager.streamsGroupHeartbeat, sans I/O.

A Kafka Streams member heartbeats (StreamsGroupHeartbeat) with its topology on join, its process id
and the tasks it owns; the coordinator keeps the group's topology (the first member's; a member with
another topology epoch is told STALE_TOPOLOGY), configures it against the topics that exist
(`topology.configure`: internal topic partition counts, the internal topics the broker must create,
NOT_READY while a problem remains), computes the target assignment with the sticky task assignor
whenever the group epoch moves past the assignment epoch (a member joins, leaves or changes process,
the topology or its topics change), and moves each member towards its target with KIP-848's
epochs (`tasks.reconcile`: revocations first, a task handed over only once released).

Time comes in as `now`; `tick` fences members whose session or revocation deadline passed. The
answers carry the statuses, the assignment and the internal topics for the broker to create.

Beside it, by concern (issue 40): what a heartbeat does to its member (`member_updates.py`), where
members serve from (`endpoints.py`), the KIP-1331 topology descriptions it asks for and keeps
(`topology_descriptions.py`), and what it asks of the rest of the broker (`lookups.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from ...configs import ConfigEntry
from ...errors import ErrorCode, KafkaError
from ..metadata_hash import MetadataHasher
from ..offset_validation import checked_member
from .assignor import MemberSpec, assign
from .configs import StreamsGroupConfigs
from .description import DescriptionStatus, TopologyDescription
from .endpoints import partitions_by_endpoint
from .heartbeat_checks import LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH, check_epoch, is_full, validate
from .lookups import ClassicGroupIds, NoOtherGroups, TopicLookup
from .member_updates import step_towards, take_request
from .model import (
    StreamsAnswer,
    StreamsGroup,
    StreamsGroupSettings,
    StreamsGroupState,
    StreamsHeartbeat,
    StreamsMember,
)
from .records import (
    StreamsGroupRecord,
    StreamsRecordKey,
    StreamsRecordValue,
    changes,
    current_values,
    restore,
)
from .tasks import EMPTY, MemberState
from .topology import (
    Status,
    StreamsStatus,
    TopicInfo,
    configure,
    task_ids,
)
from .topology_descriptions import asks_for_description, stored_description, update_description


class StreamsGroupCoordinator:
    def __init__(
        self,
        settings: StreamsGroupSettings,
        topics: TopicLookup,
        classic: ClassicGroupIds | None = None,
        is_consumer_group: Callable[[str], bool] = lambda group_id: False,
        hasher: MetadataHasher | None = None,
    ) -> None:
        """`classic` and `is_consumer_group`: the ids other kinds of group hold (one namespace; an empty
        classic group gives way to a streams group, as in Kafka); `hasher`: the groups' metadata hashes
        (KIP-1101; without one they are 0)."""
        self.settings = settings
        self.configs = StreamsGroupConfigs(settings)  # the GROUP config resource's `streams.*` overrides
        self.describes_topologies = False  # KIP-1331: a topology description plugin is configured
        self._topics = topics
        self._hasher = hasher or MetadataHasher()
        self._classic = classic or NoOtherGroups()
        self._is_consumer_group = is_consumer_group
        self.groups: dict[str, StreamsGroup] = {}
        # What `__consumer_offsets` holds for each key, and the (group, member or None) keys a call changed.
        self._written: dict[StreamsRecordKey, StreamsRecordValue] = {}
        self._dirty: set[tuple[str, str | None]] = set()

    # -- StreamsGroupHeartbeat -------------------------------------------------------------------

    def heartbeat(self, request: StreamsHeartbeat, now: int) -> StreamsAnswer:
        try:
            validate(request)
            if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                return self._leave(request)
            return self._heartbeat(request, now)
        except KafkaError as error:
            return StreamsAnswer(error.code, error.message, member_id=request.member_id)

    def _group(self, group_id: str, create: bool) -> StreamsGroup:
        group = self.groups.get(group_id)
        if group is not None:
            return group
        if self._classic.is_classic_group(group_id) and create and self._classic.is_empty_classic_group(group_id):
            self._classic.delete(group_id)  # an empty classic group gives way, as in Kafka
        elif self._classic.is_classic_group(group_id) or self._is_consumer_group(group_id):
            raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a streams group.")
        if not create:
            raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Streams group {group_id} not found.")
        group = self.groups[group_id] = StreamsGroup(group_id)
        return group

    def _heartbeat(self, request: StreamsHeartbeat, now: int) -> StreamsAnswer:
        joining = request.member_epoch == 0
        group = self._group(request.group_id, create=joining)
        member = group.members.get(request.member_id)
        if member is None:
            if not joining:
                raise KafkaError(
                    ErrorCode.UNKNOWN_MEMBER_ID,
                    f"Member {request.member_id} is not a member of group {group.group_id}.",
                )
            if len(group.members) >= self.settings.max_size:
                raise KafkaError(
                    ErrorCode.GROUP_MAX_SIZE_REACHED,
                    f"The streams group has reached its maximum capacity of {self.settings.max_size} members.",
                )
            member = StreamsMember(request.member_id)
            bump = True
        else:
            check_epoch(member, request)
            bump = False
            if joining:  # a member coming back with epoch 0 gives up what it had
                group.release(member)
                member.assigned = member.pending_revocation = EMPTY
                member.state = MemberState.STABLE
                member.member_epoch = 0

        statuses: list[Status] = []
        if joining and request.topology is not None:
            if group.topology is None or not group.members or (set(group.members) == {member.member_id}):
                if group.topology != request.topology:
                    group.topology = request.topology
                    group.configured = None
                    bump = True
        bump = take_request(member, request) or bump
        if member.topology_epoch != (group.topology.epoch if group.topology else 0):
            statuses.append(
                Status(
                    StreamsStatus.STALE_TOPOLOGY,
                    f"The member's topology epoch {member.topology_epoch} is behind the group's topology epoch "
                    f"{group.topology.epoch if group.topology else 0}.",
                )
            )
        was_empty = not group.members
        group.members[member.member_id] = member
        if self._refresh_configuration(group):
            bump = True
        validated = group.topology.epoch if group.topology and group.configured and group.configured.ready else -1
        if validated != group.validated_topology_epoch:  # Kafka: a topology validated (or no longer) is a new epoch
            group.validated_topology_epoch = validated
            bump = True
        configs = self._assignment_configs(group.group_id)
        if group.last_assignment_configs is None:
            group.last_assignment_configs = configs
        elif group.last_assignment_configs != configs:  # Kafka: a changed config is a new assignment
            bump = True
        if bump:  # Kafka 4.2: a new group's first epoch is 2, so that 1 is left for a delayed assignment
            group.group_epoch = 2 if group.group_epoch == 0 else group.group_epoch + 1
        delay = self.configs.initial_rebalance_delay_ms(group.group_id)
        if was_empty and delay > 0 and group.initial_delay_deadline_ms is None:
            # Kafka's initial rebalance delay (KAFKA-19829; KAFKA-19926: whenever the group was empty)
            group.initial_delay_deadline_ms = now + delay
        if request.task_offsets is not None:
            member.task_offsets = dict(request.task_offsets)
        if request.task_end_offsets is not None:
            member.task_end_offsets = dict(request.task_end_offsets)
        if request.shutdown_application:
            group.request_shutdown(member.member_id)
        if group.group_epoch > group.assignment_epoch and group.initial_delay_deadline_ms is not None:
            # while the delay runs a member is given nothing, at epoch 1 in a new group
            target_epoch, target = max(1, group.assignment_epoch), EMPTY
            statuses.append(
                Status(
                    StreamsStatus.ASSIGNMENT_DELAYED,
                    "Assignment delayed due to the configured initial rebalance delay.",
                )
            )
        else:
            self._update_target(group)
            target_epoch, target = group.assignment_epoch, group.target.get(member.member_id, EMPTY)
        before = member.assigned
        step_towards(group, member, request.owned, now, target_epoch, target)
        sends_tasks = joining or member.assigned != before
        if sends_tasks and member.user_endpoint is not None:
            group.endpoint_information_epoch += 1  # Kafka 4.2: a member with an endpoint got new tasks
        member.session_deadline_ms = now + self.configs.session_timeout_ms(group.group_id)
        self._dirty.add((group.group_id, None))
        self._dirty.update((group.group_id, m) for m in group.members)  # a new target moves every member's

        configured = group.configured
        to_create: tuple[TopicInfo, ...] = ()
        if configured is not None and configured.problem is not None:
            statuses.append(configured.problem)
            to_create = configured.to_create
        if group.shutdown_request_member_id is not None:
            statuses.append(
                Status(
                    StreamsStatus.SHUTDOWN_APPLICATION,
                    f"Streams group member {group.shutdown_request_member_id} encountered a fatal error and requested"
                    " a shutdown for the entire application.",
                )
            )
        endpoints = None
        if request.endpoint_information_epoch != group.endpoint_information_epoch:
            endpoints = partitions_by_endpoint(group)
        return StreamsAnswer(
            member_id=member.member_id,
            member_epoch=member.member_epoch,
            heartbeat_interval_ms=self.configs.heartbeat_interval_ms(group.group_id),
            acceptable_recovery_lag=self.settings.acceptable_recovery_lag,
            task_offset_interval_ms=self.settings.task_offset_interval_ms,
            statuses=tuple(statuses),
            # as Kafka: the tasks when they changed, on join, and to a full request (a member that
            # lost track of its state sends every field)
            assignment=member.assigned if sends_tasks or is_full(request) else None,
            endpoint_information_epoch=group.endpoint_information_epoch,
            partitions_by_endpoint=endpoints,
            to_create=to_create,
            topology_description_required=request.asks_description
            and self.describes_topologies
            and asks_for_description(group, statuses, now),
        )

    def _refresh_configuration(self, group: StreamsGroup) -> bool:
        """Configure the topology again if it or its topics changed; True if the configuration or the
        topics' metadata hash changed."""
        if group.topology is None:
            return False
        counts: dict[str, int | None] = {}
        metadata: dict[str, tuple[str, int]] = {}
        for name in group.topology.required_topics():
            topic = self._topics.get(name)
            counts[name] = None if topic is None else topic.partition_count
            if topic is not None:
                metadata[name] = (str(topic.topic_id), topic.partition_count)
        rehashed = False  # Kafka: a new metadata hash (a topic recreated, grown) is a new group epoch
        if metadata != group.topic_metadata:  # Kafka's computeMetadataHash over the required topics that exist
            group.topic_metadata = metadata
            new_hash = self._hasher.group_hash(metadata)
            rehashed, group.metadata_hash = new_hash != group.metadata_hash, new_hash
        if group.configured is not None and counts == group.partition_counts:
            return rehashed
        group.partition_counts = counts
        configured = configure(group.topology, counts.get)
        changed = group.configured != configured
        group.configured = configured
        return changed or rehashed

    def _assignment_configs(self, group_id: str) -> tuple[tuple[str, str], ...]:
        """Kafka's streamsGroupAssignmentConfigs: what the target was computed with (LastAssignmentConfigs)."""
        return (("num.standby.replicas", str(self.configs.num_standby_replicas(group_id))),)

    def _update_target(self, group: StreamsGroup) -> None:
        if group.assignment_epoch == group.group_epoch:
            return
        group.last_assignment_configs = self._assignment_configs(group.group_id)
        configured = group.configured
        if configured is None or not configured.ready or configured.task_counts is None or group.topology is None:
            group.target = dict.fromkeys(group.members, EMPTY)
        else:
            # as Kafka's TargetAssignmentBuilder: stickiness from each member's previous target
            specs = {
                m: MemberSpec(member.process_id, group.target.get(m, EMPTY)) for m, member in group.members.items()
            }
            standbys = min(self.configs.num_standby_replicas(group.group_id), self.settings.max_standby_replicas)
            stateful = [s.subtopology_id for s in group.topology.subtopologies if s.state_changelog_topics]
            group.target = assign(specs, task_ids(configured.task_counts), standbys, stateful)
        group.assignment_epoch = group.group_epoch

    def _leave(self, request: StreamsHeartbeat) -> StreamsAnswer:
        group = self._group(request.group_id, create=False)
        member = group.members.get(request.member_id)
        if member is None:
            raise KafkaError(
                ErrorCode.UNKNOWN_MEMBER_ID, f"Member {request.member_id} is not a member of group {group.group_id}."
            )
        if request.shutdown_application:  # a member may ask as it leaves (Kafka's streamsGroupLeave)
            group.request_shutdown(member.member_id)
        self.remove_member(group, member)
        return StreamsAnswer(member_id=request.member_id, member_epoch=request.member_epoch)

    def remove_member(self, group: StreamsGroup, member: StreamsMember) -> None:
        self._dirty.update({(group.group_id, None), (group.group_id, member.member_id)})
        group.release(member)
        del group.members[member.member_id]
        group.target.pop(member.member_id, None)
        group.group_epoch += 1
        if not group.members:
            group.shutdown_request_member_id = None  # as Kafka: cleared when the group empties

    # -- time ----------------------------------------------------------------------------------

    def next_deadline(self) -> int | None:
        deadlines = [
            d
            for g in self.groups.values()
            for m in g.members.values()
            for d in (m.session_deadline_ms, m.rebalance_deadline_ms)
            if d is not None
        ]
        deadlines += [g.initial_delay_deadline_ms for g in self.groups.values() if g.initial_delay_deadline_ms]
        return min(deadlines, default=None)

    def tick(self, now: int) -> list[tuple[str, str]]:
        """Fence the members whose session expired or who did not revoke in time; (group, member) each."""
        fenced = []
        for group in self.groups.values():
            if group.initial_delay_deadline_ms is not None and group.initial_delay_deadline_ms <= now:
                group.initial_delay_deadline_ms = None  # Kafka's computeDelayedTargetAssignment
                if group.members:
                    self._update_target(group)
                self._dirty.add((group.group_id, None))
                self._dirty.update((group.group_id, m) for m in group.members)
            for member in list(group.members.values()):
                expired = member.session_deadline_ms is not None and member.session_deadline_ms <= now
                late = member.rebalance_deadline_ms is not None and member.rebalance_deadline_ms <= now
                if expired or late:
                    self.remove_member(group, member)
                    fenced.append((group.group_id, member.member_id))
        return fenced

    # -- the other APIs ------------------------------------------------------------------------

    def validate_offset_commit(
        self,
        group_id: str,
        member_id: str,
        member_epoch: int,
        version: int,
        transactional: bool = False,
        instance_id: str | None = None,
    ) -> ErrorCode:
        """Kafka's StreamsGroup.validateOffsetCommit (`group_id` must be a streams group's). A
        TxnOffsetCommit (`transactional`: Kafka Streams under exactly_once_v2 commits its offsets in its
        transaction, with its member id and epoch) is not held to OffsetCommit's version, and one that
        names no member (epoch -1) is an admin's."""
        group = self.groups[group_id]
        if member_epoch < 0 and not member_id and not group.members:
            return ErrorCode.NONE
        if transactional and member_epoch == -1 and not member_id and instance_id is None:
            return ErrorCode.NONE
        return checked_member(
            group.members,
            member_id,
            member_epoch,
            version_serves=lambda member: transactional or version >= 9,
        )

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode:
        if member_epoch < 0 and member_id is None:
            return ErrorCode.NONE
        return checked_member(self.groups[group_id].members, member_id or "", member_epoch)

    def delete(self, group_id: str) -> ErrorCode:
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.GROUP_ID_NOT_FOUND
        if group.members:
            return ErrorCode.NON_EMPTY_GROUP
        del self.groups[group_id]
        self._dirty.update((gid, mid) for _, gid, mid in self._written if gid == group_id)
        return ErrorCode.NONE

    # -- `__consumer_offsets` -------------------------------------------------------------------

    def take_records(self) -> list[StreamsGroupRecord]:
        """What the calls since the last take changed, as records to write (tombstones for keys gone)."""
        dirty, self._dirty = self._dirty, set()
        wanted = {}
        for gid, mid in dirty:
            group = self.groups.get(gid)
            wanted[(gid, mid)] = current_values(group, mid) if group is not None else {}
        return changes(self._written, dirty, wanted)

    def load(self, records: Iterable[StreamsGroupRecord], now: int) -> None:
        """Rebuild the groups from their records (the last value of each key, in log order)."""
        self._written, groups = restore(records, now)
        self.groups.update(groups)
        for group in groups.values():
            stored_hash = group.metadata_hash
            self._refresh_configuration(group)
            if group.members and group.metadata_hash != stored_hash:
                # Kafka compares the hash it loaded with the topics' at the next heartbeat: a new epoch
                group.group_epoch += 1
                self._dirty.add((group.group_id, None))
            for member in group.members.values():  # sessions start again, with the group's timeout
                member.session_deadline_ms = now + self.configs.session_timeout_ms(group.group_id)

    # -- the GROUP config resource's `streams.*` keys: `self.configs` (configs.py) ---------------

    def describe_group_configs(self, group_id: str, keys: Iterable[str] | None) -> list[ConfigEntry]:
        return self.configs.describe(group_id, keys)

    def alter_group_configs(
        self, group_id: str, changes: Mapping[str, tuple[int, str | None]], validate_only: bool
    ) -> None:
        self.configs.alter(group_id, changes, validate_only)

    def has_members(self, group_id: str) -> bool:
        group = self.groups.get(group_id)
        return group is not None and bool(group.members)

    def state(self, group_id: str) -> StreamsGroupState:
        group = self.groups.get(group_id)
        return StreamsGroupState.DEAD if group is None else group.state

    # -- KIP-1331: topology descriptions (Kafka 4.4) -------------------------------------------------

    def update_topology_description(
        self, group_id: str, member_id: str, topology_epoch: int, description: Callable[[], TopologyDescription]
    ) -> None:
        """StreamsGroupTopologyDescriptionUpdate, checked as Kafka 4.4's
        validateStreamsGroupTopologyDescriptionUpdate (the group, its member, the topology epoch), then
        `description()` (the request's, converted: it may refuse it) kept for the group at that epoch."""
        group = self.groups.get(group_id)
        if group is None:
            if self._classic.is_classic_group(group_id) or self._is_consumer_group(group_id):
                raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a streams group.")
            raise KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        update_description(group, member_id, topology_epoch, description)

    def topology_description(self, group_id: str) -> tuple[DescriptionStatus, TopologyDescription | None]:
        """What StreamsGroupDescribe v1 returns when asked (topology_descriptions.py)."""
        return stored_description(self.groups.get(group_id))
