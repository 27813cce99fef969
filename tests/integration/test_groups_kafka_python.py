"""Consumer groups driven by kafka-python 3.0, unmodified: KafkaConsumer members and KafkaAdminClient.

KafkaConsumer is not thread-safe and joins a group from inside `poll`, so each group member runs in
its own thread, polling until told to stop; the test thread only reads what the members recorded.
kafka-python 3 names its group admin calls list_groups, describe_groups, list_group_offsets,
alter_group_offsets, delete_group_offsets and delete_groups.
"""

from __future__ import annotations

import threading

import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka import errors as Errors
from kafka.admin import KafkaAdminClient
from kafka.structs import OffsetAndMetadata

from .clients import client_log_fixture, create_topic, unique
from .groups_helpers import (
    SESSION_TIMEOUT_MS,
    TIMEOUT,
    group_broker,
    is_disjoint_cover,
    produce,
    wait_until,
)


@pytest.fixture(scope="module")
def gbroker():
    with group_broker() as process:
        yield process


kafka_python_logs = client_log_fixture("kafka", autouse=True)
rdkafka_logger = client_log_fixture("trafka.tests.groups.kp.librdkafka")


@pytest.fixture
def bootstrap(gbroker) -> str:
    return gbroker.bootstrap


@pytest.fixture
def admin(bootstrap):
    client = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    yield client
    client.close()


def consumer_config(bootstrap: str, group: str, **extra) -> dict:
    return {
        "bootstrap_servers": bootstrap,
        "group_id": group,
        "auto_offset_reset": "earliest",
        "enable_auto_commit": False,
        "session_timeout_ms": SESSION_TIMEOUT_MS,
        "heartbeat_interval_ms": 500,
        "request_timeout_ms": 10_000,
        **extra,
    }


class ThreadMember:
    """A subscribed KafkaConsumer polled by its own thread; records its assignment and records."""

    def __init__(self, bootstrap: str, topic: str, group: str, **extra) -> None:
        self._config = consumer_config(bootstrap, group, **extra)
        self._topic = topic
        self._lock = threading.Lock()
        self._partitions: set[int] = set()
        self._messages: list[tuple[int, int, str]] = []
        self._commit = threading.Event()
        self.committed = threading.Event()
        self.member_id = ""
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            consumer = KafkaConsumer(**self._config)
            consumer.subscribe([self._topic])
            try:
                while not self._stop.is_set():
                    batches = consumer.poll(timeout_ms=100)
                    with self._lock:
                        for tp, records in batches.items():
                            self._messages += [(tp.partition, r.offset, r.value.decode()) for r in records]
                        self._partitions = {tp.partition for tp in consumer.assignment()}
                        self.member_id = consumer.group_metadata().member_id
                    if self._commit.is_set():
                        consumer.commit()
                        self._commit.clear()
                        self.committed.set()
            finally:
                consumer.close()
        except BaseException as exc:  # surfaced by the test thread
            self.error = exc

    def partitions(self) -> set[int]:
        self._check()
        with self._lock:
            return set(self._partitions)

    def messages(self) -> list[tuple[int, int, str]]:
        self._check()
        with self._lock:
            return list(self._messages)

    def commit(self) -> None:
        self.committed.clear()
        self._commit.set()
        wait_until(self.committed.is_set, "the member thread to commit", state=lambda: self.error)
        self._check()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(TIMEOUT)
        assert not self._thread.is_alive(), "the member thread did not stop"
        self._check()

    def _check(self) -> None:
        if self.error is not None:
            raise AssertionError(f"member thread failed: {self.error!r}") from self.error


@pytest.fixture
def thread_members(bootstrap):
    made: list[ThreadMember] = []

    def make(topic: str, group: str, **extra) -> ThreadMember:
        member = ThreadMember(bootstrap, topic, group, **extra)
        made.append(member)
        return member

    yield make
    for member in made:
        member._stop.set()
    for member in made:
        member._thread.join(TIMEOUT)


def describe(admin: KafkaAdminClient, group: str) -> dict:
    return admin.describe_groups([group])[group]


