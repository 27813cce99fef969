"""A streams group as the coordinator keeps it: its settings (`group.streams.*`), the group with its
topology, epochs, target assignment and who holds each task, its members, and the heartbeat's
request and answer."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping

import attrs

from ...errors import ErrorCode
from .description import TopologyDescription
from .tasks import EMPTY, MemberState, Owners, TasksTuple
from .topology import ConfiguredTopology, Status, TopicInfo, Topology

TaskOffsets = dict[tuple[str, int], int]  # (subtopology id, partition) -> offset


@attrs.frozen
class StreamsGroupSettings:
    """Kafka's `group.streams.*` broker configs (4.2 defaults, but the initial rebalance delay: Kafka's
    is 3000, which the wiring passes; a coordinator built bare in a test assigns at once)."""

    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 5_000
    num_standby_replicas: int = 0
    max_standby_replicas: int = 2
    max_size: int = 2**31 - 1
    min_session_timeout_ms: int = 45_000
    max_session_timeout_ms: int = 60_000
    min_heartbeat_interval_ms: int = 5_000
    max_heartbeat_interval_ms: int = 15_000
    initial_rebalance_delay_ms: int = 0
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
    # the offsets of the member's tasks, and their ends (Kafka 4.4 keeps the last reported; None: unchanged)
    task_offsets: TaskOffsets | None = None
    task_end_offsets: TaskOffsets | None = None
    asks_description: bool = False  # StreamsGroupHeartbeat v1+: the answer can ask for a description push


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
    topology_description_required: bool = (
        False  # KIP-1331: push the description (StreamsGroupTopologyDescriptionUpdate)
    )


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
    task_offsets: TaskOffsets = attrs.field(factory=dict)  # as last reported (Kafka 4.4), not recorded
    task_end_offsets: TaskOffsets = attrs.field(factory=dict)


@attrs.define
class StreamsGroup:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    topology: Topology | None = None
    configured: ConfiguredTopology | None = None
    partition_counts: dict[str, int | None] = attrs.field(factory=dict)  # what `configured` was computed from
    topic_metadata: dict[str, tuple[str, int]] = attrs.field(factory=dict)  # required topics: (id, partitions)
    metadata_hash: int = 0  # KIP-1101: the required topics' hash, written beside the group epoch
    validated_topology_epoch: int = -1  # the topology's epoch when last configured ready, else -1 (Kafka's)
    members: dict[str, StreamsMember] = attrs.field(factory=dict)
    target: dict[str, TasksTuple] = attrs.field(factory=dict)
    endpoint_information_epoch: int = 0
    shutdown_request_member_id: str | None = None  # the first member that asked for ShutdownApplication (not kept)
    # who holds each task now (assigned or pending revocation): member ids
    active_owner: dict[tuple[str, int], str] = attrs.field(factory=dict)
    standby_owners: dict[tuple[str, int], set[str]] = attrs.field(factory=dict)
    warmup_owners: dict[tuple[str, int], set[str]] = attrs.field(factory=dict)
    # the assignment configs the target was computed with (Kafka's LastAssignmentConfigs); None: not known
    last_assignment_configs: tuple[tuple[str, str], ...] | None = None
    initial_delay_deadline_ms: int | None = None  # while the initial rebalance delay runs
    # KIP-1331: the description the members pushed, and the topology epoch it describes (-1: none)
    topology_description: TopologyDescription | None = None
    description_epoch: int = -1
    # Kafka's StreamsGroupTopologyDescriptionBackoff: (topology epoch, pushes asked for, next ask at ms)
    description_asked: tuple[int, int, int] | None = None

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

    def request_shutdown(self, member_id: str) -> None:
        """ShutdownApplication: every member's heartbeats carry the status until the group is empty; the
        first member that asked is the one named (Kafka's setShutdownRequestMemberId)."""
        if self.shutdown_request_member_id is None:
            self.shutdown_request_member_id = member_id

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
