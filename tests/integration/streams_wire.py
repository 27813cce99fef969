"""A Kafka Streams member on the wire, for tests without a JVM: StreamsGroupHeartbeat v0 requests as Kafka
Streams 4.2 sends them (join with the topology and process id, then heartbeat with the tasks it runs,
taking the tasks each answer gives at once)."""

from __future__ import annotations

import time

from tests.kafka_python_messages import StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse
from tests.waiting import eventually

from .wire import WireClient

Req = StreamsGroupHeartbeatRequest
Sub = Req.Topology.Subtopology
SESSION_S = 45  # group.streams.session.timeout.ms, Kafka's default
ASSIGNMENT_DELAYED = 5  # StreamsGroupHeartbeatResponse's status


def stateful_topology(source: str = "lines", changelog: str = "app-store-changelog") -> Req.Topology:
    """One stateful subtopology reading `source` (a `count()` straight off the input topic)."""
    stateful = Sub(
        subtopology_id="0",
        source_topics=[source],
        source_topic_regex=[],
        state_changelog_topics=[Sub.TopicInfo(name=changelog, partitions=0, replication_factor=0, topic_configs=[])],
        repartition_sink_topics=[],
        repartition_source_topics=[],
        copartition_groups=[],
    )
    return Req.Topology(epoch=1, subtopologies=[stateful])


def stateless_topology(source: str) -> Req.Topology:
    """One stateless subtopology reading `source` (a `filter` or `mapValues` straight to another topic)."""
    stateless = Sub(
        subtopology_id="0",
        source_topics=[source],
        source_topic_regex=[],
        state_changelog_topics=[],
        repartition_sink_topics=[],
        repartition_source_topics=[],
        copartition_groups=[],
    )
    return Req.Topology(epoch=1, subtopologies=[stateless])


class StreamsMember:
    """One Kafka Streams instance (one stream thread): joins, then heartbeats with the tasks it was given."""

    def __init__(
        self, bootstrap: str, member_id: str, group: str = "app", topology: Req.Topology | None = None
    ) -> None:
        self.client = WireClient(bootstrap)
        self.group = group
        self.topology = topology or stateful_topology()
        self.member_id = member_id
        self.epoch = 0
        self.active: list[Req.TaskIds] = []
        self.standby: list[Req.TaskIds] = []

    def heartbeat(self) -> StreamsGroupHeartbeatResponse:
        joining = self.epoch == 0
        request = Req(
            group_id=self.group,
            member_id=self.member_id,
            member_epoch=self.epoch,
            endpoint_information_epoch=0,
            rebalance_timeout_ms=30_000 if joining else -1,
            topology=self.topology if joining else None,
            process_id=f"process-{self.member_id}" if joining else None,
            active_tasks=self.active,
            standby_tasks=self.standby,
            warmup_tasks=[],
        )
        response = self.client.request(request, StreamsGroupHeartbeatResponse, 0)
        assert response.error_code == 0, response
        self.epoch = response.member_epoch
        if response.active_tasks is not None:  # null: unchanged
            self.active = [
                Req.TaskIds(subtopology_id=t.subtopology_id, partitions=t.partitions) for t in response.active_tasks
            ]
            self.standby = [
                Req.TaskIds(subtopology_id=t.subtopology_id, partitions=t.partitions) for t in response.standby_tasks
            ]
        return response

    def leave(self) -> None:
        request = Req(group_id=self.group, member_id=self.member_id, member_epoch=-1, endpoint_information_epoch=0)
        response = self.client.request(request, StreamsGroupHeartbeatResponse, 0)
        assert response.error_code == 0, response
        self.client.close()


def settle(members: list[StreamsMember], tasks: int | None = None, timeout: float = 30.0) -> None:
    """Heartbeat each member in turn until a whole round changes nothing (revocations done, the tasks
    handed over) and, if given, `tasks` active tasks are running in all. Apache Kafka delays a new
    group's first assignment (`group.streams.initial.rebalance.delay.ms`, ASSIGNMENT_DELAYED): real
    time, in short steps."""
    rounds: list[object] = [None, None]  # the previous round's state, the last answers

    def settled() -> bool:
        answers = [member.heartbeat() for member in members]
        now = [(m.epoch, repr(m.active), repr(m.standby)) for m in members]
        delayed = any(s.status_code == ASSIGNMENT_DELAYED for a in answers for s in a.status or [])
        running = sum(len(t.partitions) for m in members for t in m.active)
        if now == rounds[0] and not delayed and (tasks is None or running == tasks):
            return True
        if now == rounds[0]:
            time.sleep(0.2)  # pacing: nothing moved this round
        rounds[:] = [now, answers]
        return False

    eventually(settled, timeout, what="the streams group to settle", interval=0, state=lambda: rounds)
