"""A consumer group resumes from its committed offsets after its consumers and the broker restart."""

from __future__ import annotations

import signal
import time

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from .broker import BrokerProcess

GROUP_ENV = {"TRAFKA_GROUPS_INITIAL_REBALANCE_DELAY_MS": "0"}


def _consume(bootstrap: str, topic: str, count: int) -> list[tuple[int, int, bytes]]:
    consumer = Consumer({
        "bootstrap.servers": bootstrap, "group.id": "resume", "auto.offset.reset": "earliest",
        "enable.auto.commit": False, "log_level": 0,
    })
    consumer.subscribe([topic])
    got = []
    deadline = time.monotonic() + 30
    try:
        while len(got) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None or message.error():
                continue
            got.append((message.partition(), message.offset(), message.value()))
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