def test_consumer_subscribes_consumes_commits_and_resumes(bootstrap, rdkafka_logger):
    topic, group = unique("kp-resume"), unique("g")
    create_topic(bootstrap, topic, 2, logger=rdkafka_logger)
    first = produce(bootstrap, topic, range(2), 5, tag="first", logger=rdkafka_logger)

    consumer = KafkaConsumer(**consumer_config(bootstrap, group))
    consumer.subscribe([topic])
    got: list[tuple[int, int, str]] = []

    def step() -> None:
        for tp, records in consumer.poll(timeout_ms=100).items():
            got.extend((tp.partition, r.offset, r.value.decode()) for r in records)

    wait_until(lambda: len(got) >= len(first), "the first 10 records", step=step, state=lambda: got)
    assert sorted((p, v) for p, _, v in got) == sorted(first)
    assert consumer.assignment() == {TopicPartition(topic, 0), TopicPartition(topic, 1)}
    consumer.commit()
    assert consumer.committed(TopicPartition(topic, 0)) == 5
    assert consumer.committed(TopicPartition(topic, 1)) == 5
    consumer.close()

    second = produce(bootstrap, topic, range(2), 3, tag="second", logger=rdkafka_logger)
    consumer = KafkaConsumer(**consumer_config(bootstrap, group))
    consumer.subscribe([topic])
    got.clear()
    try:
        wait_until(
            lambda: len(got) >= len(second), "the 6 records produced after the commit", step=step, state=lambda: got
        )
    finally:
        consumer.close()
    assert sorted((p, v) for p, _, v in got) == sorted(second)  # nothing committed is re-delivered
    assert sorted(o for _, o, _ in got) == [5, 5, 6, 6, 7, 7]


def test_committed_is_none_for_a_partition_never_committed(bootstrap, rdkafka_logger):
    topic, group = unique("kp-none"), unique("g")
    create_topic(bootstrap, topic, 2, logger=rdkafka_logger)
    consumer = KafkaConsumer(**consumer_config(bootstrap, group))
    try:
        assert consumer.committed(TopicPartition(topic, 0)) is None
        consumer.assign([TopicPartition(topic, 0)])
        consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(3, "meta", -1)})
        assert consumer.committed(TopicPartition(topic, 0), metadata=True).offset == 3
        assert consumer.committed(TopicPartition(topic, 0), metadata=True).metadata == "meta"
        assert consumer.committed(TopicPartition(topic, 1)) is None
    finally:
        consumer.close()


def test_two_members_split_partitions(bootstrap, admin, thread_members, rdkafka_logger):
    topic, group = unique("kp-split"), unique("g")
    create_topic(bootstrap, topic, 4, logger=rdkafka_logger)
    a, b = thread_members(topic, group), thread_members(topic, group)

    def split() -> bool:
        return bool(a.partitions()) and bool(b.partitions()) and is_disjoint_cover([a.partitions(), b.partitions()], 4)

    wait_until(
        split,
        "2 kafka-python members to split 4 partitions",
        timeout=20,
        state=lambda: (a.partitions(), b.partitions()),
    )
    wait_until(lambda: describe(admin, group)["group_state"] == "Stable", "the group to be Stable")
    assert sorted(len(m.partitions()) for m in (a, b)) == [2, 2]

    sent = produce(bootstrap, topic, range(4), 5, logger=rdkafka_logger)
    wait_until(
        lambda: len(a.messages()) + len(b.messages()) >= len(sent),
        "all 20 records",
        state=lambda: (a.messages(), b.messages()),
    )
    assert sorted((p, v) for m in (a, b) for p, _, v in m.messages()) == sorted(sent)
    for member in (a, b):
        assert {p for p, _, _ in member.messages()} == member.partitions()
        member.commit()

    offsets = admin.list_group_offsets({group: None})[group]
    assert {tp: om.offset for tp, om in offsets.items()} == {TopicPartition(topic, p): 5 for p in range(4)}


