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
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

import attrs

from ...errors import ErrorCode, KafkaError
from ...topics import Topic
from .assignor import MemberSpec, assign
from .records import (
    GROUP_KINDS,
    STATE_CODES,
    STATES_BY_CODE,
    AssignmentEpoch,
    CurrentAssignment,
    GroupEpoch,
    MemberMetadata,
    StreamsGroupRecord,
    StreamsRecordKey,
    StreamsRecordKind,
    StreamsRecordValue,
    TargetTasks,
    changes,
)
from .tasks import EMPTY, MemberState, Owners, TasksTuple, reconcile
from .topology import (
    ConfiguredTopology,
    Status,
    StreamsStatus,
    TopicInfo,
    Topology,
    configure,
    invalid_topology,
    task_ids,
)

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


class TopicLookup(Protocol):
    def get(self, name: str) -> Topic | None: ...


class ClassicGroupIds(Protocol):
    """The classic coordinator's group ids (and the share groups' it answers for): one namespace."""

    def is_classic_group(self, group_id: str) -> bool: ...

    def is_empty_classic_group(self, group_id: str) -> bool: ...

    def delete(self, group_id: str) -> ErrorCode: ...


class NoOtherGroups:
    def is_classic_group(self, group_id: str) -> bool:
        return False

    def is_empty_classic_group(self, group_id: str) -> bool:
        return False

    def delete(self, group_id: str) -> ErrorCode:
        return ErrorCode.GROUP_ID_NOT_FOUND


@attrs.frozen
class StreamsGroupSettings:
    """Kafka's `group.streams.*` broker configs (4.2 defaults)."""

    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 5_000
    num_standby_replicas: int = 0
    max_standby_replicas: int = 2
    max_size: int = 2**31 - 1
    acceptable_recovery_lag: int = 10_000
    task_offset_interval_ms: int = 60_000


class StreamsGroupState(enum.Enum):
    EMPTY = "Empty"
    NOT_READY = "NotReady"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


@attrs.frozen
class Endpoint:
    host: str
    port: int


@attrs.frozen
class StreamsHeartbeat:
    """A StreamsGroupHeartbeat request; None means "unchanged since the last heartbeat", as Kafka's."""

    group_id: str
    member_id: str
    member_epoch: int
    endpoint_information_epoch: int = 0
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    topology: Topology | None = None
    owned: TasksTuple | None = None
    process_id: str | None = None
    user_endpoint: Endpoint | None = None
    client_tags: tuple[tuple[str, str], ...] | None = None
    shutdown_application: bool = False
    client_id: str = ""
    client_host: str = ""


@attrs.frozen
class EndpointPartitions:
    endpoint: Endpoint
    active: Mapping[str, tuple[int, ...]]  # topic -> partitions
    standby: Mapping[str, tuple[int, ...]]


@attrs.frozen
class StreamsAnswer:
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    member_id: str = ""
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    acceptable_recovery_lag: int = 0
    task_offset_interval_ms: int = 0
    statuses: tuple[Status, ...] = ()
    assignment: TasksTuple | None = None
    endpoint_information_epoch: int = 0
    partitions_by_endpoint: tuple[EndpointPartitions, ...] | None = None
    to_create: tuple[TopicInfo, ...] = ()  # internal topics the broker creates before answering


@attrs.define
class StreamsMember:
    member_id: str
    process_id: str = ""
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = -1
    topology_epoch: int = 0
    user_endpoint: Endpoint | None = None
    client_tags: tuple[tuple[str, str], ...] = ()
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    assigned: TasksTuple = EMPTY
    pending_revocation: TasksTuple = EMPTY
    session_deadline_ms: int | None = None
    rebalance_deadline_ms: int | None = None


