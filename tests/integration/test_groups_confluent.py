"""Consumer groups driven by confluent-kafka (librdkafka), unmodified: the classic group protocol.

Several consumers live in one thread and are polled in turn (librdkafka heartbeats on its own
threads). A member that must die without LeaveGroup runs in a child process and is SIGKILLed.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from confluent_kafka import (
    OFFSET_INVALID,
    Consumer,
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient

from tests.waiting import throughout

from .clients import client_log_fixture, confluent_admin, create_topic, unique
from .groups_helpers import (
    SESSION_TIMEOUT_MS,
    TIMEOUT,
    ChildConsumer,
    group_broker,
    is_disjoint_cover,
    produce,
    wait_until,
)

HEARTBEAT_MS = 500


@pytest.fixture(scope="module")
def gbroker():
    with group_broker() as process:
        yield process


logger = client_log_fixture("trafka.tests.groups.librdkafka")


@pytest.fixture
def bootstrap(gbroker) -> str:
    return gbroker.bootstrap


@pytest.fixture
def admin(bootstrap, logger) -> AdminClient:
    return confluent_admin(bootstrap, logger)


class Member:
    """A subscribed confluent-kafka consumer, with what it was assigned and what it received."""

    def __init__(self, bootstrap: str, logger, topic: str, group: str, **extra) -> None:
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "logger": logger,
                "group.id": group,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "session.timeout.ms": SESSION_TIMEOUT_MS,
                "heartbeat.interval.ms": HEARTBEAT_MS,
                **extra,
            }
        )
        self.assigned: list[set[int]] = []
        self.revoked: list[set[int]] = []
        self.messages: list[tuple[int, int, str]] = []  # (partition, offset, value)
        self.closed = False
        self.consumer.subscribe([topic], on_assign=self._on_assign, on_revoke=self._on_revoke)

    def _on_assign(self, consumer, partitions) -> None:
        self.assigned.append({tp.partition for tp in partitions})

    def _on_revoke(self, consumer, partitions) -> None:
        self.revoked.append({tp.partition for tp in partitions})

    def poll(self, timeout: float = 0.05) -> None:
        for msg in self.consumer.consume(num_messages=500, timeout=timeout):
            if msg.error():
                raise KafkaException(msg.error())
            self.messages.append((msg.partition(), msg.offset(), msg.value().decode()))

    def partitions(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}

    def values(self) -> list[str]:
        return [value for _, _, value in self.messages]

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.consumer.close()


@pytest.fixture
def members(bootstrap, logger):
    """Make group members; every one still open is closed after the test."""
    made: list[Member] = []

    def make(topic: str, group: str, **extra) -> Member:
        member = Member(bootstrap, logger, topic, group, **extra)
        made.append(member)
        return member

    yield make
    for member in made:
        member.close()


def poll_all(*members: Member) -> Callable[[], None]:
    def step() -> None:
        for member in members:
            member.poll()

    return step


def assignments(*members: Member) -> dict[str, set[int]]:
    return {member.consumer.memberid() or f"#{i}": member.partitions() for i, member in enumerate(members)}


def wait_for_split(members: list[Member], partitions: int, timeout: float = TIMEOUT) -> None:
    """Until every member has partitions and together they cover the topic with no overlap."""
    wait_until(
        lambda: (
            all(m.partitions() for m in members) and is_disjoint_cover([m.partitions() for m in members], partitions)
        ),
        f"{len(members)} members to split {partitions} partitions",
        timeout=timeout,
        step=poll_all(*members),
        state=lambda: assignments(*members),
    )


def describe(admin: AdminClient, group: str):
    return admin.describe_consumer_groups([group])[group].result(TIMEOUT)


def wait_for_described(admin: AdminClient, group: str, members: list[Member], timeout: float = TIMEOUT):
    """Until DescribeGroups shows the group Stable with exactly these members and their assignments."""
    last: list = [None, None]

    def matches() -> bool:
        description = describe(admin, group)
        described = {m.member_id: {tp.partition for tp in m.assignment.topic_partitions} for m in description.members}
        last[:] = [description, (description.state, described)]
        return description.state == ConsumerGroupState.STABLE and described == assignments(*members)

    wait_until(
        matches,
        f"group {group} to be described Stable with {len(members)} members",
        timeout=timeout,
        step=poll_all(*members),
        state=lambda: (last[1], assignments(*members)),
    )
    return last[0]


def received_all(members: list[Member], expected: set[tuple[int, str]]) -> bool:
    """Every expected (partition, value) has arrived; duplicates are for the caller to assert on."""
    got = [(p, v) for m in members for p, _, v in m.messages]
    return len(got) >= len(expected) and set(got) >= expected


# -- membership and assignment ---------------------------------------------------------------------


def test_two_consumers_split_four_partitions_without_overlap(bootstrap, admin, members, logger):
    topic, group = unique("split"), unique("g")
    create_topic(bootstrap, topic, 4, logger=logger)
    a, b = members(topic, group), members(topic, group)

    wait_for_split([a, b], 4)
    assert sorted(len(m.partitions()) for m in (a, b)) == [2, 2]  # the range assignor: 2 each
    description = wait_for_described(admin, group, [a, b])
    assert description.partition_assignor == "range"
    assert not description.is_simple_consumer_group

    sent = produce(bootstrap, topic, range(4), 10, logger=logger)
    wait_until(
        lambda: received_all([a, b], sent),
        "all 40 records",
        step=poll_all(a, b),
        state=lambda: (len(a.messages), len(b.messages)),
    )
    got = sorted((p, v) for m in (a, b) for p, _, v in m.messages)
    assert got == sorted(sent)  # every record exactly once between the two
    for member in (a, b):
        assert {p for p, _, _ in member.messages} == member.partitions()


def test_third_consumer_joins_and_partitions_are_redistributed(bootstrap, admin, members, logger):
    topic, group = unique("third"), unique("g")
    create_topic(bootstrap, topic, 4, logger=logger)
    a, b = members(topic, group), members(topic, group)
    wait_for_split([a, b], 4)
    before = {id(a): a.partitions(), id(b): b.partitions()}
    revoked_before = len(a.revoked), len(b.revoked)

    c = members(topic, group)
    wait_for_split([a, b, c], 4)
    wait_for_described(admin, group, [a, b, c])
    assert sorted(len(m.partitions()) for m in (a, b, c)) == [1, 1, 2]
    # The eager protocol revokes everything from the old members before reassigning.
    assert len(a.revoked) > revoked_before[0] and len(b.revoked) > revoked_before[1]
    assert a.partitions() | b.partitions() != before[id(a)] | before[id(b)]

    sent = produce(bootstrap, topic, range(4), 5, logger=logger)
    wait_until(lambda: received_all([a, b, c], sent), "all 20 records", step=poll_all(a, b, c))
    assert sorted((p, v) for m in (a, b, c) for p, _, v in m.messages) == sorted(sent)
    for member in (a, b, c):
        assert {p for p, _, _ in member.messages} == member.partitions()


def test_cooperative_sticky_members_give_up_only_the_partitions_that_move(bootstrap, admin, members, logger):
    """The incremental (cooperative) protocol runs over the classic group APIs with two rebalances."""
    topic, group = unique("coop"), unique("g")
    create_topic(bootstrap, topic, 4, logger=logger)
    coop = {"partition.assignment.strategy": "cooperative-sticky"}
    a, b = members(topic, group, **coop), members(topic, group, **coop)
    wait_for_split([a, b], 4)
    before = {"a": a.partitions(), "b": b.partitions()}
    revoked_before = len(a.revoked), len(b.revoked)

    c = members(topic, group, **coop)
    wait_for_split([a, b, c], 4)
    description = wait_for_described(admin, group, [a, b, c])
    assert description.partition_assignor == "cooperative-sticky"
    assert a.partitions() <= before["a"] and b.partitions() <= before["b"]  # nobody lost what it kept
    moved = set().union(*a.revoked[revoked_before[0] :], *b.revoked[revoked_before[1] :])
    assert moved == c.partitions()  # only the partitions that moved to c were revoked


class IncrementalMember(Member):
    """A cooperative-sticky member whose rebalance callbacks do the (un)assigning themselves, as
    librdkafka's 0113 test does, and commit what they read before giving a partition up."""

    def __init__(self, bootstrap: str, logger, topic: str, group: str) -> None:
        self.lost: list[set[int]] = []
        self.events: list[tuple[str, set[int]]] = []  # ("assign" | "revoke", partitions), in order
        super().__init__(bootstrap, logger, topic, group, **{"partition.assignment.strategy": "cooperative-sticky"})
        self.consumer.subscribe([topic], on_assign=self._on_assign, on_revoke=self._on_revoke, on_lost=self._on_lost)

    def _on_assign(self, consumer, partitions) -> None:
        consumer.incremental_assign(partitions)
        super()._on_assign(consumer, partitions)
        self.events.append(("assign", {tp.partition for tp in partitions}))

    def _on_revoke(self, consumer, partitions) -> None:
        positions = [tp for tp in consumer.position(partitions) if tp.offset >= 0]
        if positions:
            consumer.commit(offsets=positions, asynchronous=False)
        consumer.incremental_unassign(partitions)
        super()._on_revoke(consumer, partitions)
        self.events.append(("revoke", {tp.partition for tp in partitions}))

    def _on_lost(self, consumer, partitions) -> None:
        consumer.incremental_unassign(partitions)
        self.lost.append({tp.partition for tp in partitions})

    def net(self) -> set[int]:
        """The partitions the callbacks were given and not yet asked back."""
        held: set[int] = set()
        for kind, partitions in self.events:
            held = held | partitions if kind == "assign" else held - partitions
        return held


