"""KIP-848 consumer groups driven by confluent-kafka (librdkafka 2.16) with `group.protocol=consumer`:
the broker assigns, members heartbeat with ConsumerGroupHeartbeat, a join or a leave moves only the
partitions that must move. Consumers live in one thread and are polled in turn; every record is
committed (OffsetCommit v9, checked against the member epoch) before the next is read, so a partition
that moves is resumed where its previous owner stopped.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient

from .broker import BrokerProcess
from .clients import client_log_fixture, confluent_admin, create_topic, unique
from .groups_helpers import TIMEOUT, is_disjoint_cover, produce, wait_until

PARTITIONS = 6
HEARTBEAT_ENV = {"TRAFKA_GROUPS_CONSUMER_HEARTBEAT_INTERVAL_MS": "300"}


@contextlib.contextmanager
def consumer_group_broker(args=("--memory",), env=None) -> Iterator[BrokerProcess]:
    process = BrokerProcess(list(args), env={**HEARTBEAT_ENV, **(env or {})}).start()
    try:
        yield process
    finally:
        assert process.stop() == 0, process.log()


@pytest.fixture(scope="module")
def cbroker():
    with consumer_group_broker() as process:
        yield process


logger = client_log_fixture("trafka.tests.groups.kip848")


@pytest.fixture
def bootstrap(cbroker) -> str:
    return cbroker.bootstrap


@pytest.fixture
def admin(bootstrap, logger) -> AdminClient:
    return confluent_admin(bootstrap, logger)


_OPEN: list[Member] = []  # every member a test made, closed at its end even when it failed


@pytest.fixture(autouse=True)
def _members_closed() -> Iterator[None]:
    """A member a failed test left open keeps librdkafka's main thread busy after the broker is gone
    (a core of the CI machine for the rest of the run): each is closed when its test ends."""
    yield
    while _OPEN:
        member = _OPEN.pop()
        if not member.closed:
            member.close()


class Member:
    """A confluent-kafka consumer of the new protocol, with what it holds and what it read."""

    def __init__(self, bootstrap: str, logger, topic: str, group: str, **extra) -> None:
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "logger": logger,
                "group.id": group,
                "group.protocol": "consumer",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                **extra,
            }
        )
        self.read: list[tuple[int, int, str]] = []  # (partition, offset, value)
        self.revoked: list[set[int]] = []
        self.closed = False
        _OPEN.append(self)
        self.consumer.subscribe([topic], on_revoke=self._on_revoke)

    def _on_revoke(self, consumer, partitions) -> None:
        self.revoked.append({tp.partition for tp in partitions})

    def poll(self) -> None:
        if self.closed:
            return
        message = self.consumer.poll(0.05)
        if message is None or message.error():
            return
        self.read.append((message.partition(), message.offset(), message.value().decode()))
        self.consumer.commit(message=message, asynchronous=False)

    def partitions(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}

    def close(self) -> None:
        self.closed = True
        self.consumer.close()


def poll_all(members: list[Member]):
    def step() -> None:
        for m in members:
            m.poll()

    return step


def read_values(members: list[Member]) -> list[str]:
    return [value for m in members for _, _, value in m.read]


def test_members_join_and_leave_with_balanced_disjoint_assignments_and_every_record_read_once(bootstrap, admin, logger):
    topic, group = unique("kip848"), unique("g")
    create_topic(bootstrap, topic, PARTITIONS)
    sent = produce(bootstrap, topic, range(PARTITIONS), 10, tag="one")
    a, b = Member(bootstrap, logger, topic, group), Member(bootstrap, logger, topic, group)
    members = [a, b]

    def settled(expected: list[int], count: int):
        live = [m for m in members if not m.closed]
        return lambda: (
            len(read_values(members)) >= count
            and sorted(len(m.partitions()) for m in live) == expected
            and is_disjoint_cover([m.partitions() for m in live], PARTITIONS)
        )

    wait_until(
        settled([3, 3], 60), "two members hold three partitions each and read everything", step=poll_all(members)
    )
    sent |= produce(bootstrap, topic, range(PARTITIONS), 10, tag="two")
    c = Member(bootstrap, logger, topic, group)
    members.append(c)
    wait_until(settled([2, 2, 2], 120), "a third member joins: two partitions each", step=poll_all(members))
    b.close()
    sent |= produce(bootstrap, topic, range(PARTITIONS), 10, tag="three")
    wait_until(settled([3, 3], 180), "b left: a and c share its partitions", step=poll_all(members))
    values = read_values(members)
    assert sorted(values) == sorted(v for _, v in sent)  # every record, once
    for m in (a, c):
        m.close()


def test_a_member_joining_moves_only_the_partitions_it_takes(bootstrap, admin, logger):
    topic, group = unique("kip848"), unique("g")
    create_topic(bootstrap, topic, PARTITIONS)
    a = Member(bootstrap, logger, topic, group)
    wait_until(lambda: len(a.partitions()) == PARTITIONS, "a holds every partition", step=poll_all([a]))
    before = a.partitions()
    b = Member(bootstrap, logger, topic, group)
    wait_until(
        lambda: len(a.partitions()) == 3 and len(b.partitions()) == 3,
        "b takes three partitions",
        step=poll_all([a, b]),
    )
    assert a.partitions() <= before and a.partitions().isdisjoint(b.partitions())
    assert set().union(*a.revoked) == b.partitions()  # a gave up only what b took
    a.close()
    b.close()


def test_a_static_member_restarting_keeps_its_partitions(bootstrap, admin, logger):
    topic, group = unique("kip848"), unique("g")
    create_topic(bootstrap, topic, PARTITIONS)
    a = Member(bootstrap, logger, topic, group, **{"group.instance.id": "a"})
    b = Member(bootstrap, logger, topic, group, **{"group.instance.id": "b"})
    wait_until(
        lambda: sorted([len(a.partitions()), len(b.partitions())]) == [3, 3],
        "two static members share the partitions",
        step=poll_all([a, b]),
    )
    mine, theirs = b.partitions(), a.partitions()
    revoked_before = len(a.revoked)
    b.close()  # a static member leaves with epoch -2: its partitions wait for it
    b2 = Member(bootstrap, logger, topic, group, **{"group.instance.id": "b"})
    wait_until(lambda: b2.partitions() == mine, "b is back with its partitions", step=poll_all([a, b2]))
    assert a.partitions() == theirs and len(a.revoked) == revoked_before
    a.close()
    b2.close()


def test_describe_shows_the_consumer_group(bootstrap, admin, logger):
    topic, group = unique("kip848"), unique("g")
    create_topic(bootstrap, topic, PARTITIONS)
    a = Member(bootstrap, logger, topic, group)
    wait_until(lambda: len(a.partitions()) == PARTITIONS, "a holds every partition", step=poll_all([a]))
    described = admin.describe_consumer_groups([group])[group].result(timeout=TIMEOUT)
    assert described.type.name == "CONSUMER"
    assert described.state.name == "STABLE"
    assert len(described.members) == 1
    assert {tp.partition for tp in described.members[0].assignment.topic_partitions} == set(range(PARTITIONS))
    listed = admin.list_consumer_groups().result(timeout=TIMEOUT)
    (mine,) = [g for g in listed.valid if g.group_id == group]
    assert (mine.type.name, mine.state.name) == ("CONSUMER", "STABLE")
    cli = subprocess.run(
        [sys.executable, "-m", "trafka", "group", "list", "-b", bootstrap, "-o", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cli.returncode == 0, cli.stderr
    rows = [r for r in json.loads(cli.stdout) if r["group"] == group]
    assert rows == [{"group": group, "type": "consumer", "state": "Stable", "protocol_type": "consumer"}]
    cli = subprocess.run(
        [sys.executable, "-m", "trafka", "group", "describe", group, "-b", bootstrap, "-o", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cli.returncode == 0, cli.stderr
    rows = json.loads(cli.stdout)
    assert sorted(r["partition"] for r in rows) == list(range(PARTITIONS))
    assert {(r["type"], r["assignor"], r["in_target"], r["state"]) for r in rows} == {
        ("consumer", "uniform", True, "Stable")
    }
    assert {r["member_epoch"] for r in rows} == {r["group_epoch"] for r in rows}
    a.close()
    wait_until(
        lambda: admin.describe_consumer_groups([group])[group].result(timeout=TIMEOUT).state.name == "EMPTY",
        "the group is empty once a left",
    )
    assert admin.delete_consumer_groups([group])[group].result(timeout=TIMEOUT) is None
    listed = admin.list_consumer_groups().result(timeout=TIMEOUT)
    assert group not in {g.group_id for g in listed.valid}


def test_a_regex_subscription_picks_up_a_topic_created_later(bootstrap, logger):
    prefix = unique("kre")
    create_topic(bootstrap, f"{prefix}-a", 2)
    create_topic(bootstrap, f"other-{prefix}", 1)
    member = Member(bootstrap, logger, f"^{prefix}-.*", unique("g"))
    sent = produce(bootstrap, f"{prefix}-a", range(2), 5, tag="a")
    wait_until(lambda: len(member.read) >= 10, "the records of the topic the regex matches", step=poll_all([member]))
    create_topic(bootstrap, f"{prefix}-b", 3)
    wait_until(
        lambda: {tp.topic for tp in member.consumer.assignment()} == {f"{prefix}-a", f"{prefix}-b"},
        "the new topic is assigned",
        step=poll_all([member]),
    )
    sent_b = produce(bootstrap, f"{prefix}-b", range(3), 5, tag="b")
    wait_until(lambda: len(member.read) >= 25, "the new topic's records", step=poll_all([member]))
    assert sorted(read_values([member])) == sorted(v for _, v in sent | sent_b)
    member.close()
