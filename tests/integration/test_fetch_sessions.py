"""Fetch sessions (KIP-227) with real clients: kafka-python 3 opens one and, in the steady state, names
no partition it already follows while every record still arrives; librdkafka asks for none (epoch
-1) and is served sessionless."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

import trafka
from tests.waiting import eventually, throughout

from .clients import client_log_fixture

TIMEOUT = 20.0

kafka_python_logs = client_log_fixture("kafka", autouse=True)


@pytest.fixture
def broker():
    with trafka.Broker(topics={"t": 3}) as broker:
        yield broker


def _produce(broker, records: list[tuple[int, bytes]]) -> None:
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, enable_idempotence=False)
    for partition, value in records:
        producer.send("t", value, partition=partition)
    producer.flush(TIMEOUT)
    producer.close()


def _poll_into(consumer: KafkaConsumer, got: list[bytes]) -> None:
    for batch in consumer.poll(timeout_ms=200).values():
        got += [record.value for record in batch]


def _poll_until(consumer: KafkaConsumer, count: int) -> list[bytes]:
    got: list[bytes] = []
    eventually(lambda: _poll_into(consumer, got) or len(got) >= count, TIMEOUT, what=f"{count} records", interval=0)
    return got


def test_kafka_python_follows_three_partitions_through_one_session(broker):
    fetches = broker.intercept("Fetch", lambda request: None)
    first = [(p, f"a{p}-{n}".encode()) for p in range(3) for n in range(5)]
    _produce(broker, first)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, fetch_max_wait_ms=100)
    consumer.assign([TopicPartition("t", p) for p in range(3)])
    consumer.seek_to_beginning()
    try:
        assert sorted(_poll_until(consumer, 15)) == sorted(v for _, v in first)
        later = [(p, f"b{p}".encode()) for p in range(3)]
        _produce(broker, later)
        assert sorted(_poll_until(consumer, 3)) == sorted(v for _, v in later)
        idle: list[bytes] = []
        throughout(lambda: _poll_into(consumer, idle), 1.0)  # idle long polls
        assert idle == []
    finally:
        consumer.close()
    requests = [call.request for call in fetches.calls]
    assert requests[0].session_epoch == 0 and requests[0].session_id == 0  # full: opens the session
    incremental = [r for r in requests if r.session_epoch > 0]
    assert incremental, "kafka-python never fetched incrementally"
    assert len({r.session_id for r in incremental}) == 1  # one session all along
    assert [r.session_epoch for r in incremental] == list(range(1, len(incremental) + 1))
    named = [sum(len(t.partitions) for t in r.topics) for r in incremental]
    assert named[-3:] == [0, 0, 0]  # the steady state names nothing


def test_librdkafka_asks_for_no_session_and_is_served_without_one(broker):
    fetches = broker.intercept("Fetch", lambda request: None)
    _produce(broker, [(0, b"x")])
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap_servers, "group.id": "g", "auto.offset.reset": "earliest"}
    )
    consumer.assign([confluent_partition("t", 0)])
    try:
        message = eventually(lambda: consumer.poll(0.2), TIMEOUT, what="a record", interval=0)
        assert message.error() is None and message.value() == b"x"
    finally:
        consumer.close()
    assert all((call.request.session_id, call.request.session_epoch) == (0, -1) for call in fetches.calls)


def confluent_partition(topic: str, partition: int):
    from confluent_kafka import TopicPartition as ConfluentPartition

    return ConfluentPartition(topic, partition, 0)
