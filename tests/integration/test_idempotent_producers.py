"""Idempotent producers with real clients: exactly once in the log, also across a broker crash."""

from __future__ import annotations

import signal

from confluent_kafka import Consumer, Producer, TopicPartition
from kafka import KafkaProducer

from tests.waiting import eventually

from .broker import BrokerProcess


def _values(bootstrap: str, topic: str, expected: int) -> list[bytes]:
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "check", "log_level": 0, "enable.auto.commit": False}
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[bytes] = []

    def read() -> bool:
        message = consumer.poll(0.5)
        if message is not None and not message.error():
            values.append(message.value())
        return len(values) >= expected

    try:
        eventually(read, 20, what=f"{expected} records", interval=0, state=lambda: len(values))
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        assert high == len(values), (high, len(values))
    finally:
        consumer.close()
    return values


def test_confluent_and_kafka_python_idempotent_producers(broker, topic_name):
    producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True, "log_level": 0})
    for i in range(500):
        producer.produce(topic_name, value=b"c%d" % i, partition=0)
    assert producer.flush(15) == 0
    kp = KafkaProducer(bootstrap_servers=broker.bootstrap, enable_idempotence=True)
    for i in range(50):
        kp.send(topic_name, b"k%d" % i, partition=0)
    kp.flush(15)
    kp.close()
    assert _values(broker.bootstrap, topic_name, 550) == [b"c%d" % i for i in range(500)] + [
        b"k%d" % i for i in range(50)
    ]


def test_idempotent_producer_retries_across_a_broker_crash(tmp_path):
    """The broker is killed while the producer sends; after the restart every message is there once."""
    args = ["--data-dir", str(tmp_path / "logs")]
    broker = BrokerProcess(args).start()
    same_port = args + ["--port", str(broker.port)]  # the last --port wins
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "enable.idempotence": True,
            "log_level": 0,
            "linger.ms": 2,
            "message.timeout.ms": 60000,
            "reconnect.backoff.ms": 50,
            "reconnect.backoff.max.ms": 200,
        }
    )
    failures: list = []
    delivered: list[int] = []
    count = 3000

    def report(err, msg):
        (failures if err is not None else delivered).append(err or msg.offset())

    for i in range(count // 2):
        producer.produce("crashy", value=b"%05d" % i, partition=0, on_delivery=report)
        producer.poll(0)
    broker.stop(signal.SIGKILL)  # some of the first half may be in flight: retries must not duplicate
    for i in range(count // 2, count):
        producer.produce("crashy", value=b"%05d" % i, partition=0, on_delivery=report)
        producer.poll(0)
    broker = BrokerProcess(same_port).start()
    try:
        assert producer.flush(60) == 0
        assert failures == []
        assert len(delivered) == count
        assert _values(broker.bootstrap, "crashy", count) == [b"%05d" % i for i in range(count)]
    finally:
        assert broker.stop() == 0


def test_a_clean_stop_writes_producer_snapshots_that_the_restart_uses(tmp_path):
    data_dir = tmp_path / "logs"
    broker = BrokerProcess(["--data-dir", str(data_dir)]).start()
    producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True, "log_level": 0})
    for i in range(20):
        producer.produce("snap", value=b"%d" % i, partition=0)
    assert producer.flush(15) == 0
    assert broker.stop() == 0
    snapshots = sorted(p.name for p in (data_dir / "snap-0").iterdir() if p.name.endswith(".snapshot"))
    assert snapshots == [f"{20:020d}.snapshot"]
    broker = BrokerProcess(["--data-dir", str(data_dir)]).start()
    try:
        again = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True, "log_level": 0})
        again.produce("snap", value=b"20", partition=0)
        assert again.flush(15) == 0
        assert _values(broker.bootstrap, "snap", 21) == [b"%d" % i for i in range(21)]
    finally:
        assert broker.stop() == 0
