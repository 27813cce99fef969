"""Hostile clients against authorization (issue 27, rows 3 and 12), answered as Kafka answers them.

- Row 3: bob, with WRITE on the topic only, appends a transactional batch under alice's producer id,
  with no transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED, Kafka's handleProduceRequest) or
  with his own (INVALID_PRODUCER_ID_MAPPING, KIP-890's verification): nothing is appended, and alice's
  next record is hers, committed and read back.
- Row 12: an ACL's host is compared with the client's address as Kafka renders it
  (`0:0:0:0:0:0:0:1`); the compressed form `::1` matches too.
"""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.producer import EndTxnRequest, EndTxnResponse, ProduceRequest, ProduceResponse

from ..batches import make_batch
from .clients import TIMEOUT
from .secured import secured_broker
from .test_authorization import CONFIG, allow, conf, sasl_wire
from .test_authorization_per_resource import add_partitions, init_producer

TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
INVALID_PRODUCER_ID_MAPPING = 49
TOPIC_AUTHORIZATION_FAILED = 29


def create(admin: AdminClient, topics: list[str], acls: list[AclBinding]) -> None:
    for name, future in admin.create_topics([NewTopic(n, 2, 1) for n in topics]).items():
        assert future.result(TIMEOUT) is None, name
    for future in admin.create_acls(acls).values():
        assert future.result(TIMEOUT) is None


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory):
    with secured_broker(tmp_path_factory.mktemp("hostile-authz"), CONFIG) as listeners:
        address = listeners["SASL_PLAINTEXT"]["bootstrap"]
        create(
            AdminClient({"bootstrap.servers": address, **conf("admin")}),
            ["ledger"],
            [
                allow("alice", ResourceType.TOPIC, "ledger", AclOperation.ALL),
                allow("alice", ResourceType.TRANSACTIONAL_ID, "alice-tx", AclOperation.WRITE),
                allow("bob", ResourceType.TOPIC, "ledger", AclOperation.WRITE),
                allow("bob", ResourceType.TRANSACTIONAL_ID, "bob-tx", AclOperation.WRITE),
            ],
        )
        yield address


def produce(client, transactional_id, pid: int, epoch: int, sequence: int, value: bytes, topic: str = "ledger"):
    batch = make_batch(
        [(0, None, value)], producer_id=pid, producer_epoch=epoch, base_sequence=sequence, transactional=True
    )
    request = ProduceRequest[8](
        transactional_id=transactional_id, acks=-1, timeout_ms=5000, topic_data=[(topic, [(0, batch)])]
    )
    answer = client.request(request, ProduceResponse, 8)
    return answer.responses[0].partition_responses[0]


def test_a_transactional_batch_under_another_producers_id_is_refused(bootstrap):
    with sasl_wire(bootstrap, "alice") as alice, sasl_wire(bootstrap, "bob") as bob:
        pid, epoch = init_producer(alice, "alice-tx")
        assert add_partitions(alice, "alice-tx", pid, epoch, {"ledger": [0]}) == {("ledger", 0): 0}
        assert produce(alice, "alice-tx", pid, epoch, 0, b"alice-0").error_code == 0

        forged = produce(bob, None, pid, epoch, 1, b"forged")
        assert forged.error_code == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        forged_batch = make_batch(
            [(0, None, b"forged")], producer_id=pid, producer_epoch=epoch, base_sequence=1, transactional=True
        )
        both = ProduceRequest[8](  # with a plain batch beside it: the whole request is refused, as Kafka's
            transactional_id=None,
            acks=-1,
            timeout_ms=5000,
            topic_data=[("ledger", [(0, forged_batch), (1, make_batch([(0, None, b"plain")]))])],
        )
        answers = bob.request(both, ProduceResponse, 8).responses[0].partition_responses
        assert [(a.index, a.error_code) for a in answers] == [
            (0, TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
            (1, TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        ]
        bob_pid, bob_epoch = init_producer(bob, "bob-tx")
        assert add_partitions(bob, "bob-tx", bob_pid, bob_epoch, {"ledger": [0]}) == {("ledger", 0): 0}
        assert produce(bob, "bob-tx", pid, epoch, 1, b"forged").error_code == INVALID_PRODUCER_ID_MAPPING
        assert bob.request(MetadataRequest[1](topics=[]), MetadataResponse, 1).brokers, "bob is still served"

        mine = produce(alice, "alice-tx", pid, epoch, 1, b"alice-1")
        assert mine.error_code == 0 and mine.base_offset == 1, "alice's record is not taken for a duplicate"
        ended = alice.request(
            EndTxnRequest[1](transactional_id="alice-tx", producer_id=pid, producer_epoch=epoch, committed=True),
            EndTxnResponse,
            1,
        )
        assert ended.error_code == 0
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "alice-reader",
            "isolation.level": "read_committed",
            **conf("admin"),
        }
    )
    try:
        consumer.assign([TopicPartition("ledger", 0, 0)])
        values = [m.value() for m in consumer.consume(10, TIMEOUT) if not m.error()]
    finally:
        consumer.close()
    assert values == [b"alice-0", b"alice-1"]


V6_CONFIG = CONFIG.replace("SASL_PLAINTEXT://127.0.0.1:0", "SASL_PLAINTEXT://[::1]:0")


@pytest.fixture(scope="module")
def v6_bootstrap(tmp_path_factory):
    with secured_broker(tmp_path_factory.mktemp("hostile-authz-v6"), V6_CONFIG, listen=False) as listeners:
        port = listeners["SASL_PLAINTEXT"]["port"]
        admin = AdminClient({"bootstrap.servers": f"[::1]:{port}", **conf("admin")})

        def deny(topic: str, host: str) -> AclBinding:
            return AclBinding(
                ResourceType.TOPIC,
                topic,
                ResourcePatternType.LITERAL,
                "User:alice",
                host,
                AclOperation.WRITE,
                AclPermissionType.DENY,
            )

        create(
            admin,
            ["v6-kafka-form", "v6-short-form", "v6-free"],
            [
                allow("alice", ResourceType.TOPIC, "v6-", AclOperation.ALL, ResourcePatternType.PREFIXED),
                deny("v6-kafka-form", "0:0:0:0:0:0:0:1"),
                deny("v6-short-form", "::1"),
            ],
        )
        yield f"::1:{port}"


def test_ipv6_host_acls_match_kafkas_rendering_and_the_compressed_form(v6_bootstrap):
    with sasl_wire(v6_bootstrap, "alice") as alice:
        errors = {}
        for topic in ("v6-kafka-form", "v6-short-form", "v6-free"):
            batch = make_batch([(0, None, b"x")])
            request = ProduceRequest[8](
                transactional_id=None, acks=1, timeout_ms=5000, topic_data=[(topic, [(0, batch)])]
            )
            errors[topic] = alice.request(request, ProduceResponse, 8).responses[0].partition_responses[0].error_code
    assert errors == {
        "v6-kafka-form": TOPIC_AUTHORIZATION_FAILED,
        "v6-short-form": TOPIC_AUTHORIZATION_FAILED,
        "v6-free": 0,
    }
