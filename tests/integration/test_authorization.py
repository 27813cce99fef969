"""Authorization with two users (alice, bob) and a super user (admin) over SASL/PLAIN, ACLs made with
confluent-kafka's admin API: each denied case answered with Kafka's error for that resource."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from tests.waiting import eventually

from .clients import TIMEOUT, unique
from .secured import secured_broker
from .test_sasl_wire import authenticate, handshake
from .wire import WireClient

USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    + " ".join(f'user_{n}="{p}"' for n, p in USERS.items())
    + ";"
)
CONFIG = f"""
[server]
listeners = "SASL_PLAINTEXT://127.0.0.1:0"

[security]
sasl_enabled_mechanisms = "PLAIN"
authorizer_class_name = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
super_users = "User:admin"

[security.listener_name.sasl_plaintext]
plain_sasl_jaas_config = '{JAAS}'
"""


def conf(user: str) -> dict:
    return {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": user,
        "sasl.password": USERS[user],
        "log_level": 0,
    }


def allow(
    principal, resource_type, name, operation, pattern=ResourcePatternType.LITERAL, permission=AclPermissionType.ALLOW
):
    return AclBinding(resource_type, name, pattern, f"User:{principal}", "*", operation, permission)


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory):
    with secured_broker(tmp_path_factory.mktemp("authz"), CONFIG) as listeners:
        address = listeners["SASL_PLAINTEXT"]["bootstrap"]
        admin = AdminClient({"bootstrap.servers": address, **conf("admin")})
        for name in ("orders", "team-public", "team-secret"):
            assert admin.create_topics([NewTopic(name, 1, 1)])[name].result(TIMEOUT) is None
        acls = [
            allow("alice", ResourceType.TOPIC, "orders", AclOperation.WRITE),
            allow("alice", ResourceType.TOPIC, "orders", AclOperation.READ),
            allow("bob", ResourceType.TOPIC, "orders", AclOperation.READ),
            allow("alice", ResourceType.GROUP, "alice-", AclOperation.READ, ResourcePatternType.PREFIXED),
            allow("alice", ResourceType.TOPIC, "alice-", AclOperation.CREATE, ResourcePatternType.PREFIXED),
            allow("alice", ResourceType.TOPIC, "alice-", AclOperation.DESCRIBE, ResourcePatternType.PREFIXED),
            allow("alice", ResourceType.TRANSACTIONAL_ID, "alice-tx", AclOperation.WRITE),
            allow("bob", ResourceType.TOPIC, "team-", AclOperation.ALL, ResourcePatternType.PREFIXED),
            allow("bob", ResourceType.TOPIC, "team-secret", AclOperation.WRITE, permission=AclPermissionType.DENY),
        ]
        for future in admin.create_acls(acls).values():
            assert future.result(TIMEOUT) is None
        yield address


def produce_error(bootstrap: str, user: str, topic: str, **extra):
    errors = []
    producer = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 5000, **conf(user), **extra})
    producer.produce(topic, b"x", on_delivery=lambda err, msg: errors.append(err))
    producer.flush(TIMEOUT)
    assert len(errors) == 1
    return errors[0]


def test_producing_needs_write_on_the_topic(bootstrap):
    assert produce_error(bootstrap, "alice", "orders") is None
    assert produce_error(bootstrap, "bob", "orders").code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_deny_overrides_a_prefixed_allow(bootstrap):
    assert produce_error(bootstrap, "bob", "team-public") is None
    assert produce_error(bootstrap, "bob", "team-secret").code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def consume_error(bootstrap: str, user: str, group: str):
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest", **conf(user)}
    )
    consumer.subscribe(["orders"])
    try:
        return eventually(lambda: consumer.poll(0.5), TIMEOUT, what="a record or an error", interval=0).error()
    finally:
        consumer.close()


def test_reading_in_a_group_needs_read_on_the_group(bootstrap):
    assert produce_error(bootstrap, "alice", "orders") is None  # a record to read, whatever ran before
    assert consume_error(bootstrap, "alice", unique("alice-g")) is None
    assert consume_error(bootstrap, "bob", unique("bob-g")).code() == KafkaError.GROUP_AUTHORIZATION_FAILED


def test_creating_topics_needs_create(bootstrap):
    mine, theirs = unique("alice-t"), unique("bob-t")
    alice = AdminClient({"bootstrap.servers": bootstrap, **conf("alice")})
    assert alice.create_topics([NewTopic(mine, 1, 1)])[mine].result(TIMEOUT) is None
    bob = AdminClient({"bootstrap.servers": bootstrap, **conf("bob")})
    with pytest.raises(KafkaException) as refused:
        bob.create_topics([NewTopic(theirs, 1, 1)])[theirs].result(TIMEOUT)
    assert refused.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_a_transactional_producer_needs_its_transactional_id(bootstrap):
    alice = Producer({"bootstrap.servers": bootstrap, "transactional.id": "alice-tx", **conf("alice")})
    alice.init_transactions(TIMEOUT)
    bob = Producer({"bootstrap.servers": bootstrap, "transactional.id": "bob-tx", **conf("bob")})
    with pytest.raises(KafkaException) as refused:
        bob.init_transactions(TIMEOUT)
    assert refused.value.args[0].code() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def test_metadata_leaves_out_topics_a_user_may_not_describe(bootstrap):
    alice = set(AdminClient({"bootstrap.servers": bootstrap, **conf("alice")}).list_topics(timeout=TIMEOUT).topics)
    bob = set(AdminClient({"bootstrap.servers": bootstrap, **conf("bob")}).list_topics(timeout=TIMEOUT).topics)
    assert "orders" in alice and "team-public" not in alice and "team-secret" not in alice
    assert {"orders", "team-public", "team-secret"} <= bob


def sasl_wire(bootstrap: str, user: str) -> WireClient:
    client = WireClient(bootstrap)
    handshake(client, "PLAIN")
    assert authenticate(client, f"\0{user}\0{USERS[user]}".encode()).error_code == 0
    return client


def test_auto_creation_needs_create_and_authorized_operations_are_real(bootstrap):
    request = MetadataRequest[10](
        topics=[
            MetadataRequest[10].MetadataRequestTopic(name=n, topic_id=None)
            for n in ("orders", "bob-auto", "alice-auto")
        ],
        allow_auto_topic_creation=True,
        include_cluster_authorized_operations=True,
        include_topic_authorized_operations=True,
    )
    with sasl_wire(bootstrap, "bob") as client:
        bob = {t.name: t for t in client.request(request, MetadataResponse, 10).topics}
    assert bob["bob-auto"].error_code == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert bob["alice-auto"].error_code == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert set(bob["orders"].authorized_operations) == {AclOperation.READ.value, AclOperation.DESCRIBE.value}
    with sasl_wire(bootstrap, "alice") as client:
        creating = {t.name: t for t in client.request(request, MetadataResponse, 10).topics}
        alice = client.request(request, MetadataResponse, 10)
    # alice may create alice-* topics: auto-created, the creating request answered as Kafka 4.2 answers it
    assert creating["alice-auto"].error_code == KafkaError.UNKNOWN_TOPIC_OR_PART
    found = {t.name: t for t in alice.topics}
    assert found["alice-auto"].error_code == 0, "alice may create alice-* topics: auto-created"
    assert found["bob-auto"].error_code == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert set(found["orders"].authorized_operations) == {
        AclOperation.READ.value,
        AclOperation.WRITE.value,
        AclOperation.DESCRIBE.value,
    }
    assert alice.authorized_operations == set()


def test_acl_admin_needs_the_cluster_and_describe_delete_work_for_a_super_user(bootstrap):
    bob = AdminClient({"bootstrap.servers": bootstrap, **conf("bob")})
    binding = allow("bob", ResourceType.TOPIC, "orders", AclOperation.WRITE)
    with pytest.raises(KafkaException) as refused:
        bob.create_acls([binding])[binding].result(TIMEOUT)
    assert refused.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    admin = AdminClient({"bootstrap.servers": bootstrap, **conf("admin")})
    assert admin.create_acls([binding])[binding].result(TIMEOUT) is None
    assert produce_error(bootstrap, "bob", "orders") is None
    flt = AclBindingFilter(
        ResourceType.TOPIC,
        "orders",
        ResourcePatternType.LITERAL,
        "User:bob",
        None,
        AclOperation.WRITE,
        AclPermissionType.ANY,
    )
    assert admin.describe_acls(flt).result(TIMEOUT) == [binding]
    assert admin.delete_acls([flt])[flt].result(TIMEOUT) == [binding]
    assert admin.describe_acls(flt).result(TIMEOUT) == []


def test_acls_are_kept_in_the_metadata_log_across_a_restart(tmp_path):
    from trafka.adapters.filesystem.metadata_records import AccessControlEntryRecord

    from .test_sasl_storage import metadata_records

    data_dir = tmp_path / "logs"
    binding = allow("alice", ResourceType.TOPIC, "kept", AclOperation.READ)
    with secured_broker(tmp_path, CONFIG, ("--data-dir", str(data_dir))) as listeners:
        admin = AdminClient({"bootstrap.servers": listeners["SASL_PLAINTEXT"]["bootstrap"], **conf("admin")})
        assert admin.create_acls([binding])[binding].result(TIMEOUT) is None
    with secured_broker(tmp_path, CONFIG, ("--data-dir", str(data_dir))) as listeners:
        admin = AdminClient({"bootstrap.servers": listeners["SASL_PLAINTEXT"]["bootstrap"], **conf("admin")})
        flt = AclBindingFilter(
            ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY
        )
        assert admin.describe_acls(flt).result(TIMEOUT) == [binding]
    [record] = [r for r in metadata_records(data_dir) if isinstance(r, AccessControlEntryRecord)]
    assert (record.resource_name, record.principal, record.operation) == ("kept", "User:alice", 3)


def test_metadata_by_topic_id_or_v0_does_not_reveal_an_undescribable_topic(bootstrap):
    with sasl_wire(bootstrap, "admin") as client:
        everything = client.request(
            MetadataRequest[12](
                topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False
            ),
            MetadataResponse,
            12,
        )
    secret_id = {t.name: t.topic_id for t in everything.topics}["team-secret"]
    by_id = MetadataRequest[12](
        topics=[MetadataRequest[12].MetadataRequestTopic(name=None, topic_id=secret_id)],
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=False,
    )
    with sasl_wire(bootstrap, "alice") as client:
        [refused] = client.request(by_id, MetadataResponse, 12).topics
        v0 = client.request(
            MetadataRequest[0](topics=[MetadataRequest[0].MetadataRequestTopic(name="team-secret")]),
            MetadataResponse,
            0,
        )
    assert (refused.error_code, refused.name) == (KafkaError.TOPIC_AUTHORIZATION_FAILED, None)
    assert [(t.name, t.error_code) for t in v0.topics] == [("team-secret", KafkaError.TOPIC_AUTHORIZATION_FAILED)]


def test_fetch_and_list_offsets_answer_a_denied_topic_per_topic_and_serve_the_others(bootstrap):
    from kafka.protocol.consumer import FetchRequest, FetchResponse, ListOffsetsRequest, ListOffsetsResponse

    assert produce_error(bootstrap, "alice", "orders") is None
    Topic, Partition = FetchRequest[11].FetchTopic, FetchRequest[11].FetchTopic.FetchPartition
    fetch = FetchRequest[11](
        replica_id=-1,
        max_wait_ms=100,
        min_bytes=1,
        max_bytes=1 << 20,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        rack_id="",
        forgotten_topics_data=[],
        topics=[
            Topic(
                topic=t,
                partitions=[
                    Partition(
                        partition=0,
                        current_leader_epoch=-1,
                        fetch_offset=0,
                        log_start_offset=-1,
                        partition_max_bytes=1 << 20,
                    )
                ],
            )
            for t in ("orders", "team-secret")
        ],
    )
    LTopic = ListOffsetsRequest[5].ListOffsetsTopic
    offsets = ListOffsetsRequest[5](
        replica_id=-1,
        isolation_level=0,
        topics=[
            LTopic(
                name=t,
                partitions=[LTopic.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1, timestamp=-1)],
            )
            for t in ("orders", "team-secret")
        ],
    )
    with sasl_wire(bootstrap, "alice") as client:
        fetched = {t.topic: t.partitions[0] for t in client.request(fetch, FetchResponse, 11).responses}
        listed = {t.name: t.partitions[0] for t in client.request(offsets, ListOffsetsResponse, 5).topics}
    assert fetched["orders"].error_code == 0 and fetched["orders"].records
    assert fetched["team-secret"].error_code == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert not fetched["team-secret"].records
    assert fetched["team-secret"].high_watermark == -1, "nothing read for a refused topic"
    assert listed["orders"].error_code == 0 and listed["orders"].offset >= 1
    assert listed["team-secret"].error_code == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert (listed["team-secret"].offset, listed["team-secret"].timestamp) == (-1, -1)


def test_a_consumer_without_read_gets_topic_authorization_failed_for_each_partition(bootstrap):
    """librdkafka's 0119: with WRITE (so DESCRIBE) and no READ, each assigned partition's Fetch is refused
    and poll() reports TOPIC_AUTHORIZATION_FAILED for it. The refused partitions carry empty records:
    null ones fail librdkafka's parse of flexible Fetch versions, and it never surfaces the error."""
    from confluent_kafka import TopicPartition

    admin = AdminClient({"bootstrap.servers": bootstrap, **conf("admin")})
    topic = unique("write-only")
    assert admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(TIMEOUT) is None
    for future in admin.create_acls([allow("alice", ResourceType.TOPIC, topic, AclOperation.WRITE)]).values():
        future.result(TIMEOUT)
    consumer = Consumer({"bootstrap.servers": bootstrap, **conf("alice"), "group.id": "alice-0119"})
    try:
        consumer.assign([TopicPartition(topic, 0, 0), TopicPartition(topic, 1, 0)])
        refused: dict[int, int] = {}

        def both_refused() -> bool:
            message = consumer.poll(0.2)
            if message is not None and message.error() is not None:
                if message.error().code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:
                    refused[message.partition()] = refused.get(message.partition(), 0) + 1
            return len(refused) == 2

        eventually(both_refused, TIMEOUT, what="both partitions refused", interval=0, state=lambda: refused)
    finally:
        consumer.close()
    assert set(refused) == {0, 1}


def test_electing_leaders_needs_alter_on_the_cluster(bootstrap):
    from confluent_kafka import ElectionType, TopicPartition

    partitions = [TopicPartition("orders", 0)]
    bob = AdminClient({"bootstrap.servers": bootstrap, **conf("bob")})
    with pytest.raises(KafkaException) as refused:
        bob.elect_leaders(ElectionType.PREFERRED, partitions).result(TIMEOUT)
    assert refused.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    admin = AdminClient({"bootstrap.servers": bootstrap, **conf("admin")})
    (error,) = admin.elect_leaders(ElectionType.PREFERRED, partitions).result(TIMEOUT).values()
    assert error.code() == KafkaError.ELECTION_NOT_NEEDED