def test_cooperative_members_with_callbacks_revoke_then_reassign_and_read_every_record_once(bootstrap, members, logger):
    """librdkafka's 0113 `b_subscribe_with_cb_test`: the first member owns both partitions; when the
    second joins, the first revokes one incrementally in generation 2 and rejoins with what it still
    owns, which starts generation 3 where the revoked partition goes to the second member."""
    topic, group = unique("coopcb"), unique("g")
    create_topic(bootstrap, topic, 2, logger=logger)
    made: list[IncrementalMember] = []

    def member() -> IncrementalMember:
        m = IncrementalMember(bootstrap, logger, topic, group)
        made.append(m)
        return m

    try:
        first = member()
        before = produce(bootstrap, topic, range(2), 10, tag="before", logger=logger)
        wait_until(
            lambda: first.partitions() == {0, 1} and received_all([first], before),
            "the first member to own both partitions and read 20 records",
            step=first.poll,
            state=lambda: (first.assigned, first.partitions(), len(first.messages)),
        )
        assert first.assigned == [{0, 1}] and first.revoked == []

        second = member()
        wait_until(
            lambda: len(first.partitions()) == 1 and len(second.partitions()) == 1,
            "the revoked partition to reach the second member",
            timeout=20,
            step=poll_all(first, second),
            state=lambda: (first.assigned, first.revoked, second.assigned, assignments(first, second)),
        )
        moved = second.partitions()
        assert first.revoked == [moved]  # one incremental revoke, of just the partition that moved
        assert first.partitions() == {0, 1} - moved
        # generation 1 gave the first member both; later generations give it nothing new
        assert first.assigned[0] == {0, 1} and all(got == set() for got in first.assigned[1:])
        assert len(first.assigned) >= 2  # generation 2's empty assignment after the revoke, at least
        # the second member gets the moved partition once, after an empty generation 2 unless its
        # SyncGroup for generation 2 came after the leader's rejoin (REBALANCE_IN_PROGRESS, as in Kafka)
        assert [got for got in second.assigned if got] == [moved]
        assert second.revoked == []
        assert (first.net(), second.net()) == (first.partitions(), second.partitions())

        after = produce(bootstrap, topic, range(2), 10, tag="after", logger=logger)
        wait_until(
            lambda: received_all([first, second], before | after),
            "all 40 records",
            step=poll_all(first, second),
            state=lambda: (len(first.messages), len(second.messages)),
        )
        got = sorted((p, v) for m in (first, second) for p, _, v in m.messages)
        assert got == sorted(before | after)  # every record once across the rebalance
        assert {p for p, _, v in second.messages} == moved
        assert not any(v.startswith("before") for _, _, v in second.messages)

        for m in made:
            m.close()
        assert first.revoked == [moved, {0, 1} - moved]  # close gives back what each held
        assert second.revoked == [moved]  # close gives back what it held
        assert first.lost == second.lost == []
        assert first.net() == second.net() == set()
    finally:
        for m in made:
            m.close()


