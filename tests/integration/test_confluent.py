"""The walking skeleton driven by confluent-kafka (librdkafka), unmodified and auto-negotiating.

Consumers use `assign()` with explicit offsets and never commit: these tests are about the log, not
groups (those have their own suite), so the group.id is there only because librdkafka wants one.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    Producer,
    TopicCollection,
    TopicPartition,
)
from confluent_kafka.admin import (
    AdminClient,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    ResourceType,
)

from tests.waiting import eventually, throughout

from .clients import client_log_fixture, confluent_admin

TIMEOUT = 10.0
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


rdkafka_logger = client_log_fixture("trafka.tests.librdkafka")


@pytest.fixture
def conf(bootstrap, rdkafka_logger) -> dict:
    return {"bootstrap.servers": bootstrap, "logger": rdkafka_logger}


@pytest.fixture
def admin(bootstrap, rdkafka_logger) -> AdminClient:
    return confluent_admin(bootstrap, rdkafka_logger)


def make_consumer(conf: dict, **extra) -> Consumer:
    return Consumer(
        {
            **conf,
            "group.id": "trafka-tests-unused",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            **extra,
        }
    )


def create_topic(admin: AdminClient, name: str, partitions: int = 1, config: dict | None = None) -> None:
    futures = admin.create_topics([NewTopic(name, num_partitions=partitions, config=config or {})])
    assert futures[name].result(TIMEOUT) is None


def describe_topic(admin: AdminClient, name: str):
    return admin.describe_topics(TopicCollection([name]))[name].result(TIMEOUT)


def create_error(admin: AdminClient, topic: NewTopic, **kwargs) -> KafkaError:
    future = admin.create_topics([topic], **kwargs)[topic.topic]
    with pytest.raises(KafkaException) as info:
        future.result(TIMEOUT)
    return info.value.args[0]


def produce_all(producer: Producer, records: list[dict]) -> list:
    """Produce `records` (kwargs of Producer.produce), flush, and return the delivered messages."""
    delivered: list = []
    errors: list = []

    def on_delivery(err, msg):
        (errors if err is not None else delivered).append(err or msg)

    for record in records:
        producer.produce(on_delivery=on_delivery, **record)
    assert producer.flush(TIMEOUT) == 0, "messages still queued after flush"
    assert errors == []
    assert len(delivered) == len(records)
    return delivered


def consume(consumer: Consumer, count: int, timeout: float = TIMEOUT) -> list:
    """Poll until `count` messages arrived (failing after `timeout`); raise on a consumer error."""
    messages: list = []

    def read() -> bool:
        msg = consumer.poll(0.1)
        if msg is not None and msg.error():
            raise KafkaException(msg.error())
        if msg is not None:
            messages.append(msg)
        return len(messages) >= count

    eventually(read, timeout, what=f"{count} messages", interval=0, state=lambda: len(messages))
    return messages


def now_ms() -> int:
    return int(time.time() * 1000)


# --- admin: topics -------------------------------------------------------------------------------


def test_create_topic_shows_in_metadata(admin, topic_name):
    create_topic(admin, topic_name, partitions=3)

    description = describe_topic(admin, topic_name)
    assert description.name == topic_name
    assert [p.id for p in description.partitions] == [0, 1, 2]
    assert all(p.leader.id == 1 and [r.id for r in p.replicas] == [1] for p in description.partitions)

    metadata = admin.list_topics(topic_name, timeout=TIMEOUT)
    assert metadata.topics[topic_name].error is None
    assert sorted(metadata.topics[topic_name].partitions) == [0, 1, 2]


def test_list_all_topics_includes_created_topic(admin, topic_name):
    create_topic(admin, topic_name, partitions=2)

    metadata = admin.list_topics(timeout=TIMEOUT)  # Metadata with a null topic list: every topic

    assert topic_name in metadata.topics
    assert len(metadata.topics[topic_name].partitions) == 2
    assert list(metadata.brokers) == [1]


def test_create_existing_topic_is_topic_already_exists(admin, topic_name):
    create_topic(admin, topic_name)

    error = create_error(admin, NewTopic(topic_name, num_partitions=1))

    assert error.code() == KafkaError.TOPIC_ALREADY_EXISTS


@pytest.mark.parametrize("name", ["bad/name", "a" * 250, ".."])
def test_create_illegal_topic_name_is_invalid_topic(admin, name):
    error = create_error(admin, NewTopic(name, num_partitions=1))

    assert error.code() == KafkaError.TOPIC_EXCEPTION  # INVALID_TOPIC_EXCEPTION, 17


def test_create_topic_validate_only_creates_nothing(admin, topic_name):
    futures = admin.create_topics([NewTopic(topic_name, num_partitions=2)], validate_only=True)
    assert futures[topic_name].result(TIMEOUT) is None

    with pytest.raises(KafkaException) as info:
        describe_topic(admin, topic_name)
    assert info.value.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART

    # ... and validate_only still reports errors a real create would hit.
    create_topic(admin, topic_name)
    error = create_error(admin, NewTopic(topic_name, num_partitions=1), validate_only=True)
    assert error.code() == KafkaError.TOPIC_ALREADY_EXISTS


def test_delete_topic(admin, topic_name):
    create_topic(admin, topic_name, partitions=2)

    assert admin.delete_topics([topic_name])[topic_name].result(TIMEOUT) is None

    with pytest.raises(KafkaException) as info:
        describe_topic(admin, topic_name)
    assert info.value.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART
    with pytest.raises(KafkaException) as info:
        admin.delete_topics([topic_name])[topic_name].result(TIMEOUT)
    assert info.value.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_recreated_topic_starts_empty(conf, admin, topic_name):
    create_topic(admin, topic_name)
    produce_all(Producer(conf), [{"topic": topic_name, "partition": 0, "value": b"old"}] * 3)
    admin.delete_topics([topic_name])[topic_name].result(TIMEOUT)

    create_topic(admin, topic_name)
    delivered = produce_all(Producer(conf), [{"topic": topic_name, "partition": 0, "value": b"new"}])

    assert delivered[0].offset() == 0
    consumer = make_consumer(conf)
    try:
        assert consumer.get_watermark_offsets(TopicPartition(topic_name, 0), timeout=TIMEOUT) == (0, 1)
        consumer.assign([TopicPartition(topic_name, 0, OFFSET_BEGINNING)])
        assert [(m.offset(), m.value()) for m in consume(consumer, 1)] == [(0, b"new")]
    finally:
        consumer.close()


def test_create_partitions_grows_topic(admin, topic_name):
    create_topic(admin, topic_name, partitions=1)

    futures = admin.create_partitions([NewPartitions(topic_name, 4)])
    assert futures[topic_name].result(TIMEOUT) is None

    assert [p.id for p in describe_topic(admin, topic_name).partitions] == [0, 1, 2, 3]
    with pytest.raises(KafkaException) as info:
        admin.create_partitions([NewPartitions(topic_name, 2)])[topic_name].result(TIMEOUT)
    assert info.value.args[0].code() == KafkaError.INVALID_PARTITIONS


# --- produce and consume -------------------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS)
def test_produce_consume_every_codec(conf, admin, topic_name, codec):
    create_topic(admin, topic_name, partitions=2)
    base = now_ms() - 60_000
    per_partition = 6
    records = []
    for partition in (0, 1):
        for i in range(per_partition):
            records.append(
                {
                    "topic": topic_name,
                    "partition": partition,
                    "key": None if i == 1 else f"key-{partition}-{i}".encode(),
                    "value": None if i == 2 else f"value-{partition}-{i}-{codec}".encode() * (i + 1),
                    "headers": [("h", f"{i}".encode()), ("h", b"dup"), ("empty", b""), ("null", None)],
                    "timestamp": base + partition * 1000 + i * 10,
                }
            )
    producer = Producer({**conf, "compression.type": codec, "linger.ms": 20})
    delivered = produce_all(producer, records)
    assert sorted((m.partition(), m.offset()) for m in delivered) == [
        (p, o) for p in (0, 1) for o in range(per_partition)
    ]

    consumer = make_consumer(conf)
    try:
        consumer.assign([TopicPartition(topic_name, p, OFFSET_BEGINNING) for p in (0, 1)])
        messages = consume(consumer, len(records))
    finally:
        consumer.close()

    assert len(messages) == len(records)
    for partition in (0, 1):
        got = [m for m in messages if m.partition() == partition]
        sent = [r for r in records if r["partition"] == partition]
        assert [m.offset() for m in got] == list(range(per_partition))
        assert [m.key() for m in got] == [r["key"] for r in sent]
        assert [m.value() for m in got] == [r["value"] for r in sent]
        assert [m.headers() for m in got] == [r["headers"] for r in sent]
        assert [m.timestamp() for m in got] == [(1, r["timestamp"]) for r in sent]  # 1: CreateTime


@pytest.mark.parametrize("acks", [0, 1, "all"])
def test_every_acks_level_delivers(conf, admin, topic_name, acks):
    create_topic(admin, topic_name)
    producer = Producer({**conf, "acks": acks, "linger.ms": 0})
    values = [f"acks-{acks}-{i}".encode() for i in range(5)]
    for value in values:
        producer.produce(topic_name, value, partition=0)
        producer.flush(TIMEOUT)  # one request per record: acks=0 sends fire-and-forget requests
    assert len(producer) == 0

    consumer = make_consumer(conf)
    try:
        consumer.assign([TopicPartition(topic_name, 0, OFFSET_BEGINNING)])
        messages = consume(consumer, len(values))
    finally:
        consumer.close()

    assert [(m.offset(), m.value()) for m in messages] == list(enumerate(values))


def test_producing_to_unknown_topic_auto_creates_it(conf, admin, topic_name):
    producer = Producer(conf)

    delivered = produce_all(producer, [{"topic": topic_name, "key": b"k", "value": b"auto"}])

    assert (delivered[0].partition(), delivered[0].offset()) == (0, 0)
    assert [p.id for p in describe_topic(admin, topic_name).partitions] == [0]  # num.partitions=1


def test_long_poll_fetch_wakes_on_append(conf, admin, topic_name):
    create_topic(admin, topic_name)
    consumer = make_consumer(conf, **{"fetch.wait.max.ms": 20_000, "socket.timeout.ms": 60_000})
    producer = Producer({**conf, "linger.ms": 0})
    try:
        consumer.assign([TopicPartition(topic_name, 0, 0)])
        # Let a Fetch reach the broker and park on the empty partition.

        def nothing_to_read() -> None:
            assert consumer.poll(0.1) is None

        throughout(nothing_to_read, 1.0)
        started = time.monotonic()
        produce_all(producer, [{"topic": topic_name, "partition": 0, "value": b"wake up"}])
        messages = consume(consumer, 1, timeout=8.0)
        elapsed = time.monotonic() - started
    finally:
        consumer.close()

    assert [(m.offset(), m.value()) for m in messages] == [(0, b"wake up")]
    assert elapsed < 5.0, f"message took {elapsed:.1f}s: the parked fetch did not wake on append"


# --- offsets -------------------------------------------------------------------------------------


def test_watermarks_and_offsets_for_times(conf, admin, topic_name):
    create_topic(admin, topic_name, partitions=2)
    base = now_ms() - 100_000
    stamps = [base + i * 1000 for i in range(5)]
    producer = Producer({**conf, "linger.ms": 0})
    for ts in stamps:  # one batch each, so the index lookup has to find the right batch
        produce_all(producer, [{"topic": topic_name, "partition": 0, "value": b"x", "timestamp": ts}])

    consumer = make_consumer(conf)
    try:
        assert consumer.get_watermark_offsets(TopicPartition(topic_name, 0), timeout=TIMEOUT) == (0, 5)
        assert consumer.get_watermark_offsets(TopicPartition(topic_name, 1), timeout=TIMEOUT) == (0, 0)

        def offset_for(ts: int) -> int:
            [result] = consumer.offsets_for_times([TopicPartition(topic_name, 0, ts)], timeout=TIMEOUT)
            assert result.error is None
            return result.offset

        assert offset_for(0) == 0
        assert offset_for(stamps[0]) == 0
        assert offset_for(stamps[2]) == 2
        assert offset_for(stamps[2] + 1) == 3
        assert offset_for(stamps[4]) == 4
        assert offset_for(stamps[4] + 1) == -1  # after every record: none
    finally:
        consumer.close()


def test_admin_list_offsets(conf, admin, topic_name):
    create_topic(admin, topic_name)
    base = now_ms() - 100_000
    stamps = [base + 3000, base + 1000, base + 5000, base + 2000]  # the max is at offset 2
    # One compressed batch: the broker has to look at the records inside it.
    producer = Producer({**conf, "linger.ms": 50, "compression.type": "zstd"})
    produce_all(producer, [{"topic": topic_name, "partition": 0, "value": b"v", "timestamp": ts} for ts in stamps])
    tp = TopicPartition(topic_name, 0)

    def list_offset(spec):
        return admin.list_offsets({tp: spec})[tp].result(TIMEOUT)

    assert list_offset(OffsetSpec.earliest()).offset == 0
    assert list_offset(OffsetSpec.latest()).offset == 4
    latest_max = list_offset(OffsetSpec.max_timestamp())
    assert (latest_max.offset, latest_max.timestamp) == (2, base + 5000)
    by_time = list_offset(OffsetSpec.for_timestamp(base + 4000))
    assert (by_time.offset, by_time.timestamp) == (2, base + 5000)
    assert list_offset(OffsetSpec.for_timestamp(base + 6000)).offset == -1


def test_fetch_past_end_with_reset_error_reports_out_of_range(conf, admin, topic_name):
    create_topic(admin, topic_name)
    produce_all(Producer(conf), [{"topic": topic_name, "partition": 0, "value": b"only"}])

    consumer = make_consumer(conf, **{"auto.offset.reset": "error"})
    try:
        consumer.assign([TopicPartition(topic_name, 0, 100)])
        msg = eventually(lambda: consumer.poll(0.1), TIMEOUT, what="an answer to the fetch past the end", interval=0)
    finally:
        consumer.close()

    assert msg is not None and msg.error() is not None
    assert msg.error().code() == KafkaError._AUTO_OFFSET_RESET
    assert "out of range" in str(msg.error()).lower()


def test_fetch_past_end_resets_to_earliest(conf, admin, topic_name):
    create_topic(admin, topic_name)
    produce_all(Producer(conf), [{"topic": topic_name, "partition": 0, "value": f"{i}".encode()} for i in range(3)])

    consumer = make_consumer(conf, **{"auto.offset.reset": "earliest"})
    try:
        consumer.assign([TopicPartition(topic_name, 0, 100)])
        messages = consume(consumer, 3)
    finally:
        consumer.close()

    assert [(m.offset(), m.value()) for m in messages] == [(0, b"0"), (1, b"1"), (2, b"2")]


# --- configs and cluster -------------------------------------------------------------------------


def test_describe_topic_configs(admin, topic_name):
    create_topic(admin, topic_name, config={"retention.ms": "3600000"})

    resource = ConfigResource(ResourceType.TOPIC, topic_name)
    configs = admin.describe_configs([resource])[resource].result(TIMEOUT)

    assert configs["retention.ms"].value == "3600000"
    assert configs["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert not configs["retention.ms"].is_default
    assert configs["cleanup.policy"].value == "delete"
    assert configs["cleanup.policy"].source == ConfigSource.DEFAULT_CONFIG.value
    assert configs["cleanup.policy"].is_default
    assert configs["max.message.bytes"].value == "1048588"


def test_describe_unknown_topic_configs_fails(admin, topic_name):
    resource = ConfigResource(ResourceType.TOPIC, topic_name)
    with pytest.raises(KafkaException) as info:
        admin.describe_configs([resource])[resource].result(TIMEOUT)
    assert info.value.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART


def test_describe_broker_configs(admin):
    resource = ConfigResource(ResourceType.BROKER, "1")
    configs = admin.describe_configs([resource])[resource].result(TIMEOUT)

    assert configs["num.partitions"].value == "1"
    assert configs["message.max.bytes"].value == "1048588"
    assert configs["auto.create.topics.enable"].value == "true"


def test_describe_cluster(admin, bootstrap):
    cluster = admin.describe_cluster(request_timeout=TIMEOUT).result(TIMEOUT)

    assert cluster.cluster_id
    assert cluster.controller is not None and cluster.controller.id == 1
    assert [(n.id, f"{n.host}:{n.port}") for n in cluster.nodes] == [(1, bootstrap)]


def test_internal_topics_cannot_be_created_or_auto_created(bootstrap):
    from confluent_kafka import KafkaException, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    client = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    with pytest.raises(KafkaException, match="INVALID_REQUEST|prohibited"):
        client.create_topics([NewTopic("__consumer_offsets", 1, 1)])["__consumer_offsets"].result(10)
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 0, "message.timeout.ms": 2000})
    failures = []
    producer.produce("__cluster_metadata", b"x", on_delivery=lambda err, msg: failures.append(err))
    producer.flush(10)
    assert failures and failures[0] is not None
    assert "__cluster_metadata" not in client.list_topics(timeout=10).topics


def test_authorized_operations_are_reported_when_asked_as_without_an_authorizer(bootstrap, topic_name):
    from confluent_kafka import TopicCollection
    from confluent_kafka.admin import AclOperation, AdminClient, NewTopic

    client = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    client.create_topics([NewTopic(topic_name, 1, 1)])[topic_name].result(10)
    described = client.describe_topics(TopicCollection([topic_name]), include_authorized_operations=True)[
        topic_name
    ].result(10)
    assert {AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE} <= set(described.authorized_operations)
    cluster = client.describe_cluster(include_authorized_operations=True).result(10)
    assert AclOperation.DESCRIBE in set(cluster.authorized_operations)
    plain = client.describe_topics(TopicCollection([topic_name]))[topic_name].result(10)
    assert not plain.authorized_operations
