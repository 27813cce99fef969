"""Hypothesis drives the KIP-848 coordinator: joins, leaves, static leaves, heartbeats (clients that
revoke at once or late), lost answers, topic changes and time; and classic-protocol members inside
the group (ADR 50: JoinGroup + SyncGroup as a cooperative client does them, Heartbeat, LeaveGroup),
the group turning classic when its last consumer-protocol member goes.

Invariants: no partition is ever owned (assigned or being revoked) by two members at once, by the
coordinator's books and by what the clients believe they own; group, assignment and member epochs
never go back; the records written so far restore the group as it is (a broker restart loses
nothing); and once everyone keeps heartbeating, every subscribed partition is owned.
"""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from tests.unit.domain.groups.consumer_harness import Client, G, Harness
from tests.unit.domain.groups.test_consumer_group_migration import decoded, join_request
from trafka.domain.errors import ErrorCode
from trafka.domain.groups import SyncRequest
from trafka.domain.groups.modern import ConsumerHeartbeat
from trafka.domain.groups.modern.targets import owners


class ConsumerGroupMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = Harness(t=5, u=3)
        self.clients: list[Client] = []
        self.names = iter(f"m{i}" for i in range(10_000))
        self.epochs = (0, 0)
        self.member_epochs: dict[str, int] = {}
        self.log: list = []  # every record the coordinator asked to write, in order
        self.classic: list[Client] = []  # classic-protocol members (epoch = their generation)

    def _forget_classic(self, client: Client) -> None:
        self.classic.remove(client)

    def _classic_round(self, client: Client) -> None:
        """JoinGroup then SyncGroup, owning afterwards what the sync hands it (cooperative)."""
        if not self.h.coordinator.hosts_classic_join(G):
            return
        joined = self.h.coordinator.classic_members.join(
            join_request(client.member_id, owned=client.owned, client_id=client.member_id or "k"), self.h.now
        )
        if joined.error is not ErrorCode.NONE:
            return
        client.member_id, client.epoch = joined.member_id, joined.generation_id
        if G not in self.h.coordinator.groups:  # it replaced the last consumer member: classic now
            self._forget_classic(client)
            return
        synced = self.h.coordinator.classic_members.sync(SyncRequest(G, client.member_id, client.epoch), self.h.now)
        if synced.error is ErrorCode.NONE:
            client.owned = {t: frozenset(ps) for t, ps in decoded(synced.assignment).items()}

    @precondition(lambda self: self.clients)
    @rule()
    def classic_join(self):
        client = Client("")
        self._classic_round(client)
        if client.member_id and G in self.h.coordinator.groups and client.member_id in self.h.group.members:
            self.classic.append(client)

    @precondition(lambda self: self.classic)
    @rule(data=st.data())
    def classic_heartbeat(self, data):
        client = data.draw(st.sampled_from(self.classic))
        if G not in self.h.coordinator.groups:
            return
        error = self.h.coordinator.classic_members.heartbeat(G, client.member_id, client.epoch, self.h.now)
        if error is ErrorCode.REBALANCE_IN_PROGRESS:
            self._classic_round(client)
        elif error is not ErrorCode.NONE:
            client.owned = {}
            self._forget_classic(client)

    @precondition(lambda self: self.classic)
    @rule(data=st.data())
    def classic_leave(self, data):
        client = data.draw(st.sampled_from(self.classic))
        self._forget_classic(client)
        if G in self.h.coordinator.groups:
            self.h.coordinator.classic_members.leave(G, [(client.member_id, None)], self.h.now)

    @rule(topics=st.sampled_from([("t",), ("u",), ("t", "u")]), static=st.booleans())
    def join(self, topics, static):
        name = next(self.names)
        client = Client(name, topics=topics, instance_id=f"i-{name}" if static else None)
        if self.h.heartbeat(client).error is ErrorCode.NONE:
            self.clients.append(client)

    @precondition(lambda self: self.clients)
    @rule(data=st.data(), full=st.booleans())
    def heartbeat(self, data, full):
        client = data.draw(st.sampled_from(self.clients))
        self.h.heartbeat(client, full=full)

    @precondition(lambda self: self.clients)
    @rule(data=st.data())
    def slow_revoker(self, data):
        """A client that reports what it owned before, without revoking (yet)."""
        client = data.draw(st.sampled_from(self.clients))
        kept = dict(client.owned)
        answer = self.h.heartbeat(client)
        if answer.error is ErrorCode.NONE and answer.assignment is not None:
            # it takes the new partitions only when it also gave up the old ones: keep the old set
            client.owned = (
                kept if not all(answer.assignment.get(t, frozenset()) >= ps for t, ps in kept.items()) else client.owned
            )

    @precondition(lambda self: self.clients)
    @rule(data=st.data())
    def leave(self, data):
        client = data.draw(st.sampled_from(self.clients))
        self.clients.remove(client)
        epoch = -2 if client.instance_id is not None and data.draw(st.booleans()) else -1
        self.h.coordinator.heartbeat(
            ConsumerHeartbeat(G, client.member_id, epoch, instance_id=client.instance_id), self.h.now
        )
        self._after_downgrade()

    def _after_downgrade(self) -> None:
        """The group turned classic: its classic members would rejoin the classic group (not modelled);
        they drop their partitions, as a classic client does when its rebalance starts."""
        if G not in self.h.coordinator.groups and self.classic:
            self.classic.clear()

    @rule(ms=st.integers(0, 50_000))
    def time_passes(self, ms):
        self.h.now += ms
        fenced = {m for _, m in self.h.coordinator.tick(self.h.now)}
        for client in [c for c in self.classic if c.member_id in fenced]:
            self._forget_classic(client)
        self._after_downgrade()
        for client in self.clients:
            if client.member_id in fenced:
                client.epoch, client.owned, client.assigned = (
                    0,
                    {},
                    {},
                )  # its next heartbeat gets UNKNOWN_MEMBER_ID; it drops all

    @rule(topic=st.sampled_from(["t", "u"]), count=st.integers(1, 8))
    def topic_grows(self, topic, count):
        current = self.h.topics.get(topic)
        if current is not None and count > current.partition_count:
            self.h.topics.grow(topic, count)

    @invariant()
    def one_owner(self):
        groups = self.h.coordinator.groups.values()
        owners(groups)
        believed: dict[tuple[str, int], str] = {}
        for client in self.clients + self.classic:
            for topic, ps in client.owned.items():
                for p in ps:
                    assert (topic, p) not in believed, (topic, p, believed[(topic, p)], client.member_id)
                    believed[(topic, p)] = client.member_id

    @invariant()
    def records_restore_the_group(self):
        self.log += self.h.coordinator.take_records()
        restarted = Harness()
        restarted.topics = self.h.topics
        restarted.coordinator._topics = self.h.topics
        restarted.coordinator.load(self.log, self.h.now)
        assert restarted.coordinator.groups.keys() == self.h.coordinator.groups.keys()
        for gid, group in self.h.coordinator.groups.items():
            back = restarted.coordinator.groups[gid]
            assert (back.group_epoch, back.assignment_epoch) == (group.group_epoch, group.assignment_epoch)
            assert back.static_members == group.static_members
            assert {m: a for m, a in back.target.items() if a} == {m: a for m, a in group.target.items() if a}
            assert back.partition_owners == group.partition_owners
            for mid, m in group.members.items():
                b = back.members[mid]
                assert (b.member_epoch, b.previous_member_epoch, b.state) == (
                    m.member_epoch,
                    m.previous_member_epoch,
                    m.state,
                )
                assert (b.assigned, b.pending_revocation) == (m.assigned, m.pending_revocation)
                assert (b.subscribed_topic_names, b.instance_id) == (m.subscribed_topic_names, m.instance_id)
                assert b.classic == m.classic
            assert back.members.keys() == group.members.keys()

    @invariant()
    def epochs_never_go_back(self):
        group = self.h.coordinator.groups.get(G)
        if group is None:
            return
        epochs = (group.group_epoch, group.assignment_epoch)
        assert epochs >= self.epochs and group.group_epoch >= group.assignment_epoch
        self.epochs = epochs
        for member in group.members.values():
            if member.member_epoch >= 0:
                assert member.member_epoch >= self.member_epochs.get(member.member_id, 0)
                self.member_epochs[member.member_id] = member.member_epoch

    def teardown(self):
        # everyone heartbeats (revoking at once) until the group settles: all is owned, once
        self.h.now += 1
        for _ in range(8):
            for client in self.clients:
                answer = self.h.heartbeat(client)
                if answer.error is not ErrorCode.NONE:
                    self.h.heartbeat(client)
            for client in list(self.classic):
                if G in self.h.coordinator.groups:
                    self._classic_round(client)
        group = self.h.coordinator.groups.get(G)
        live = [c for c in self.clients + self.classic if group and c.member_id in group.members]
        if not live:
            return
        subscribed = {t for c in live for t in c.topics}
        expected = {(t, p) for t in subscribed for p in range(self.h.topics.get(t).partition_count)}
        # static members that left with -2 keep their target until their session expires
        parked = {
            (t, p)
            for m in group.members.values()
            if m.member_epoch == -2
            for assignment in (m.assigned, group.target.get(m.member_id, {}))
            for t, ps in assignment.items()
            for p in ps
        }
        # classic members nobody drives (they were in the group when it turned classic, and came back
        # with an upgrade) hold their partitions until their session expires
        tracked = {c.member_id for c in live}
        parked |= {
            (t, p)
            for m in group.members.values()
            if m.classic is not None and m.member_id not in tracked
            for assignment in (m.assigned, m.pending_revocation, group.target.get(m.member_id, {}))
            for t, ps in assignment.items()
            for p in ps
        }
        owned = {(t, p) for c in live for t, ps in c.owned.items() for p in ps}
        assert expected - parked <= owned


ConsumerGroupMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
TestConsumerGroupMachine = ConsumerGroupMachine.TestCase