def test_killed_consumer_partitions_move_to_survivors_after_session_timeout(bootstrap, admin, members, logger):
    topic, group = unique("kill"), unique("g")
    create_topic(bootstrap, topic, 4, logger=logger)
    a, b = members(topic, group), members(topic, group)
    wait_for_split([a, b], 4)

    child = ChildConsumer(bootstrap, topic, group, SESSION_TIMEOUT_MS)
    try:
        wait_until(
            lambda: (
                bool(child.refresh())
                and all(m.partitions() for m in (a, b))
                and is_disjoint_cover([a.partitions(), b.partitions(), child.assignment], 4)
            ),
            "the child consumer to join and take partitions",
            timeout=20,
            step=poll_all(a, b),
            state=lambda: (assignments(a, b), child.assignment),
        )
        wait_until(lambda: len(describe(admin, group).members) == 3, "3 described members", step=poll_all(a, b))
        orphaned = set(child.assignment)
    finally:
        child.kill()  # SIGKILL: no LeaveGroup, no more heartbeats
    killed_at = time.monotonic()

    wait_until(
        lambda: is_disjoint_cover([a.partitions(), b.partitions()], 4),
        "the survivors to take over the killed member's partitions",
        timeout=SESSION_TIMEOUT_MS / 1000 + 10,
        step=poll_all(a, b),
        state=lambda: assignments(a, b),
    )
    elapsed = time.monotonic() - killed_at
    # Kafka does not treat a closed connection as leaving: the member expires after its session
    # timeout (6 s) counted from its last heartbeat (at most 0.5 s before the kill).
    assert elapsed >= SESSION_TIMEOUT_MS / 1000 - 1.5, f"rebalanced {elapsed:.1f}s after the kill"
    assert orphaned <= a.partitions() | b.partitions()
    description = wait_for_described(admin, group, [a, b])
    assert len(description.members) == 2