@attrs.define
class StreamsGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    topology: Topology | None = None
    configured: ConfiguredTopology | None = None
    partition_counts: dict[str, int | None] = attrs.field(factory=dict)  # what `configured` was computed from
    members: dict[str, StreamsMember] = attrs.field(factory=dict)
    target: dict[str, TasksTuple] = attrs.field(factory=dict)
    endpoint_information_epoch: int = 0
    shutdown_requested: bool = False
    # who holds each task now (assigned or pending revocation): member ids
    active_owner: dict[tuple[str, int], str] = attrs.field(factory=dict)
    standby_owners: dict[tuple[str, int], set[str]] = attrs.field(factory=dict)
    warmup_owners: dict[tuple[str, int], set[str]] = attrs.field(factory=dict)

    @property
    def state(self) -> StreamsGroupState:
        if not self.members:
            return StreamsGroupState.EMPTY
        if self.configured is None or not self.configured.ready:
            return StreamsGroupState.NOT_READY
        if self.group_epoch != self.assignment_epoch:
            return StreamsGroupState.ASSIGNING
        for m in self.members.values():
            if m.member_epoch != self.assignment_epoch or m.state is not MemberState.STABLE:
                return StreamsGroupState.RECONCILING
        return StreamsGroupState.STABLE

    def owners(self) -> Owners:
        def active(sid: str, p: int) -> str | None:
            owner = self.active_owner.get((sid, p))
            return None if owner is None else self.members[owner].process_id

        def processes(table: dict[tuple[str, int], set[str]]) -> Callable[[str, int], frozenset[str]]:
            return lambda sid, p: frozenset(self.members[m].process_id for m in table.get((sid, p), ()))

        return Owners(active, processes(self.standby_owners), processes(self.warmup_owners))

    def release(self, member: StreamsMember) -> None:
        for tasks in (member.assigned, member.pending_revocation):
            for role, sid, p in tasks.roles():
                if role == "active":
                    if self.active_owner.get((sid, p)) == member.member_id:
                        del self.active_owner[(sid, p)]
                else:
                    table = self.standby_owners if role == "standby" else self.warmup_owners
                    holders = table.get((sid, p))
                    if holders is not None:
                        holders.discard(member.member_id)
                        if not holders:
                            del table[(sid, p)]

    def claim(self, member: StreamsMember) -> None:
        for tasks in (member.assigned, member.pending_revocation):
            for role, sid, p in tasks.roles():
                if role == "active":
                    self.active_owner[(sid, p)] = member.member_id
                else:
                    table = self.standby_owners if role == "standby" else self.warmup_owners
                    table.setdefault((sid, p), set()).add(member.member_id)


