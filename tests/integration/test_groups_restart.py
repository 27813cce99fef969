"""A consumer group resumes from its committed offsets after its consumers and the broker restart, and
comes back as its group metadata in `__consumer_offsets` left it: Stable with its members and
generation (members carry on without a rebalance), static members keeping their slot, deleted groups
gone."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.waiting import eventually

from .broker import BrokerProcess

GROUP_ENV = {"TRAFKA_GROUPS_INITIAL_REBALANCE_DELAY_MS": "0"}


def _consume(bootstrap: str, topic: str, count: int) -> list[tuple[int, int, bytes]]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "resume",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "log_level": 0,
        }
    )
    consumer.subscribe([topic])
    got = []

    def read() -> bool:
        message = consumer.poll(0.5)
        if message is not None and not message.error():
            got.append((message.partition(), message.offset(), message.value()))
        return len(got) >= count

    try:
        eventually(read, 30, what=f"{count} records", interval=0, state=lambda: len(got))
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return got


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGKILL], ids=["clean", "kill-9"])
def test_group_resumes_from_committed_offsets_after_broker_restart(tmp_path, stop_signal):
    args = ["--data-dir", str(tmp_path / "logs")]
    broker = BrokerProcess(args, env=GROUP_ENV).start()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap, "log_level": 0})
    admin.create_topics([NewTopic("resumed", 2, 1)])["resumed"].result(10)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "log_level": 0})
    for i in range(20):
        producer.produce("resumed", value=b"first-%d" % i, partition=i % 2)
    assert producer.flush(10) == 0
    first = _consume(broker.bootstrap, "resumed", 20)
    assert len(first) == 20
    broker.stop(stop_signal)

    broker = BrokerProcess(args, env=GROUP_ENV).start()
    try:
        producer = Producer({"bootstrap.servers": broker.bootstrap, "log_level": 0})
        for i in range(6):
            producer.produce("resumed", value=b"second-%d" % i, partition=i % 2)
        assert producer.flush(10) == 0
        second = _consume(broker.bootstrap, "resumed", 6)
        assert sorted(v for _, _, v in second) == sorted(b"second-%d" % i for i in range(6))
        assert all(offset >= 10 for _, offset, _ in second)  # nothing from before the commit again
    finally:
        assert broker.stop() == 0


# -- group metadata (GroupMetadataKey/Value in __consumer_offsets) across restarts ------------------

SESSION_MS = 60_000  # long enough that the members outlive the broker's restart


def _restart(broker: BrokerProcess, data_dir, stop_signal: int) -> BrokerProcess:
    """The broker stopped and started again on the same data dir and port (clients reconnect)."""
    port = broker.port
    broker.stop(stop_signal)
    return BrokerProcess(["--data-dir", str(data_dir), "--port", str(port)], env=GROUP_ENV).start()


def _describe(bootstrap: str, group: str):
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    return admin.describe_consumer_groups([group])[group].result(30)


def _member(bootstrap: str, group: str, **extra) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": SESSION_MS,
            "log_level": 0,
            **extra,
        }
    )


def _poll_until(consumers: list[Consumer], condition, what: str, timeout: float = 60) -> list:
    got: list = []

    def polled() -> bool:
        if condition(got):
            return True
        for consumer in consumers:
            message = consumer.poll(0.2)
            if message is not None and not message.error():
                got.append(message.value())
        return False

    eventually(polled, timeout, what=what, interval=0)
    return got


def _group_records(data_dir, group: str) -> list[dict]:
    """The group's GroupMetadataValue records, decoded by `trafka dump-log --offsets-decoder`."""
    out = []
    for segment in sorted((data_dir / "__consumer_offsets-0").glob("*.log")):
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "trafka",
                "dump-log",
                str(segment),
                "--print-data-log",
                "--offsets-decoder",
                "-o",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        for dumped in json.loads(result.stdout):
            for batch in dumped["batches"]:
                for record in batch["records"]:
                    key = record["key"]
                    if isinstance(key, dict) and key["type"] == "2" and key["data"]["group"] == group:
                        out.append(record["payload"] and record["payload"]["data"])
    return out


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGKILL], ids=["clean", "kill-9"])
def test_a_stable_group_comes_back_stable_and_its_members_carry_on_without_a_rebalance(tmp_path, stop_signal):
    data = tmp_path / "logs"
    broker = BrokerProcess(["--data-dir", str(data)], env=GROUP_ENV).start()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap, "log_level": 0})
    admin.create_topics([NewTopic("kept", 2, 1)])["kept"].result(10)
    rebalances: list[str] = []
    consumers = []
    for name in ("a", "b"):
        consumer = _member(broker.bootstrap, "kept-group", **{"client.id": name})
        consumer.subscribe(["kept"], on_assign=lambda c, parts, name=name: rebalances.append(name))
        consumers.append(consumer)
    try:
        producer = Producer({"bootstrap.servers": broker.bootstrap, "log_level": 0})
        for i in range(10):
            producer.produce("kept", value=b"before-%d" % i, partition=i % 2)
        assert producer.flush(10) == 0
        _poll_until(
            consumers,
            lambda got: len(got) >= 10 and all(len(c.assignment()) == 1 for c in consumers),
            "both members to consume",
        )
        before = _describe(broker.bootstrap, "kept-group")
        assert before.state.name == "STABLE" and len(before.members) == 2
        assigned = len(rebalances)
        generation = _group_records(data, "kept-group")[-1]["generation"]  # dump-log reads a live dir

        broker = _restart(broker, data, stop_signal)
        after = _describe(broker.bootstrap, "kept-group")  # before any member has rejoined
        assert after.state.name == "STABLE"
        assert after.partition_assignor == before.partition_assignor
        assert sorted((m.member_id, m.client_id) for m in after.members) == sorted(
            (m.member_id, m.client_id) for m in before.members
        )
        assert sorted(tp.partition for m in after.members for tp in m.assignment.topic_partitions) == [0, 1]

        producer = Producer({"bootstrap.servers": broker.bootstrap, "log_level": 0})
        for i in range(6):
            producer.produce("kept", value=b"after-%d" % i, partition=i % 2)
        assert producer.flush(30) == 0
        got = _poll_until(consumers, lambda got: len([v for v in got if v.startswith(b"after")]) >= 6, "new records")
        assert sorted(v for v in got if v.startswith(b"after")) == sorted(b"after-%d" % i for i in range(6))
        for consumer in consumers:  # committed with the generation they had before the restart
            consumer.commit(asynchronous=False)
        assert len(rebalances) == assigned, "the restart made the group rebalance"
    finally:
        for consumer in consumers:
            consumer.close()
        assert broker.stop() == 0, broker.log()
    last = _group_records(data, "kept-group")[-1]
    assert (last["generation"], last["members"]) == (generation + 1, [])  # only the empty one after close()