def test_static_member_restart_keeps_its_partitions_without_rebalance(bootstrap, admin, members, logger):
    topic, group = unique("static"), unique("g")
    create_topic(bootstrap, topic, 4, logger=logger)
    static = {"session.timeout.ms": 10_000}
    a = members(topic, group, **{"group.instance.id": "instance-a", **static})
    b = members(topic, group, **{"group.instance.id": "instance-b", **static})
    wait_for_split([a, b], 4)
    description = wait_for_described(admin, group, [a, b])
    assert {m.group_instance_id for m in description.members} == {"instance-a", "instance-b"}
    a_partitions, b_partitions = a.partitions(), b.partitions()
    a_member_id = a.consumer.memberid()
    b_events = len(b.assigned), len(b.revoked)

    a.close()  # a static member does not send LeaveGroup on close
    a2 = members(topic, group, **{"group.instance.id": "instance-a", **static})
    wait_until(
        lambda: bool(a2.partitions()),
        "the restarted static member's assignment",
        step=poll_all(a2, b),
        state=lambda: assignments(a2, b),
    )
    assert a2.partitions() == a_partitions
    assert a2.consumer.memberid() != a_member_id  # a new member id in the same static slot

    # Watch b for several heartbeat intervals: a rebalance would reach it as REBALANCE_IN_PROGRESS.
    def b_untouched() -> None:
        poll_all(a2, b)()
        assert (len(b.assigned), len(b.revoked)) == b_events, "the other member was rebalanced"

    throughout(b_untouched, 4 * HEARTBEAT_MS / 1000)
    assert b.partitions() == b_partitions
    description = wait_for_described(admin, group, [a2, b])
    assert {m.group_instance_id for m in description.members} == {"instance-a", "instance-b"}


# -- committed offsets ------------------------------------------------------------------------------


