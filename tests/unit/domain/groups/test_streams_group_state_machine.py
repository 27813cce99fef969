"""Hypothesis drives the streams group coordinator (KIP-1071): members of three processes join,
heartbeat (clients that take their new tasks at once or a heartbeat late), leave, lose their session,
and the source topic grows under them; the broker creates the internal topics it is asked for.

Invariants: no task ever has two active owners (assigned or being revoked), by the coordinator's books
and by what the live clients believe they run; no process holds one task in two roles; a member's
tasks only change by giving some up before getting others (no answer adds tasks while taking
away one the member still reports running); the group epoch never goes
back. And once every member heartbeats promptly, every task is active somewhere.
"""

from __future__ import annotations

import uuid
from collections import Counter

import attrs
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from trafka.domain.errors import ErrorCode
from trafka.domain.groups.streams import (
    EMPTY,
    StreamsGroupCoordinator,
    StreamsGroupSettings,
    StreamsHeartbeat,
    Subtopology,
    TasksTuple,
    TopicInfo,
    Topology,
)
from trafka.domain.topics import Topic

G = "app"
SESSION_MS = 45_000

WORD_COUNT = Topology(
    epoch=1,
    subtopologies=(
        Subtopology("0", source_topics=("lines",), repartition_sink_topics=("app-counts-repartition",)),
        Subtopology(
            "1",
            state_changelog_topics=(TopicInfo("app-counts-changelog", configs=(("cleanup.policy", "compact"),)),),
            repartition_source_topics=(TopicInfo("app-counts-repartition"),),
        ),
    ),
)


class Topics:
    def __init__(self) -> None:
        self.counts = {"lines": 3}

    def get(self, name: str) -> Topic | None:
        count = self.counts.get(name)
        return None if count is None else Topic(name, uuid.uuid5(uuid.NAMESPACE_DNS, name), count)

    def create(self, infos: tuple[TopicInfo, ...]) -> None:
        for info in infos:
            self.counts.setdefault(info.name, info.partitions)


@attrs.define
class Client:
    member_id: str
    process_id: str
    epoch: int = 0
    running: TasksTuple = EMPTY  # what the client runs (what it reports as owned)
    told: TasksTuple | None = None  # the last tasks the coordinator sent, not taken yet
    fenced: bool = False


def harness(standbys: int = 1) -> tuple[StreamsGroupCoordinator, Topics]:
    topics = Topics()
    return StreamsGroupCoordinator(StreamsGroupSettings(num_standby_replicas=standbys), topics), topics


def join_request(client: Client) -> StreamsHeartbeat:
    return StreamsHeartbeat(
        G,
        client.member_id,
        0,
        rebalance_timeout_ms=30_000,
        topology=WORD_COUNT,
        owned=EMPTY,
        process_id=client.process_id,
    )


def held(tasks: TasksTuple) -> set[tuple[str, str, int]]:
    return set(tasks.roles())


class StreamsGroupMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.coordinator, self.topics = harness()
        self.now = 0
        self.clients: list[Client] = []
        self.names = iter(f"m{i}" for i in range(10_000))
        self.group_epoch = 0

    def _send(self, client: Client, request: StreamsHeartbeat) -> None:
        before = self.coordinator.groups.get(G)
        member_before = before.members.get(client.member_id) if before is not None else None
        assigned = held(member_before.assigned) if member_before and request.member_epoch != 0 else set()
        answer = self.coordinator.heartbeat(request, self.now)
        self.topics.create(answer.to_create)
        if answer.error is not ErrorCode.NONE:
            assert answer.error in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.FENCED_MEMBER_EPOCH), answer
            client.epoch, client.running, client.told = 0, EMPTY, None  # drops everything and rejoins
            client.fenced = False
            return
        client.epoch = answer.member_epoch
        if answer.assignment is not None:
            client.told = answer.assignment
            now = held(answer.assignment)
            running = held(request.owned if request.owned is not None else client.running)
            if now - assigned:  # tasks added: none taken away that the member still reports running
                assert not (assigned - now) & running, "revocations first"

    def _heartbeat(self, client: Client, prompt: bool) -> None:
        if prompt and client.told is not None:
            client.running, client.told = client.told, None
        if client.epoch == 0:
            client.running = EMPTY
            self._send(client, join_request(client))
        else:
            self._send(client, StreamsHeartbeat(G, client.member_id, client.epoch, owned=client.running))

    @rule(process=st.sampled_from(["p1", "p2", "p3"]))
    def join(self, process: str) -> None:
        if len(self.clients) >= 5:
            return
        client = Client(next(self.names), process)
        self.clients.append(client)
        self._heartbeat(client, True)

    @precondition(lambda self: self.clients)
    @rule(data=st.data(), prompt=st.booleans())
    def heartbeat(self, data: st.DataObject, prompt: bool) -> None:
        client = data.draw(st.sampled_from(self.clients))
        self._heartbeat(client, prompt)

    @precondition(lambda self: self.clients)
    @rule(data=st.data())
    def leave(self, data: st.DataObject) -> None:
        client = data.draw(st.sampled_from(self.clients))
        self.clients.remove(client)
        if client.epoch > 0:
            self.coordinator.heartbeat(StreamsHeartbeat(G, client.member_id, -1), self.now)

    @rule(ms=st.sampled_from([1_000, 20_000, SESSION_MS]))
    def time_passes(self, ms: int) -> None:
        self.now += ms
        for _, member_id in self.coordinator.tick(self.now):
            for client in self.clients:
                if client.member_id == member_id:
                    client.running, client.told = EMPTY, None  # a fenced client stops its tasks
                    client.fenced = True  # its next heartbeat is refused (UNKNOWN_MEMBER_ID), then it rejoins

    @rule()
    def the_source_topic_grows(self) -> None:
        self.topics.counts["lines"] = min(self.topics.counts["lines"] + 1, 5)

    @invariant()
    def no_task_has_two_active_owners(self) -> None:
        group = self.coordinator.groups.get(G)
        if group is None:
            return
        books = Counter(
            (sid, p)
            for m in group.members.values()
            for tasks in (m.assigned, m.pending_revocation)
            for sid, ps in tasks.active.items()
            for p in ps
        )
        assert all(n == 1 for n in books.values()), books
        believed = Counter(
            (sid, p)
            for c in self.clients
            if c.member_id in group.members
            for sid, ps in c.running.active.items()
            for p in ps
        )
        assert all(n == 1 for n in believed.values()), believed

    @invariant()
    def no_process_holds_a_task_twice(self) -> None:
        group = self.coordinator.groups.get(G)
        if group is None:
            return
        per_process = Counter(
            (m.process_id, sid, p)
            for m in group.members.values()
            for tasks in (m.assigned, m.pending_revocation)
            for _, sid, p in tasks.roles()
        )
        assert all(n == 1 for n in per_process.values()), per_process

    @invariant()
    def the_group_epoch_never_goes_back(self) -> None:
        group = self.coordinator.groups.get(G)
        if group is not None:
            assert group.group_epoch >= self.group_epoch or not group.members
            self.group_epoch = group.group_epoch

    def teardown(self) -> None:
        """Everyone heartbeats promptly for a while: every task is then active somewhere."""
        live = self.clients
        if not live:
            return
        for _ in range(8):
            for client in live:
                self._heartbeat(client, True)
        group = self.coordinator.groups[G]
        configured = group.configured
        assert configured is not None
        if not configured.ready:
            return  # the source topic outgrew the internal topics: Kafka's INCORRECTLY_PARTITIONED_TOPICS
        assert configured.task_counts is not None
        active = {(sid, p) for m in group.members.values() for sid, ps in m.assigned.active.items() for p in ps}
        expected = {(sid, p) for sid, n in configured.task_counts.items() for p in range(n)}
        assert active == expected, (active, expected)


TestStreamsGroupMachine = StreamsGroupMachine.TestCase
TestStreamsGroupMachine.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
