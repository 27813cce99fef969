"""`trafka.Broker` and `trafka.open_broker`, the embeddable broker, with real clients."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading

import pytest
import trio
from confluent_kafka import Consumer, Producer
from kafka import KafkaProducer
from kafka.errors import KafkaTimeoutError

import trafka
from tests.waiting import eventually
from trafka.testing import BrokerError, Record

from .clients import client_log_fixture

client_log = client_log_fixture("trafka.tests.embedded", autouse=True)


def _produce(bootstrap: str, topic: str, messages: list[tuple[bytes, bytes]], **extra) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, **extra})
    for key, value in messages:
        producer.produce(topic, key=key, value=value, headers=[("source", b"test")])
    assert producer.flush(15) == 0


def test_a_broker_in_a_with_block_serves_clients_and_shows_its_records_and_offsets():
    with trafka.Broker(topics={"orders": 3}) as broker:
        host, port = broker.bootstrap_servers.split(":")
        assert host == "127.0.0.1" and int(port) == broker.port > 0
        assert broker.topics() == {"orders": 3}
        _produce(broker.bootstrap_servers, "orders", [(b"k%d" % i, b"v%d" % i) for i in range(6)])
        records = broker.wait_for("orders", 6, timeout=10)
        assert sorted(r.value for r in records) == [b"v%d" % i for i in range(6)]
        assert all(r.headers == (("source", b"test"),) and r.topic == "orders" for r in records)
        assert {r.partition for r in records} <= {0, 1, 2}
        assert [(r.partition, r.offset) for r in records] == sorted((r.partition, r.offset) for r in records)

        consumer = Consumer(
            {
                "bootstrap.servers": broker.bootstrap_servers,
                "group.id": "billing",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        consumer.subscribe(["orders"])
        seen: list = []

        def six_read() -> bool:
            message = consumer.poll(0.5)
            if message is not None and not message.error():
                seen.append(message)
            return len(seen) >= 6

        eventually(six_read, 15, what="6 records", interval=0)
        consumer.commit(asynchronous=False)
        consumer.close()
        by_partition: dict[tuple[str, int], int] = {}
        for r in records:
            by_partition[("orders", r.partition)] = max(by_partition.get(("orders", r.partition), 0), r.offset + 1)
        assert broker.committed("billing") == by_partition
        assert broker.committed("nobody") == {}
    assert not broker.running


def test_brokers_in_one_process_share_nothing():
    with trafka.Broker() as first, trafka.Broker() as second:
        assert first.port != second.port
        first.create_topic("only-here", partitions=2)
        _produce(first.bootstrap_servers, "only-here", [(b"k", b"v")])
        assert first.topics() == {"only-here": 2}
        assert second.topics() == {}
        assert len(first.records("only-here")) == 1


def test_settings_by_kafka_name_and_auto_creation_off():
    with trafka.Broker(num_partitions=4, auto_create_topics=False, **{"message.max.bytes": 2048}) as broker:
        broker.create_topic("four")
        assert broker.topics() == {"four": 4}
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, max_block_ms=1500)
        with pytest.raises(KafkaTimeoutError):  # the topic is never created, as in Kafka
            producer.send("missing", b"x").get(timeout=5)
        producer.close(0)
        assert "missing" not in broker.topics()


def test_a_wrong_setting_fails_where_the_broker_is_declared():
    with pytest.raises(BrokerError, match="no.such.setting"):
        trafka.Broker(no_such_setting=1)
    with pytest.raises(BrokerError, match="num.partitions"):
        trafka.Broker(num_partitions="many")


def test_a_broker_that_cannot_listen_says_why():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(BrokerError, match="did not start"):
            trafka.Broker(port=port).start()


def test_a_processs_brokers_run_in_one_loop_thread_and_one_failing_leaves_the_others_serving():
    """ADR 126: a later Broker() is a task in the loop the first one started, not a thread of its own;
    a broker that cannot start, or stops, ends only its own task."""

    def broker_threads() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name.startswith("trafka-broker")]

    with trafka.Broker() as first:
        threads = broker_threads()
        assert len(threads) == 1
        with trafka.Broker() as second:
            assert broker_threads() == threads
            with pytest.raises(BrokerError, match="did not start"):
                trafka.Broker(port=first.port).start()  # its port is taken
            second.create_topic("still-here")
            stopped_port = second.port
        with socket.socket() as probe:  # the stopped broker's listener is closed
            assert probe.connect_ex(("127.0.0.1", stopped_port)) != 0
        first.create_topic("served")
        _produce(first.bootstrap_servers, "served", [(b"k", b"v")])
        assert len(first.wait_for("served", 1)) == 1
        assert broker_threads() == threads


def test_a_data_dir_broker_keeps_its_records_across_restarts(tmp_path):
    data_dir = str(tmp_path / "logs")
    with trafka.Broker(data_dir=data_dir, topics=["kept"]) as broker:
        _produce(broker.bootstrap_servers, "kept", [(b"a", b"1"), (b"b", b"2")], acks="all")
        broker.wait_for("kept", 2)
    assert os.path.exists(os.path.join(data_dir, "kept-0", "00000000000000000000.log"))
    with trafka.Broker(data_dir=data_dir) as broker:
        assert [(r.key, r.value, r.offset) for r in broker.records("kept")] == [(b"a", b"1", 0), (b"b", b"2", 1)]


def test_wait_for_gives_up_after_its_timeout_and_unknown_topics_are_errors():
    with trafka.Broker(topics=["quiet"]) as broker:
        with pytest.raises(TimeoutError, match="0 of 1 records in quiet"):
            broker.wait_for("quiet", 1, timeout=0.2)
        with pytest.raises(BrokerError, match="unknown topic"):
            broker.records("never-created")
        with pytest.raises(BrokerError, match="TOPIC_ALREADY_EXISTS"):
            broker.create_topic("quiet")
    with pytest.raises(BrokerError, match="not running"):
        broker.records("quiet")


async def test_open_broker_runs_in_the_callers_trio_loop():
    async with trafka.open_broker(topics={"events": 2}) as broker:

        def produce() -> None:
            _produce(broker.bootstrap_servers, "events", [(b"k", b"v")])

        await trio.to_thread.run_sync(produce)
        records = await broker.wait_for("events", 1, timeout=10)
        assert records == [
            Record("events", records[0].partition, 0, records[0].timestamp, b"k", b"v", (("source", b"test"),))
        ]


def test_serve_writes_the_ready_file_once_listening(tmp_path):
    ready = tmp_path / "ready.json"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "trafka",
            "serve",
            "--memory",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--ready-file",
            str(ready),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:

        def listening() -> bool:
            assert process.poll() is None, process.stderr.read()
            return ready.exists()

        eventually(listening, 20, what="the ready file", interval=0.02)
        address = json.loads(ready.read_text())
        assert address["host"] == "127.0.0.1" and address["port"] > 0 and address["pid"] == process.pid
        assert address["bootstrap_servers"] == f"127.0.0.1:{address['port']}"
        _produce(address["bootstrap_servers"], "through-ready-file", [(b"k", b"v")])
    finally:
        process.terminate()
        assert process.wait(20) == 0


def test_the_embedded_broker_shows_a_consumer_groups_assignment():
    with trafka.Broker(topics={"kip848": 4}) as broker:
        with pytest.raises(BrokerError, match="no consumer or streams group"):
            broker.assignment("g")
        consumer = Consumer(
            {
                "bootstrap.servers": broker.bootstrap_servers,
                "group.id": "g",
                "group.protocol": "consumer",
                "log_level": 0,
            }
        )
        consumer.subscribe(["kip848"])

        def owned_partitions() -> dict:
            consumer.poll(0.1)
            with contextlib.suppress(BrokerError):  # until its first heartbeat makes the group
                owned = broker.assignment("g")
                return owned if any(owned.values()) else {}
            return {}

        owned = eventually(owned_partitions, 15, what="the member's partitions", interval=0)
        (member,) = owned
        assert owned[member] == {("kip848", p) for p in range(4)}
        consumer.close()
        assert broker.assignment("g") == {}


def test_share_progress_shows_what_a_share_group_accepted():
    from confluent_kafka import AcknowledgeType, ShareConsumer
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    with trafka.Broker(topics={"jobs": 1}) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        resource = ConfigResource(
            ResourceType.GROUP,
            "workers",
            incremental_configs=[
                ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
            ],
        )
        for future in admin.incremental_alter_configs([resource]).values():
            future.result(10)
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
        for i in range(3):
            producer.produce("jobs", f"job-{i}".encode())
        producer.flush(10)
        consumer = ShareConsumer(
            {
                "bootstrap.servers": broker.bootstrap_servers,
                "group.id": "workers",
                "share.acknowledgement.mode": "explicit",
            }
        )
        consumer.subscribe(["jobs"])

        accepted: list = []

        def three_accepted() -> bool:
            for m in consumer.poll(0.2) or []:
                if not m.error():
                    consumer.acknowledge(m, AcknowledgeType.ACCEPT)
                    accepted.append(m)
            return len(accepted) >= 3

        eventually(three_accepted, 15, what="3 records accepted", interval=0)
        consumer.commit_sync()
        consumer.close()
        assert broker.share_progress("workers") == {
            ("jobs", 0): {"start_offset": 3, "in_flight": 0, "acquired": 0, "archived": 0}
        }
        with pytest.raises(BrokerError):
            broker.share_progress("nobody")