def test_new_consumers_resume_from_committed_offsets(bootstrap, admin, members, logger):
    topic, group = unique("resume"), unique("g")
    create_topic(bootstrap, topic, 4, logger=logger)
    a, b = members(topic, group), members(topic, group)
    wait_for_split([a, b], 4)
    first = produce(bootstrap, topic, range(4), 10, tag="first", logger=logger)
    wait_until(lambda: received_all([a, b], first), "the first 40 records", step=poll_all(a, b))
    for member in (a, b):
        member.consumer.commit(asynchronous=False)
        committed = member.consumer.committed([TopicPartition(topic, p) for p in sorted(member.partitions())], TIMEOUT)
        assert [(tp.partition, tp.offset, tp.error) for tp in committed] == [
            (p, 10, None) for p in sorted(member.partitions())
        ]
    a.close()
    b.close()
    wait_until(lambda: describe(admin, group).state == ConsumerGroupState.EMPTY, "the group to be Empty")

    second = produce(bootstrap, topic, range(4), 5, tag="second", logger=logger)
    c, d = members(topic, group), members(topic, group)
    wait_until(
        lambda: received_all([c, d], second),
        "the 20 records produced after the commit",
        step=poll_all(c, d),
        state=lambda: (c.messages, d.messages),
    )
    resumed = [(p, o, v) for m in (c, d) for p, o, v in m.messages]
    assert sorted((p, v) for p, _, v in resumed) == sorted(second)  # nothing committed is re-delivered
    assert min(o for _, o, _ in resumed) == 10


def test_offset_fetch_for_uncommitted_partition_returns_no_offset(bootstrap, admin, logger):
    topic, group = unique("nocommit"), unique("g")
    create_topic(bootstrap, topic, 2, logger=logger)
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "logger": logger, "group.id": group, "enable.auto.commit": False}
    )
    committed = consumer.committed([TopicPartition(topic, 0), TopicPartition(topic, 1)], TIMEOUT)
    assert [(tp.partition, tp.offset, tp.error) for tp in committed] == [
        (0, OFFSET_INVALID, None),
        (1, OFFSET_INVALID, None),
    ]

    # Commit partition 0 only (as a simple consumer, generation -1): partition 1 still has none.
    consumer.commit(offsets=[TopicPartition(topic, 0, 7)], asynchronous=False)
    committed = consumer.committed([TopicPartition(topic, 0), TopicPartition(topic, 1)], TIMEOUT)
    assert [(tp.partition, tp.offset) for tp in committed] == [(0, 7), (1, OFFSET_INVALID)]
    request = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0), TopicPartition(topic, 1)])
    listed = admin.list_consumer_group_offsets([request])[group].result(TIMEOUT)
    assert [(tp.partition, tp.offset, tp.error) for tp in listed.topic_partitions] == [
        (0, 7, None),
        (1, OFFSET_INVALID, None),
    ]
    consumer.close()


# -- admin ---------------------------------------------------------------------------------------------