class StreamsGroupCoordinator:
    def __init__(
        self,
        settings: StreamsGroupSettings,
        topics: TopicLookup,
        classic: ClassicGroupIds | None = None,
        is_consumer_group: Callable[[str], bool] = lambda group_id: False,
    ) -> None:
        """`classic` and `is_consumer_group`: the ids other kinds of group hold (one namespace; an empty
        classic group gives way to a streams group, as in Kafka)."""
        self.settings = settings
        self._topics = topics
        self._classic = classic or NoOtherGroups()
        self._is_consumer_group = is_consumer_group
        self.groups: dict[str, StreamsGroup] = {}
        # What `__consumer_offsets` holds for each key, and the (group, member or None) keys a call changed.
        self._written: dict[StreamsRecordKey, StreamsRecordValue] = {}
        self._dirty: set[tuple[str, str | None]] = set()

    # -- StreamsGroupHeartbeat -------------------------------------------------------------------

    def heartbeat(self, request: StreamsHeartbeat, now: int) -> StreamsAnswer:
        try:
            self._validate(request)
            if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                return self._leave(request)
            return self._heartbeat(request, now)
        except KafkaError as error:
            return StreamsAnswer(error.code, error.message, member_id=request.member_id)

    def _validate(self, request: StreamsHeartbeat) -> None:
        def invalid(message: str) -> KafkaError:
            return KafkaError(ErrorCode.INVALID_REQUEST, message)

        if not request.group_id.strip():
            raise KafkaError(ErrorCode.INVALID_GROUP_ID, "GroupId can't be empty.")
        if not request.member_id.strip():
            raise invalid("MemberId can't be empty.")
        if request.instance_id is not None:
            raise KafkaError(ErrorCode.UNSUPPORTED_VERSION, "Static membership is not yet supported.")
        if request.member_epoch == 0:
            if request.rebalance_timeout_ms == -1:
                raise invalid("RebalanceTimeoutMs must be provided when joining.")
            if request.topology is None:
                raise invalid("Topology must be non-null when joining.")
            if request.process_id is None:
                raise invalid("ProcessId must be provided when joining.")
            if request.owned is None:
                raise invalid("ActiveTasks, StandbyTasks and WarmupTasks must be empty when joining.")
            if not request.owned.is_empty():
                raise invalid("ActiveTasks, StandbyTasks and WarmupTasks must be empty when (re-)joining.")
            problem = invalid_topology(request.topology)
            if problem is not None:
                raise KafkaError(ErrorCode.STREAMS_INVALID_TOPOLOGY, problem)
        elif request.member_epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            raise invalid(f"MemberEpoch is {request.member_epoch}, but must be greater than or equal to -2.")
        elif request.topology is not None and request.member_epoch > 0:
            raise invalid("Topology can only be provided when (re-)joining.")

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
            _check_epoch(member, request)
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
        bump = self._update_member(member, request) or bump
        if member.topology_epoch != (group.topology.epoch if group.topology else 0):
            statuses.append(
                Status(
                    StreamsStatus.STALE_TOPOLOGY,
                    f"The member's topology epoch {member.topology_epoch} is behind the group's topology epoch "
                    f"{group.topology.epoch if group.topology else 0}.",
                )
            )
        group.members[member.member_id] = member
        if self._refresh_configuration(group):
            bump = True
        if bump:
            group.group_epoch += 1
        if request.shutdown_application:
            group.shutdown_requested = True
        self._update_target(group)
        before = member.assigned
        self._reconcile(group, member, request.owned, now)
        member.session_deadline_ms = now + self.settings.session_timeout_ms
        self._dirty.add((group.group_id, None))
        self._dirty.update((group.group_id, m) for m in group.members)  # a new target moves every member's

        configured = group.configured
        to_create: tuple[TopicInfo, ...] = ()
        if configured is not None and configured.problem is not None:
            statuses.append(configured.problem)
            to_create = configured.to_create
        if group.shutdown_requested:
            statuses.append(
                Status(StreamsStatus.SHUTDOWN_APPLICATION, "The application has been requested to shutdown.")
            )
        endpoints = None
        if request.endpoint_information_epoch != group.endpoint_information_epoch:
            endpoints = self._partitions_by_endpoint(group)
        return StreamsAnswer(
            member_id=member.member_id,
            member_epoch=member.member_epoch,
            heartbeat_interval_ms=self.settings.heartbeat_interval_ms,
            acceptable_recovery_lag=self.settings.acceptable_recovery_lag,
            task_offset_interval_ms=self.settings.task_offset_interval_ms,
            statuses=tuple(statuses),
            # as Kafka: the tasks when they changed, on join, and to a full request (a member that
            # lost track of its state sends every field)
            assignment=member.assigned if joining or _is_full(request) or member.assigned != before else None,
            endpoint_information_epoch=group.endpoint_information_epoch,
            partitions_by_endpoint=endpoints,
            to_create=to_create,
        )

    @staticmethod
    def _update_member(member: StreamsMember, request: StreamsHeartbeat) -> bool:
        """Take what the request changed; True if it changes what the assignor sees."""
        changed = False
        if request.process_id is not None and request.process_id != member.process_id:
            member.process_id = request.process_id
            changed = True
        if request.rack_id is not None and request.rack_id != member.rack_id:
            member.rack_id = request.rack_id
            changed = True
        if request.client_tags is not None and request.client_tags != member.client_tags:
            member.client_tags = request.client_tags
            changed = True
        if request.topology is not None and request.topology.epoch != member.topology_epoch:
            member.topology_epoch = request.topology.epoch
            changed = True
        if request.user_endpoint is not None:
            member.user_endpoint = request.user_endpoint
        if request.rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = request.rebalance_timeout_ms
        member.client_id = request.client_id
        member.client_host = request.client_host
        return changed

    def _refresh_configuration(self, group: StreamsGroup) -> bool:
        """Configure the topology again if it or its topics changed; True if the configuration changed."""
        if group.topology is None:
            return False
        counts = {}
        for name in group.topology.required_topics():
            topic = self._topics.get(name)
            counts[name] = None if topic is None else topic.partition_count
        if group.configured is not None and counts == group.partition_counts:
            return False
        group.partition_counts = counts
        configured = configure(group.topology, counts.get)
        changed = group.configured != configured
        group.configured = configured
        return changed

    def _update_target(self, group: StreamsGroup) -> None:
        if group.assignment_epoch == group.group_epoch:
            return
        configured = group.configured
        if configured is None or not configured.ready or configured.task_counts is None:
            group.target = dict.fromkeys(group.members, EMPTY)
        else:
            specs = {m: MemberSpec(member.process_id, member.assigned) for m, member in group.members.items()}
            standbys = min(self.settings.num_standby_replicas, self.settings.max_standby_replicas)
            group.target = assign(specs, task_ids(configured.task_counts), standbys)
        group.assignment_epoch = group.group_epoch
        group.endpoint_information_epoch += 1

    def _reconcile(self, group: StreamsGroup, member: StreamsMember, owned: TasksTuple | None, now: int) -> bool:
        target = group.target.get(member.member_id, EMPTY)
        group.release(member)
        result = reconcile(
            member.state,
            member.member_epoch,
            member.process_id,
            member.assigned,
            member.pending_revocation,
            group.assignment_epoch,
            target,
            owned,
            group.owners(),
        )
        changed = False
        if result is not None:
            changed = result.assigned != member.assigned or result.pending_revocation != member.pending_revocation
            if result.member_epoch != member.member_epoch:
                member.previous_member_epoch = member.member_epoch
            member.state = result.state
            member.member_epoch = result.member_epoch
            member.assigned = result.assigned
            member.pending_revocation = result.pending_revocation
        group.claim(member)
        if member.state is MemberState.UNREVOKED_TASKS:
            if member.rebalance_deadline_ms is None:
                member.rebalance_deadline_ms = now + max(member.rebalance_timeout_ms, 0)
        else:
            member.rebalance_deadline_ms = None
        return changed

    def _partitions_by_endpoint(self, group: StreamsGroup) -> tuple[EndpointPartitions, ...] | None:
        if group.topology is None or not any(m.user_endpoint for m in group.members.values()):
            return None
        sources = {s.subtopology_id: s.all_source_topics() for s in group.topology.subtopologies}
        answer = []
        for m in sorted(group.members.values(), key=lambda m: m.member_id):
            if m.user_endpoint is None:
                continue
            answer.append(
                EndpointPartitions(
                    m.user_endpoint,
                    _topic_partitions(m.assigned.active, sources),
                    _topic_partitions(m.assigned.standby, sources),
                )
            )
        return tuple(answer)

    def _leave(self, request: StreamsHeartbeat) -> StreamsAnswer:
        group = self._group(request.group_id, create=False)
        member = group.members.get(request.member_id)
        if member is None:
            raise KafkaError(
                ErrorCode.UNKNOWN_MEMBER_ID, f"Member {request.member_id} is not a member of group {group.group_id}."
            )
        self.remove_member(group, member)
        return StreamsAnswer(member_id=request.member_id, member_epoch=request.member_epoch)

    def remove_member(self, group: StreamsGroup, member: StreamsMember) -> None:
        self._dirty.update({(group.group_id, None), (group.group_id, member.member_id)})
        group.release(member)
        del group.members[member.member_id]
        group.target.pop(member.member_id, None)
        group.group_epoch += 1
        if not group.members:
            group.shutdown_requested = False

    # -- time ----------------------------------------------------------------------------------

    def next_deadline(self) -> int | None:
        deadlines = [
            d
            for g in self.groups.values()
            for m in g.members.values()
            for d in (m.session_deadline_ms, m.rebalance_deadline_ms)
            if d is not None
        ]
        return min(deadlines, default=None)

    def tick(self, now: int) -> list[tuple[str, str]]:
        """Fence the members whose session expired or who did not revoke in time; (group, member) each."""
        fenced = []
        for group in self.groups.values():
            for member in list(group.members.values()):
                expired = member.session_deadline_ms is not None and member.session_deadline_ms <= now
                late = member.rebalance_deadline_ms is not None and member.rebalance_deadline_ms <= now
                if expired or late:
                    self.remove_member(group, member)
                    fenced.append((group.group_id, member.member_id))
        return fenced

    # -- the other APIs ------------------------------------------------------------------------

    def validate_offset_commit(self, group_id: str, member_id: str, member_epoch: int, version: int) -> ErrorCode:
        """Kafka's StreamsGroup.validateOffsetCommit (`group_id` must be a streams group's)."""
        group = self.groups[group_id]
        if member_epoch < 0 and not member_id and not group.members:
            return ErrorCode.NONE
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if version < 9:
            return ErrorCode.UNSUPPORTED_VERSION
        if member_epoch != member.member_epoch:
            return ErrorCode.STALE_MEMBER_EPOCH
        return ErrorCode.NONE

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode:
        group = self.groups[group_id]
        if member_epoch < 0 and member_id is None:
            return ErrorCode.NONE
        member = group.members.get(member_id or "")
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member_epoch != member.member_epoch:
            return ErrorCode.STALE_MEMBER_EPOCH
        return ErrorCode.NONE

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
            wanted[(gid, mid)] = _values(group, mid) if group is not None else {}
        return changes(self._written, dirty, wanted)

    def load(self, records: Iterable[StreamsGroupRecord], now: int) -> None:
        """Rebuild the groups from their records (the last value of each key, in log order)."""
        last: dict[StreamsRecordKey, StreamsRecordValue] = {}
        for record in records:
            if record.value is None:
                last.pop(record.key, None)
            else:
                last[record.key] = record.value
        self._written = dict(last)
        for (_kind, gid, mid), value in sorted(last.items(), key=lambda kv: (kv[0][0] not in GROUP_KINDS, kv[0][0])):
            group = self.groups.setdefault(gid, StreamsGroup(gid))
            if isinstance(value, GroupEpoch):
                group.group_epoch = value.epoch
            elif isinstance(value, AssignmentEpoch):
                group.assignment_epoch = value.epoch
            elif isinstance(value, Topology):
                group.topology = value
            elif mid is not None:
                member = group.members.setdefault(mid, StreamsMember(mid))
                member.session_deadline_ms = now + self.settings.session_timeout_ms
                if isinstance(value, MemberMetadata):
                    member.instance_id, member.rack_id = value.instance_id, value.rack_id
                    member.client_id, member.client_host = value.client_id, value.client_host
                    member.rebalance_timeout_ms, member.topology_epoch = (
                        value.rebalance_timeout_ms,
                        value.topology_epoch,
                    )
                    member.process_id, member.client_tags = value.process_id, value.client_tags
                    member.user_endpoint = Endpoint(*value.user_endpoint) if value.user_endpoint else None
                elif isinstance(value, TargetTasks):
                    group.target[mid] = value.tasks
                elif isinstance(value, CurrentAssignment):
                    member.member_epoch, member.previous_member_epoch = value.member_epoch, value.previous_member_epoch
                    member.state = STATES_BY_CODE.get(value.state, MemberState.STABLE)
                    member.assigned, member.pending_revocation = value.assigned, value.pending_revocation
        for group in self.groups.values():
            for member in group.members.values():
                group.claim(member)
            self._refresh_configuration(group)

    def has_members(self, group_id: str) -> bool:
        group = self.groups.get(group_id)
        return group is not None and bool(group.members)

    def state(self, group_id: str) -> StreamsGroupState:
        group = self.groups.get(group_id)
        return StreamsGroupState.DEAD if group is None else group.state