def test_admin_lists_describes_and_deletes_groups(bootstrap, admin, thread_members, rdkafka_logger):
    topic, group = unique("kp-admin"), unique("g")
    create_topic(bootstrap, topic, 2, logger=rdkafka_logger)
    a = thread_members(topic, group, client_id="kp-member-a")
    b = thread_members(topic, group, client_id="kp-member-b")
    wait_until(
        lambda: bool(a.partitions()) and bool(b.partitions()),
        "both members to get a partition",
        timeout=20,
        state=lambda: (a.partitions(), b.partitions()),
    )
    wait_until(lambda: describe(admin, group)["group_state"] == "Stable", "the group to be Stable")

    listed = {g["group_id"]: g for g in admin.list_groups()}
    assert listed[group]["protocol_type"] == "consumer"
    assert listed[group]["group_state"] == "Stable"
    assert group in {g["group_id"] for g in admin.list_groups(states_filter=["Stable"])}
    assert group not in {g["group_id"] for g in admin.list_groups(states_filter=["Empty"])}

    description = describe(admin, group)
    assert description["error"] is None
    assert description["protocol_type"] == "consumer"
    assert description["protocol_data"] in ("range", "roundrobin")
    members = {m["client_id"]: m for m in description["members"]}
    assert set(members) == {"kp-member-a", "kp-member-b"}
    for client_id, member in (("kp-member-a", a), ("kp-member-b", b)):
        described = members[client_id]
        assert described["member_id"] == member.member_id
        assert described["client_host"]
        assert described["group_instance_id"] is None
        assert described["member_metadata"]["topics"] == [topic]  # decoded ConsumerProtocolSubscription
        assigned = {
            (t["topic"], p) for t in described["member_assignment"]["assigned_partitions"] for p in t["partitions"]
        }
        assert assigned == {(topic, p) for p in member.partitions()}

    assert admin.delete_groups([group]) == {group: "NonEmptyGroupError"}
    sent = produce(bootstrap, topic, range(2), 2, logger=rdkafka_logger)
    wait_until(lambda: len(a.messages()) + len(b.messages()) >= len(sent), "4 records")
    a.commit()
    b.commit()
    # OffsetDelete is refused for a topic the active group subscribes to.
    refused = admin.delete_group_offsets(group, [TopicPartition(topic, 0)])
    assert refused == {TopicPartition(topic, 0): Errors.GroupSubscribedToTopicError}

    a.stop()
    b.stop()
    wait_until(lambda: describe(admin, group)["group_state"] == "Empty", "the group to be Empty")
    assert describe(admin, group)["members"] == []

    offsets = admin.list_group_offsets({group: [TopicPartition(topic, 0), TopicPartition(topic, 1)]})[group]
    assert {tp.partition: om.offset for tp, om in offsets.items()} == {0: 2, 1: 2}
    assert admin.delete_group_offsets(group, [TopicPartition(topic, 0)]) == {TopicPartition(topic, 0): Errors.NoError}
    offsets = admin.list_group_offsets({group: [TopicPartition(topic, 0), TopicPartition(topic, 1)]})[group]
    assert {tp.partition: om.offset for tp, om in offsets.items()} == {0: -1, 1: 2}
    altered = admin.alter_group_offsets(group, {TopicPartition(topic, 0): OffsetAndMetadata(1, "", None)})
    assert altered == {TopicPartition(topic, 0): Errors.NoError}
    assert admin.list_group_offsets({group: None})[group][TopicPartition(topic, 0)].offset == 1

    assert admin.delete_groups([group]) == {group: "OK"}
    assert group not in {g["group_id"] for g in admin.list_groups()}
    assert admin.delete_groups([group]) == {group: "GroupIdNotFoundError"}


def test_group_emptied_by_its_members_leaving_keeps_its_protocol_type(bootstrap, admin, thread_members, rdkafka_logger):
    """Kafka keeps an emptied group's protocol type ("consumer"); only the protocol name is cleared."""
    topic, group = unique("kp-emptied"), unique("g")
    create_topic(bootstrap, topic, 1, logger=rdkafka_logger)
    member = thread_members(topic, group)
    wait_until(lambda: member.partitions() == {0}, "the member's assignment", timeout=20)
    wait_until(lambda: describe(admin, group)["group_state"] == "Stable", "the group to be Stable")
    member.stop()

    description = describe(admin, group)
    assert (description["group_state"], description["members"]) == ("Empty", [])
    assert (description["protocol_type"], description["protocol_data"]) == ("consumer", "")
    listed = {g["group_id"]: g for g in admin.list_groups()}
    assert (listed[group]["group_state"], listed[group]["protocol_type"]) == ("Empty", "consumer")
