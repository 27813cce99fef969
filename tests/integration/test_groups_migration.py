"""The online migration between the classic and the consumer group protocols (ADR 50), driven by
confluent-kafka 2.16 (librdkafka 2.16) as a user upgrading a running application would do it: two
classic members consume six partitions, then are restarted one by one with `group.protocol=consumer`
(the first consumer heartbeat turns the classic group into a consumer group that hosts the remaining
classic member), and back (the last consumer-protocol member leaving turns it classic again).
Records are produced at every step and every one is read exactly once in total. Each record is
committed before the next is read, so a partition that moves resumes where its owner stopped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, KafkaException

from .broker import BrokerProcess
from .clients import client_log_fixture, confluent_admin, create_topic, unique
from .groups_helpers import GROUP_BROKER_ENV, SESSION_TIMEOUT_MS, TIMEOUT, is_disjoint_cover, produce, wait_until

PARTITIONS = 6
ENV = {**GROUP_BROKER_ENV, "TRAFKA_GROUPS_CONSUMER_HEARTBEAT_INTERVAL_MS": "300"}
SETTLE = 90.0

logger = client_log_fixture("trafka.tests.groups.migration")


@contextlib.contextmanager
def migration_broker() -> Iterator[BrokerProcess]:
    process = BrokerProcess(["--memory"], env=ENV).start()
    try:
        yield process
    finally:
        assert process.stop() == 0, process.log()


@pytest.fixture(scope="module")
def mbroker():
    with migration_broker() as process:
        yield process


class Member:
    """A confluent-kafka consumer of either protocol, with what it holds and what it read."""

    def __init__(
        self, bootstrap: str, logger, topic: str, group: str, protocol: str, assignor: str, instance: str | None
    ) -> None:
        config = {
            "bootstrap.servers": bootstrap,
            "logger": logger,
            "group.id": group,
            "group.protocol": protocol,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
        if instance is not None:
            config["group.instance.id"] = instance
        if protocol == "classic":
            config |= {
                "partition.assignment.strategy": assignor,
                "session.timeout.ms": SESSION_TIMEOUT_MS,
                "heartbeat.interval.ms": 300,
            }
        self.protocol = protocol
        self.consumer = Consumer(config)
        self.read: list[tuple[int, int, str]] = []
        self.commit_errors: list[str] = []
        self.closed = False
        self.consumer.subscribe([topic])

    def poll(self) -> None:
        if self.closed:
            return
        message = self.consumer.poll(0.05)
        if message is None or message.error():
            return
        self.read.append((message.partition(), message.offset(), message.value().decode()))
        try:
            self.consumer.commit(message=message, asynchronous=False)
        except KafkaException as exc:
            self.commit_errors.append(str(exc))

    def partitions(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}

    def close(self) -> None:
        self.closed = True
        self.consumer.close()


def group_type(admin, group: str) -> str:
    listed = admin.list_consumer_groups().result(timeout=TIMEOUT)
    (mine,) = [g for g in listed.valid if g.group_id == group]
    return mine.type.name


@pytest.mark.parametrize(
    ("assignor", "static"), [("cooperative-sticky", False), ("range", False), ("cooperative-sticky", True)]
)
def test_a_classic_group_upgraded_member_by_member_and_downgraded_back(mbroker, logger, assignor, static):
    """Static members (`group.instance.id`) are replaced by their restart under the other protocol:
    a classic one never leaves, a consumer one leaves with -2, and the last of the consumer protocol
    replaced by a classic one turns the group classic."""
    bootstrap = mbroker.bootstrap
    admin = confluent_admin(bootstrap, logger)
    topic, group = unique("migrate"), unique("g")
    create_topic(bootstrap, topic, PARTITIONS)
    members: list[Member] = []
    sent: set[tuple[int, str]] = set()

    def start(protocol: str, name: str) -> Member:
        member = Member(bootstrap, logger, topic, group, protocol, assignor, f"{group}-{name}" if static else None)
        members.append(member)
        return member

    def step() -> None:
        for m in members:
            m.poll()

    def values() -> list[str]:
        return [v for m in members for _, _, v in m.read]

    def settle(what: str) -> None:
        live = [m for m in members if not m.closed]
        wait_until(
            lambda: (
                len(values()) >= len(sent)
                and sorted(len(m.partitions()) for m in live) == [3, 3]
                and is_disjoint_cover([m.partitions() for m in live], PARTITIONS)
            ),
            what,
            timeout=SETTLE,
            step=step,
            state=lambda: ([(m.protocol, sorted(m.partitions())) for m in live], len(values()), len(sent)),
        )

    def produce_more(tag: str) -> None:
        sent.update(produce(bootstrap, topic, range(PARTITIONS), 5, tag=tag))

    produce_more("classic")
    a, b = start("classic", "a"), start("classic", "b")
    settle("two classic members share the partitions")
    assert group_type(admin, group) == "CLASSIC"

    # upgrade: restart each member with the consumer protocol
    produce_more("upgrade-a")
    a.close()
    a = start("consumer", "a")
    settle("the first consumer-protocol member and the classic one share the partitions")
    assert group_type(admin, group) == "CONSUMER"
    described = admin.describe_consumer_groups([group])[group].result(timeout=TIMEOUT)
    assert described.type.name == "CONSUMER" and len(described.members) == 2
    produce_more("upgrade-b")
    b.close()
    b = start("consumer", "b")
    settle("both members use the consumer protocol")
    assert group_type(admin, group) == "CONSUMER"

    # downgrade: restart each member with the classic protocol
    produce_more("downgrade-a")
    a.close()
    a = start("classic", "a")
    settle("a classic member inside the consumer group")
    assert group_type(admin, group) == "CONSUMER"
    produce_more("downgrade-b")
    b.close()
    b = start("classic", "b")
    settle("the last consumer-protocol member left: a classic group again")
    assert group_type(admin, group) == "CLASSIC"
    produce_more("classic-again")
    settle("the classic group reads on")

    read = values()
    assert sorted(read) == sorted(v for _, v in sent), (len(read), len(set(read)), len(sent))
    for m in members:
        if not m.closed:
            m.close()


def test_a_kafka_python_classic_member_inside_a_consumer_group(mbroker, logger):
    """Another client's ConsumerProtocol bytes: kafka-python 3.0 (classic protocol, range) joins a group
    a librdkafka consumer-protocol member formed; the broker assigns both, disjoint, every record read."""
    from kafka import KafkaConsumer

    bootstrap = mbroker.bootstrap
    admin = confluent_admin(bootstrap, logger)
    topic, group = unique("migrate-kp"), unique("g")
    create_topic(bootstrap, topic, PARTITIONS)
    sent = produce(bootstrap, topic, range(PARTITIONS), 5, tag="kp")
    modern = Member(bootstrap, logger, topic, group, "consumer", "range", None)
    wait_until(lambda: len(modern.partitions()) == PARTITIONS, "the consumer member holds all", step=modern.poll)
    classic = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=SESSION_TIMEOUT_MS,
        heartbeat_interval_ms=300,
        request_timeout_ms=10_000,
    )
    read: list[str] = []

    def step() -> None:
        modern.poll()
        for records in classic.poll(timeout_ms=50).values():
            for record in records:
                read.append(record.value.decode())
                classic.commit()

    def split() -> bool:
        mine = {tp.partition for tp in classic.assignment()}
        return (
            len(read) + len(modern.read) >= len(sent)
            and sorted([len(mine), len(modern.partitions())]) == [3, 3]
            and is_disjoint_cover([mine, modern.partitions()], PARTITIONS)
        )

    wait_until(split, "the kafka-python classic member takes three partitions", timeout=SETTLE, step=step)
    assert group_type(admin, group) == "CONSUMER"
    assert sorted(read + [v for _, _, v in modern.read]) == sorted(v for _, v in sent)
    classic.close()
    modern.close()


def test_both_conversions_survive_a_broker_restart(tmp_path, logger):
    """Upgrade, restart: still a consumer group hosting the classic member, both reading on; downgrade,
    restart: a classic group again. The conversions' records in `__consumer_offsets` are what loads."""
    from .test_groups_consumer_protocol_restart import _broker, _free_port

    port = _free_port()
    broker = _broker(tmp_path / "logs", port)
    members: list[Member] = []
    try:
        bootstrap = broker.bootstrap
        topic, group = unique("migrate-restart"), unique("g")
        create_topic(bootstrap, topic, PARTITIONS)
        sent = produce(bootstrap, topic, range(PARTITIONS), 5, tag="before")

        def step() -> None:
            for m in members:
                m.poll()

        def settled() -> bool:
            live = [m for m in members if not m.closed]
            return (
                sum(len(m.read) for m in members) >= len(sent)
                and sorted(len(m.partitions()) for m in live) == [3, 3]
                and is_disjoint_cover([m.partitions() for m in live], PARTITIONS)
            )

        classic = Member(bootstrap, logger, topic, group, "classic", "cooperative-sticky", None)
        members.append(classic)
        wait_until(lambda: len(classic.partitions()) == PARTITIONS, "the classic member holds all", step=step)
        modern = Member(bootstrap, logger, topic, group, "consumer", "range", None)
        members.append(modern)
        wait_until(settled, "upgraded: the two members share the partitions", timeout=SETTLE, step=step)
        admin = confluent_admin(bootstrap, logger)  # referenced until its answer is in
        ids = {m.member_id for m in admin.describe_consumer_groups([group])[group].result(timeout=TIMEOUT).members}

        broker.stop()
        broker = _broker(tmp_path / "logs", port)
        admin = confluent_admin(bootstrap, logger)
        described = admin.describe_consumer_groups([group])[group].result(timeout=TIMEOUT)
        assert described.type.name == "CONSUMER" and {m.member_id for m in described.members} == ids
        sent |= produce(bootstrap, topic, range(PARTITIONS), 5, tag="after-upgrade")
        wait_until(settled, "both read on after the restart", timeout=SETTLE, step=step)

        modern.close()  # the last consumer-protocol member: the group turns classic
        wait_until(lambda: group_type(admin, group) == "CLASSIC", "downgraded", step=step)
        wait_until(lambda: len(classic.partitions()) == PARTITIONS, "the classic member takes all", step=step)
        broker.stop()
        broker = _broker(tmp_path / "logs", port)
        admin = confluent_admin(bootstrap, logger)
        assert group_type(admin, group) == "CLASSIC"
        sent |= produce(bootstrap, topic, range(PARTITIONS), 5, tag="after-downgrade")
        wait_until(lambda: sum(len(m.read) for m in members) >= len(sent), "read on", timeout=SETTLE, step=step)
        read = [v for m in members for _, _, v in m.read]
        assert sorted(read) == sorted(v for _, v in sent)
        classic.close()
    finally:
        broker.stop()