def _values(group: StreamsGroup, member_id: str | None) -> dict[StreamsRecordKey, StreamsRecordValue]:
    """The values the group's keys (or one member's) should hold now."""
    gid = group.group_id
    if member_id is None:
        values: dict[StreamsRecordKey, StreamsRecordValue] = {
            (StreamsRecordKind.METADATA, gid, None): GroupEpoch(group.group_epoch),
            (StreamsRecordKind.TARGET_ASSIGNMENT_EPOCH, gid, None): AssignmentEpoch(group.assignment_epoch),
        }
        if group.topology is not None:
            values[(StreamsRecordKind.TOPOLOGY, gid, None)] = group.topology
        return values
    member = group.members.get(member_id)
    if member is None:
        return {}
    endpoint = member.user_endpoint
    values = {
        (StreamsRecordKind.MEMBER_METADATA, gid, member_id): MemberMetadata(
            member.instance_id,
            member.rack_id,
            member.client_id,
            member.client_host,
            member.rebalance_timeout_ms,
            member.topology_epoch,
            member.process_id,
            (endpoint.host, endpoint.port) if endpoint is not None else None,
            member.client_tags,
        ),
        (StreamsRecordKind.CURRENT_ASSIGNMENT, gid, member_id): CurrentAssignment(
            member.member_epoch,
            member.previous_member_epoch,
            STATE_CODES[member.state],
            member.assigned,
            member.pending_revocation,
        ),
    }
    if member_id in group.target:
        values[(StreamsRecordKind.TARGET_ASSIGNMENT_MEMBER, gid, member_id)] = TargetTasks(group.target[member_id])
    return values


