"""SASL with real clients: confluent-kafka SCRAM-SHA-512, kafka-python PLAIN, aiokafka SCRAM-SHA-256.

Each produces, consumes in a group and makes an admin call over a SASL_PLAINTEXT listener; SCRAM users
are created through AlterUserScramCredentials on the broker's PLAINTEXT listener.
"""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import NewTopic as AioNewTopic
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic as KpNewTopic
from kafka.errors import KafkaError as KpKafkaError

from tests.waiting import eventually

from .clients import TIMEOUT, consume_in_group, unique
from .secured import SCRAM_USERS, add_scram_users, sasl_config, secured_broker


@pytest.fixture(scope="module")
def sasl_listener(tmp_path_factory):
    config = sasl_config("PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0")
    with secured_broker(tmp_path_factory.mktemp("sasl"), config) as listeners:
        add_scram_users(listeners["PLAINTEXT"]["bootstrap"], SCRAM_USERS)
        yield listeners["SASL_PLAINTEXT"]


@pytest.fixture
def sasl_broker(sasl_listener):
    return sasl_listener["bootstrap"]


def confluent_sasl(user: str, password: str, mechanism: str = "SCRAM-SHA-512") -> dict:
    return {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mechanism,
        "sasl.username": user,
        "sasl.password": password,
    }


def test_confluent_kafka_with_scram_sha_512_produces_consumes_in_a_group_and_administers(sasl_broker):
    security = confluent_sasl("carol", SCRAM_USERS["carol"])
    topic = unique("scram512")
    admin = AdminClient({"bootstrap.servers": sasl_broker, "log_level": 0, **security})
    assert admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])[topic].result(TIMEOUT) is None
    described = admin.describe_user_scram_credentials(["carol"])["carol"].result(TIMEOUT)
    assert sorted(info.iterations for info in described.scram_credential_infos) == [4096, 4096]

    producer = Producer({"bootstrap.servers": sasl_broker, "log_level": 0, **security})
    for i in range(10):
        producer.produce(topic, value=f"v{i}".encode(), partition=i % 2)
    assert producer.flush(TIMEOUT) == 0

    seen = consume_in_group(sasl_broker, topic, 10, log_level=0, **security)
    assert sorted(seen) == sorted(f"v{i}".encode() for i in range(10))


def test_confluent_kafka_with_a_wrong_password_gets_kafka_s_authentication_error(sasl_broker):
    errors = []
    admin = AdminClient(
        {
            "bootstrap.servers": sasl_broker,
            "log_level": 0,
            "error_cb": errors.append,
            **confluent_sasl("carol", "wrong"),
        }
    )
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=3)

    def reported() -> bool:
        admin.poll(0.2)
        return bool(errors)

    eventually(reported, TIMEOUT, what="an error callback", interval=0)
    authentication = [e for e in errors if e.code() == KafkaError._AUTHENTICATION]
    assert authentication, errors
    assert (
        "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"
        in (authentication[0].str())
    )


def kafka_python_plain(user: str, password: str) -> dict:
    return {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": user,
        "sasl_plain_password": password,
    }


def test_kafka_python_with_plain_produces_consumes_in_a_group_and_administers(sasl_broker):
    security = kafka_python_plain("alice", "alice-secret")
    topic = unique("plain")
    admin = KafkaAdminClient(bootstrap_servers=sasl_broker, **security)
    try:
        admin.create_topics([KpNewTopic(topic, 1, 1)])
        assert topic in admin.list_topics()
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=sasl_broker, **security)
    for i in range(5):
        producer.send(topic, f"p{i}".encode())
    producer.flush(TIMEOUT)
    producer.close()
    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=sasl_broker,
        group_id=unique("g"),
        auto_offset_reset="earliest",
        consumer_timeout_ms=int(TIMEOUT * 1000),
        **security,
    )
    try:
        values = [next(consumer).value for _ in range(5)]
        consumer.commit()
    finally:
        consumer.close()
    assert values == [f"p{i}".encode() for i in range(5)]


def _refused_over_plain(listener, user: str, password: str) -> None:
    """kafka-python reports a refused bootstrap as a timeout; the broker's log names the reason."""
    broker = listener["process"]
    before = len(broker.output)
    with pytest.raises(KpKafkaError):
        KafkaAdminClient(
            bootstrap_servers=listener["bootstrap"], bootstrap_timeout_ms=2000, **kafka_python_plain(user, password)
        )
    assert any("Authentication failed: Invalid username or password" in line for line in broker.output[before:]), (
        broker.log()
    )


def test_kafka_python_plain_with_a_wrong_password_is_refused(sasl_listener):
    _refused_over_plain(sasl_listener, "alice", "nope")


def test_a_scram_user_cannot_log_in_over_plain_as_in_kafka(sasl_listener):
    _refused_over_plain(sasl_listener, "carol", SCRAM_USERS["carol"])


def test_aiokafka_with_scram_sha_256_produces_consumes_in_a_group_and_administers(sasl_broker):
    security = {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "SCRAM-SHA-256",
        "sasl_plain_username": "dave",
        "sasl_plain_password": SCRAM_USERS["dave"],
    }
    topic = unique("scram256")

    async def scenario() -> list[bytes]:
        admin = AIOKafkaAdminClient(bootstrap_servers=sasl_broker, **security)
        await admin.start()
        try:
            await admin.create_topics([AioNewTopic(topic, 1, 1)])
        finally:
            await admin.close()
        producer = AIOKafkaProducer(bootstrap_servers=sasl_broker, **security)
        await producer.start()
        try:
            for i in range(5):
                await producer.send_and_wait(topic, f"a{i}".encode())
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(
            topic, bootstrap_servers=sasl_broker, group_id=unique("g"), auto_offset_reset="earliest", **security
        )
        await consumer.start()
        try:
            values = []
            while len(values) < 5:
                batch = await asyncio.wait_for(consumer.getmany(timeout_ms=500), TIMEOUT)
                values += [m.value for messages in batch.values() for m in messages]
            await consumer.commit()
            return values
        finally:
            await consumer.stop()

    assert asyncio.run(scenario()) == [f"a{i}".encode() for i in range(5)]


def test_librdkafka_re_authenticates_before_its_session_expires(tmp_path):
    """KIP-368 with a real client: sessions of 2 s, a producer that lives through several of them."""
    config = sasl_config(
        "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0", security="connections_max_reauth_ms = 2000"
    )
    with secured_broker(tmp_path, config, ("--memory", "--log-level", "DEBUG")) as listeners:
        add_scram_users(listeners["PLAINTEXT"]["bootstrap"], SCRAM_USERS)
        bootstrap, broker = listeners["SASL_PLAINTEXT"]["bootstrap"], listeners["SASL_PLAINTEXT"]["process"]
        producer = Producer(
            {"bootstrap.servers": bootstrap, "log_level": 0, **confluent_sasl("carol", SCRAM_USERS["carol"])}
        )
        topic = unique("reauth")

        def reauthenticated() -> bool:
            if any("re-authenticated as User:carol" in line for line in broker.output):
                return True
            producer.produce(topic, b"x")
            assert producer.flush(TIMEOUT) == 0
            return False

        eventually(
            reauthenticated, TIMEOUT, what="a re-authentication", interval=0.2, state=lambda: broker.log()[-3000:]
        )
        producer.produce(topic, b"after")
        assert producer.flush(TIMEOUT) == 0
        assert not any("expired without re-authentication" in line for line in broker.output)