def test_a_static_member_rejoining_after_a_restart_keeps_its_generation(tmp_path):
    data = tmp_path / "logs"
    broker = BrokerProcess(["--data-dir", str(data)], env=GROUP_ENV).start()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap, "log_level": 0})
    admin.create_topics([NewTopic("statics", 1, 1)])["statics"].result(10)
    static = {"group.instance.id": "instance-1", "client.id": "static-client"}
    assigned: list[int] = []
    consumer = _member(broker.bootstrap, "static-group", **static)
    consumer.subscribe(["statics"], on_assign=lambda c, parts: assigned.append(len(parts)))
    try:
        _poll_until([consumer], lambda got: assigned == [1], "the static member's assignment")
        first_id = consumer.memberid()
    finally:
        consumer.close()  # a static member sends no LeaveGroup: the group stays Stable with it
    broker.stop(signal.SIGKILL)

    broker = BrokerProcess(["--data-dir", str(data)], env=GROUP_ENV).start()
    try:
        loaded = _describe(broker.bootstrap, "static-group")
        assert loaded.state.name == "STABLE"
        assert [(m.member_id, m.group_instance_id) for m in loaded.members] == [(first_id, "instance-1")]
        consumer = _member(broker.bootstrap, "static-group", **static)
        consumer.subscribe(["statics"], on_assign=lambda c, parts: assigned.append(len(parts)))
        try:
            _poll_until([consumer], lambda got: assigned == [1, 1], "the static member's assignment again")
            rejoined = _describe(broker.bootstrap, "static-group")
            assert rejoined.state.name == "STABLE"
            assert [m.group_instance_id for m in rejoined.members] == ["instance-1"]
            assert rejoined.members[0].member_id == consumer.memberid() != first_id
        finally:
            consumer.close()
    finally:
        assert broker.stop() == 0, broker.log()
    generations = [r["generation"] for r in _group_records(data, "static-group")]
    # the group as its JoinGroup created it (Kafka's empty record), generation 1, and the rejoin that
    # replaced the member id in generation 1: no rebalance
    assert generations == [0, 1, 1]


def test_a_deleted_group_stays_gone_after_a_restart(tmp_path):
    data = tmp_path / "logs"
    broker = BrokerProcess(["--data-dir", str(data)], env=GROUP_ENV).start()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap, "log_level": 0})
    admin.create_topics([NewTopic("gone", 1, 1)])["gone"].result(10)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "log_level": 0})
    producer.produce("gone", value=b"x")
    assert producer.flush(10) == 0
    consumer = _member(broker.bootstrap, "gone-group")
    consumer.subscribe(["gone"])
    try:
        _poll_until([consumer], lambda got: len(got) == 1, "the record")
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    admin.delete_consumer_groups(["gone-group"], request_timeout=30)["gone-group"].result(30)
    broker.stop(signal.SIGKILL)

    broker = BrokerProcess(["--data-dir", str(data)], env=GROUP_ENV).start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap, "log_level": 0})
        listed = admin.list_consumer_groups().result(30)
        assert "gone-group" not in [g.group_id for g in listed.valid]
        assert _describe(broker.bootstrap, "gone-group").state.name == "DEAD"
    finally:
        assert broker.stop() == 0, broker.log()
    assert _group_records(data, "gone-group")[-1] is None  # the tombstone