def _check_epoch(member: StreamsMember, request: StreamsHeartbeat) -> None:
    """Kafka's throwIfStreamsGroupMemberEpochIsInvalid."""
    if request.member_epoch > member.member_epoch:
        raise KafkaError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The streams group member has a greater member epoch ({request.member_epoch}) than the one known by "
            f"the group coordinator ({member.member_epoch}). The member must abandon all its tasks and rejoin.",
        )
    if request.member_epoch < member.member_epoch:
        if request.member_epoch != member.previous_member_epoch or (
            request.owned is not None and not _is_subset(request.owned, member.assigned)
        ):
            raise KafkaError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The streams group member has a smaller member epoch ({request.member_epoch}) than the one known "
                f"by the group coordinator ({member.member_epoch}). The member must abandon all its tasks and rejoin.",
            )


def _is_full(request: StreamsHeartbeat) -> bool:
    return (
        request.rebalance_timeout_ms != -1
        and request.owned is not None
        and request.client_tags is not None
        and request.process_id is not None
    )


def _is_subset(owned: TasksTuple, assigned: TasksTuple) -> bool:
    return all(
        ps <= mine.get(sid, frozenset())
        for theirs, mine in (
            (owned.active, assigned.active),
            (owned.standby, assigned.standby),
            (owned.warmup, assigned.warmup),
        )
        for sid, ps in theirs.items()
    )


def _topic_partitions(
    tasks: Mapping[str, frozenset[int]], sources: Mapping[str, Iterable[str]]
) -> dict[str, tuple[int, ...]]:
    by_topic: dict[str, set[int]] = {}
    for sid, ps in tasks.items():
        for topic in sources.get(sid, ()):
            by_topic.setdefault(topic, set()).update(ps)
    return {t: tuple(sorted(ps)) for t, ps in sorted(by_topic.items())}