def test_admin_lists_describes_and_manages_groups(bootstrap, admin, members, logger):
    topic, group = unique("admin"), unique("g")
    create_topic(bootstrap, topic, 2, logger=logger)
    a = members(topic, group, **{"client.id": "member-a"})
    b = members(topic, group, **{"client.id": "member-b"})
    wait_for_split([a, b], 2)
    description = wait_for_described(admin, group, [a, b])

    assert description.group_id == group
    assert description.state == ConsumerGroupState.STABLE
    assert description.partition_assignor == "range"
    assert not description.is_simple_consumer_group
    assert description.coordinator.id == next(iter(admin.list_topics(timeout=TIMEOUT).brokers))
    by_client = {m.client_id: m for m in description.members}
    assert set(by_client) == {"member-a", "member-b"}
    for client_id, member in (("member-a", a), ("member-b", b)):
        described = by_client[client_id]
        assert described.member_id == member.consumer.memberid()
        assert described.host
        assert described.group_instance_id is None
        assert {(tp.topic, tp.partition) for tp in described.assignment.topic_partitions} == {
            (topic, p) for p in member.partitions()
        }

    listed = admin.list_consumer_groups().result(TIMEOUT)
    assert listed.errors == []
    ours = [g for g in listed.valid if g.group_id == group]
    assert len(ours) == 1 and ours[0].state == ConsumerGroupState.STABLE and not ours[0].is_simple_consumer_group
    stable = admin.list_consumer_groups(states={ConsumerGroupState.STABLE}).result(TIMEOUT)
    assert group in {g.group_id for g in stable.valid}
    empty = admin.list_consumer_groups(states={ConsumerGroupState.EMPTY}).result(TIMEOUT)
    assert group not in {g.group_id for g in empty.valid}

    sent = produce(bootstrap, topic, range(2), 3, logger=logger)
    wait_until(lambda: received_all([a, b], sent), "6 records", step=poll_all(a, b))
    for member in (a, b):
        member.consumer.commit(asynchronous=False)
    offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(TIMEOUT)
    assert sorted((tp.topic, tp.partition, tp.offset) for tp in offsets.topic_partitions) == [
        (topic, 0, 3),
        (topic, 1, 3),
    ]

    # An active group can be neither deleted nor have its offsets altered by an admin.
    with pytest.raises(KafkaException) as deleted:
        admin.delete_consumer_groups([group])[group].result(TIMEOUT)
    assert deleted.value.args[0].code() == KafkaError.NON_EMPTY_GROUP
    refused = admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, 1)])])[
        group
    ].result(TIMEOUT)
    assert [(tp.partition, tp.error.code()) for tp in refused.topic_partitions] == [(0, KafkaError.UNKNOWN_MEMBER_ID)]
    offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(TIMEOUT)
    assert sorted((tp.partition, tp.offset) for tp in offsets.topic_partitions) == [(0, 3), (1, 3)]

    a.close()
    b.close()
    description = describe(admin, group)
    assert description.state == ConsumerGroupState.EMPTY and description.members == []

    altered = admin.alter_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, 1), TopicPartition(topic, 1, 2)])]
    )[group].result(TIMEOUT)
    assert sorted((tp.partition, tp.offset, tp.error) for tp in altered.topic_partitions) == [
        (0, 1, None),
        (1, 2, None),
    ]
    offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(TIMEOUT)
    assert sorted((tp.partition, tp.offset) for tp in offsets.topic_partitions) == [(0, 1), (1, 2)]

    assert admin.delete_consumer_groups([group])[group].result(TIMEOUT) is None
    assert group not in {g.group_id for g in admin.list_consumer_groups().result(TIMEOUT).valid}
    offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0)])])[
        group
    ].result(TIMEOUT)
    assert [(tp.partition, tp.offset) for tp in offsets.topic_partitions] == [(0, OFFSET_INVALID)]

    with pytest.raises(KafkaException) as missing:
        admin.delete_consumer_groups([group])[group].result(TIMEOUT)
    assert missing.value.args[0].code() == KafkaError.GROUP_ID_NOT_FOUND


def test_group_emptied_by_its_members_leaving_is_still_a_consumer_group(bootstrap, admin, members, logger):
    """Kafka keeps an emptied group's protocol type: it lists as Empty, protocol type "consumer"."""
    topic, group = unique("emptied"), unique("g")
    create_topic(bootstrap, topic, 2, logger=logger)
    a, b = members(topic, group), members(topic, group)
    wait_for_split([a, b], 2)
    wait_for_described(admin, group, [a, b])
    a.close()
    b.close()

    description = describe(admin, group)
    assert (description.state, description.members, description.partition_assignor) == (
        ConsumerGroupState.EMPTY,
        [],
        "",
    )
    assert not description.is_simple_consumer_group
    listed = {g.group_id: g for g in admin.list_consumer_groups().result(TIMEOUT).valid}
    assert listed[group].state == ConsumerGroupState.EMPTY
    assert not listed[group].is_simple_consumer_group


def test_admin_alter_offsets_creates_a_simple_group(bootstrap, admin, logger):
    topic, group = unique("simple"), unique("g")
    create_topic(bootstrap, topic, 1, logger=logger)
    altered = admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, 4)])])[
        group
    ].result(TIMEOUT)
    assert [(tp.partition, tp.offset, tp.error) for tp in altered.topic_partitions] == [(0, 4, None)]
    listed = {g.group_id: g for g in admin.list_consumer_groups().result(TIMEOUT).valid}
    assert group in listed
    assert listed[group].is_simple_consumer_group
    assert listed[group].state == ConsumerGroupState.EMPTY
