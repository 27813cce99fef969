"""The embedded broker's faults, seen by real clients: their retries and reconnects really happen.

`fail_next` is proven used up by the client (no failure left pending) and its requests had no effect
(each record is in the log exactly once); `pause` holds acknowledgements until `resume`;
`drop_connections` closes every connection and the clients carry on over new ones.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer
from kafka import KafkaConsumer, KafkaProducer

import trafka
from tests.waiting import eventually

from .clients import client_log_fixture

client_log = client_log_fixture("trafka.tests.faults", autouse=True)


@pytest.fixture
def broker():
    with trafka.Broker(topics={"t": 1}) as broker:
        yield broker


def _confluent_producer(broker, **extra) -> Producer:
    return Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0, "retry.backoff.ms": 20, **extra})


def _kafka_python_producer(broker, **extra) -> KafkaProducer:
    return KafkaProducer(
        bootstrap_servers=broker.bootstrap_servers, retries=5, retry_backoff_ms=20, linger_ms=0, **extra
    )


def test_confluent_retries_a_produce_refused_with_not_leader(broker):
    broker.fail_next("Produce", error="NOT_LEADER_OR_FOLLOWER", times=2)
    producer = _confluent_producer(broker)
    reports = []
    producer.produce("t", b"once", on_delivery=lambda err, msg: reports.append(err))
    assert producer.flush(15) == 0
    assert reports == [None]
    assert broker.pending_failures("Produce") == 0  # both failures answered a real request
    assert [r.value for r in broker.records("t")] == [b"once"]


def test_confluent_sees_the_error_when_its_retries_run_out(broker):
    broker.fail_next("Produce", error="NOT_LEADER_OR_FOLLOWER", times=1000)
    producer = _confluent_producer(broker, retries=2, **{"message.timeout.ms": 3000})
    reports = []
    producer.produce("t", b"lost", on_delivery=lambda err, msg: reports.append(err))
    producer.flush(15)
    assert len(reports) == 1 and reports[0] is not None
    assert broker.records("t") == []
    broker.fail_next("Produce", times=0)  # disarm
    assert broker.pending_failures("Produce") == 0


def test_kafka_python_retries_a_produce_refused_with_not_leader(broker):
    broker.fail_next("Produce", error="NOT_LEADER_OR_FOLLOWER", times=2)
    producer = _kafka_python_producer(broker)
    metadata = producer.send("t", b"once").get(timeout=15)
    producer.close(5)
    assert metadata.offset == 0
    assert broker.pending_failures("Produce") == 0
    assert [r.value for r in broker.records("t")] == [b"once"]


def test_kafka_python_retries_a_request_timed_out_error_by_code(broker):
    broker.fail_next(0, error=7, times=1)  # Produce by key, REQUEST_TIMED_OUT by code
    producer = _kafka_python_producer(broker)
    producer.send("t", b"x").get(timeout=15)
    producer.close(5)
    assert broker.pending_failures("Produce") == 0 and len(broker.records("t")) == 1


def test_consumers_retry_the_coordinator_lookup(broker):
    producer = _confluent_producer(broker)
    producer.produce("t", b"m")
    assert producer.flush(10) == 0
    broker.fail_next("FindCoordinator", error="COORDINATOR_NOT_AVAILABLE", times=3)
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap_servers, "group.id": "g1", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe(["t"])

    def record():
        polled = consumer.poll(0.5)
        return polled if polled is not None and not polled.error() else None

    message = eventually(record, 20, what="the record", interval=0)
    consumer.commit(asynchronous=False)
    consumer.close()
    assert message is not None and message.value() == b"m"
    assert broker.pending_failures("FindCoordinator") == 0
    assert broker.committed("g1") == {("t", 0): 1}

    broker.fail_next("FindCoordinator", error="COORDINATOR_NOT_AVAILABLE", times=2)
    kp = KafkaConsumer(
        "t",
        bootstrap_servers=broker.bootstrap_servers,
        group_id="g2",
        auto_offset_reset="earliest",
        consumer_timeout_ms=10000,
        enable_auto_commit=False,
    )
    values = [next(kp).value]
    kp.commit()
    kp.close()
    assert values == [b"m"] and broker.pending_failures("FindCoordinator") == 0
    assert broker.committed("g2") == {("t", 0): 1}


def test_kafka_python_retries_an_offset_commit_refused_by_a_moving_coordinator(broker):
    _kafka_python_producer(broker).send("t", b"m").get(timeout=15)
    consumer = KafkaConsumer(
        "t",
        bootstrap_servers=broker.bootstrap_servers,
        group_id="g3",
        auto_offset_reset="earliest",
        consumer_timeout_ms=10000,
        enable_auto_commit=False,
    )
    next(consumer)
    broker.fail_next("OffsetCommit", error="NOT_COORDINATOR", times=2)
    consumer.commit()  # kafka-python looks the coordinator up again and retries
    consumer.close()
    assert broker.pending_failures("OffsetCommit") == 0
    assert broker.committed("g3") == {("t", 0): 1}


@pytest.mark.parametrize("client", ["confluent", "kafka-python"])
def test_pause_holds_the_acknowledgement_until_resume(broker, client):
    if client == "confluent":
        producer = _confluent_producer(broker)
        producer.produce("t", b"warm")  # connected and metadata known before the pause
        assert producer.flush(10) == 0
        broker.pause()
        producer.produce("t", b"held")
        assert producer.flush(1.0) == 1  # still waiting for the broker
        assert len(broker.records("t")) == 1
        broker.resume()
        assert producer.flush(15) == 0
    else:
        producer = _kafka_python_producer(broker, request_timeout_ms=30000)
        producer.send("t", b"warm").get(timeout=10)
        broker.pause()
        future = producer.send("t", b"held")
        time.sleep(1.0)  # the client waits on the broker: nothing can arrive while paused
        assert not future.is_done
        assert len(broker.records("t")) == 1
        broker.resume()
        assert future.get(timeout=15).offset == 1
        producer.close(5)
    assert [r.value for r in broker.records("t")] == [b"warm", b"held"]


@pytest.mark.parametrize("client", ["confluent", "kafka-python"])
def test_clients_reconnect_after_the_broker_drops_every_connection(broker, client):
    if client == "confluent":
        producer = _confluent_producer(broker)
        producer.produce("t", b"before")
        assert producer.flush(10) == 0
        assert broker.drop_connections() >= 1
        producer.produce("t", b"after")
        assert producer.flush(15) == 0
    else:
        producer = _kafka_python_producer(broker)
        producer.send("t", b"before").get(timeout=10)
        assert broker.drop_connections() >= 1
        producer.send("t", b"after").get(timeout=15)
        producer.close(5)
    assert [r.value for r in broker.records("t")] == [b"before", b"after"]


def test_fail_next_refuses_what_it_cannot_fail(broker):
    with pytest.raises(trafka.testing.BrokerError, match="unknown or unserved API 'Nope'"):
        broker.fail_next("Nope")
    with pytest.raises(trafka.testing.BrokerError, match="cannot fail ApiVersions"):
        broker.fail_next("ApiVersions")
    with pytest.raises(trafka.testing.BrokerError, match="unknown Kafka error 'NOT_AN_ERROR'"):
        broker.fail_next("Produce", error="NOT_AN_ERROR")
