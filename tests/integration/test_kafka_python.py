"""The walking skeleton driven by kafka-python 3.0, unmodified and auto-negotiating.

Consumers have `group_id=None` and use `assign()`: these tests are about the log, not groups. Producers
set `enable_idempotence=False` (kafka-python 3 defaults to idempotent, which adds InitProducerId and
sequence checks); idempotent producers have their own suite.
"""

from __future__ import annotations

import time

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka import errors as Errors
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, OffsetSpec

from tests.waiting import eventually, throughout

from .clients import client_log_fixture

TIMEOUT = 10.0
CODECS = [None, "gzip", "snappy", "lz4", "zstd"]


kafka_python_logs = client_log_fixture("kafka", autouse=True)


@pytest.fixture
def admin(bootstrap):
    client = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    yield client
    client.close()


@pytest.fixture
def make_producer(bootstrap):
    producers = []

    def make(**configs) -> KafkaProducer:
        producer = KafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=False, **configs)
        producers.append(producer)
        return producer

    yield make
    for producer in producers:
        producer.close(timeout=5)


@pytest.fixture
def make_consumer(bootstrap):
    consumers = []

    def make(**configs) -> KafkaConsumer:
        configs.setdefault("auto_offset_reset", "earliest")
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False, **configs)
        consumers.append(consumer)
        return consumer

    yield make
    for consumer in consumers:
        consumer.close()


def create_topic(admin: KafkaAdminClient, name: str, partitions: int = 1, configs: dict | None = None):
    result = admin.create_topics({name: {"num_partitions": partitions, "configs": configs or {}}})
    [topic] = result["topics"]
    assert (topic["name"], topic["error_code"]) == (name, 0)
    return topic


def create_error_code(admin: KafkaAdminClient, name: str, **kwargs) -> int:
    result = admin.create_topics({name: {"num_partitions": 1}}, raise_errors=False, **kwargs)
    [topic] = result["topics"]
    return topic["error_code"]


def describe_topic(admin: KafkaAdminClient, name: str) -> dict:
    [topic] = admin.describe_topics([name])
    return topic


def consume(consumer: KafkaConsumer, count: int, timeout: float = TIMEOUT) -> list:
    records: list = []

    def read() -> bool:
        for batch in consumer.poll(timeout_ms=100).values():
            records.extend(batch)
        return len(records) >= count

    eventually(read, timeout, what=f"{count} records", interval=0, state=lambda: len(records))
    return records


def now_ms() -> int:
    return int(time.time() * 1000)


# --- admin: topics -------------------------------------------------------------------------------


def test_create_topic_shows_in_metadata(admin, topic_name):
    created = create_topic(admin, topic_name, partitions=3)
    assert created["num_partitions"] == 3
    assert created["replication_factor"] == 1

    assert topic_name in admin.list_topics()
    topic = describe_topic(admin, topic_name)
    assert topic["error_code"] == 0
    assert sorted(p["partition_index"] for p in topic["partitions"]) == [0, 1, 2]
    assert all(p["leader_id"] == 1 for p in topic["partitions"])


def test_create_existing_topic_is_topic_already_exists(admin, topic_name):
    create_topic(admin, topic_name)

    assert create_error_code(admin, topic_name) == Errors.TopicAlreadyExistsError.errno
    with pytest.raises(Errors.TopicAlreadyExistsError):
        admin.create_topics({topic_name: {"num_partitions": 1}})


@pytest.mark.parametrize("name", ["bad/name", "a" * 250])
def test_create_illegal_topic_name_is_invalid_topic(admin, name):
    assert create_error_code(admin, name) == Errors.InvalidTopicError.errno  # 17


def test_create_topic_validate_only_creates_nothing(admin, topic_name):
    assert create_error_code(admin, topic_name, validate_only=True) == 0

    assert topic_name not in admin.list_topics()
    assert describe_topic(admin, topic_name)["error_code"] == Errors.UnknownTopicOrPartitionError.errno


def test_delete_topic(admin, topic_name):
    create_topic(admin, topic_name, partitions=2)

    result = admin.delete_topics([topic_name])

    [deleted] = result["topics"]
    assert (deleted["name"], deleted["error_code"]) == (topic_name, 0)
    assert topic_name not in admin.list_topics()
    assert describe_topic(admin, topic_name)["error_code"] == Errors.UnknownTopicOrPartitionError.errno
    with pytest.raises(Errors.UnknownTopicOrPartitionError):
        admin.delete_topics([topic_name])


def test_create_partitions_grows_topic(admin, topic_name):
    create_topic(admin, topic_name, partitions=1)

    admin.create_partitions({topic_name: 4})

    assert sorted(p["partition_index"] for p in describe_topic(admin, topic_name)["partitions"]) == [0, 1, 2, 3]
    with pytest.raises(Errors.InvalidPartitionsError):
        admin.create_partitions({topic_name: 2})


# --- produce and consume -------------------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c or "none")
def test_produce_consume_every_codec(admin, make_producer, make_consumer, topic_name, codec):
    create_topic(admin, topic_name, partitions=2)
    base = now_ms() - 60_000
    per_partition = 6
    records = []
    for partition in (0, 1):
        for i in range(per_partition):
            records.append(
                {
                    "partition": partition,
                    "key": None if i == 1 else f"key-{partition}-{i}".encode(),
                    "value": None if i == 2 else f"value-{partition}-{i}-{codec}".encode() * (i + 1),
                    "headers": [("h", f"{i}".encode()), ("h", b"dup"), ("empty", b"")],
                    "timestamp_ms": base + partition * 1000 + i * 10,
                }
            )
    producer = make_producer(compression_type=codec, linger_ms=20)
    futures = [producer.send(topic_name, **record) for record in records]
    producer.flush(timeout=TIMEOUT)
    metadata = [f.get(timeout=TIMEOUT) for f in futures]
    assert [(m.partition, m.offset) for m in metadata] == [(p, o) for p in (0, 1) for o in range(per_partition)]

    consumer = make_consumer()
    partitions = [TopicPartition(topic_name, p) for p in (0, 1)]
    consumer.assign(partitions)
    consumer.seek_to_beginning(*partitions)
    got = consume(consumer, len(records))

    assert len(got) == len(records)
    for partition in (0, 1):
        received = [r for r in got if r.partition == partition]
        sent = [r for r in records if r["partition"] == partition]
        assert [r.offset for r in received] == list(range(per_partition))
        assert [r.key for r in received] == [s["key"] for s in sent]
        assert [r.value for r in received] == [s["value"] for s in sent]
        assert [list(r.headers) for r in received] == [s["headers"] for s in sent]
        assert [(r.timestamp_type, r.timestamp) for r in received] == [(0, s["timestamp_ms"]) for s in sent]


@pytest.mark.parametrize("acks", [0, 1, "all"])
def test_every_acks_level_delivers(admin, make_producer, make_consumer, topic_name, acks):
    create_topic(admin, topic_name)
    producer = make_producer(acks=acks)
    values = [f"acks-{acks}-{i}".encode() for i in range(5)]
    for value in values:
        metadata = producer.send(topic_name, value, partition=0).get(timeout=TIMEOUT)
        assert metadata.partition == 0

    consumer = make_consumer()
    consumer.assign([TopicPartition(topic_name, 0)])
    got = consume(consumer, len(values))

    assert [(r.offset, r.value) for r in got] == list(enumerate(values))


def test_producing_to_unknown_topic_auto_creates_it(admin, make_producer, topic_name):
    producer = make_producer()

    metadata = producer.send(topic_name, key=b"k", value=b"auto").get(timeout=TIMEOUT)

    assert (metadata.partition, metadata.offset) == (0, 0)
    topic = describe_topic(admin, topic_name)
    assert topic["error_code"] == 0
    assert [p["partition_index"] for p in topic["partitions"]] == [0]  # num.partitions=1


def test_long_poll_fetch_wakes_on_append(admin, make_producer, make_consumer, topic_name):
    create_topic(admin, topic_name)
    consumer = make_consumer(fetch_max_wait_ms=20_000, request_timeout_ms=40_000)
    producer = make_producer(linger_ms=0)
    tp = TopicPartition(topic_name, 0)
    consumer.assign([tp])
    consumer.seek(tp, 0)
    # Let a Fetch reach the broker and park on the empty partition.

    def nothing_to_read() -> None:
        assert consumer.poll(timeout_ms=100) == {}

    throughout(nothing_to_read, 1.0)

    started = time.monotonic()
    producer.send(topic_name, b"wake up", partition=0).get(timeout=TIMEOUT)
    got = consume(consumer, 1, timeout=8.0)
    elapsed = time.monotonic() - started

    assert [(r.offset, r.value) for r in got] == [(0, b"wake up")]
    assert elapsed < 5.0, f"message took {elapsed:.1f}s: the parked fetch did not wake on append"


# --- offsets -------------------------------------------------------------------------------------


def test_watermarks_and_offsets_for_times(admin, make_producer, make_consumer, topic_name):
    create_topic(admin, topic_name, partitions=2)
    base = now_ms() - 100_000
    stamps = [base + i * 1000 for i in range(5)]
    producer = make_producer(linger_ms=0)
    for ts in stamps:  # one batch each, so the index lookup has to find the right batch
        producer.send(topic_name, b"x", partition=0, timestamp_ms=ts).get(timeout=TIMEOUT)
    tp0, tp1 = TopicPartition(topic_name, 0), TopicPartition(topic_name, 1)
    consumer = make_consumer()

    assert consumer.beginning_offsets([tp0, tp1]) == {tp0: 0, tp1: 0}
    assert consumer.end_offsets([tp0, tp1]) == {tp0: 5, tp1: 0}

    def offset_for(ts: int):
        found = consumer.offsets_for_times({tp0: ts})[tp0]
        return None if found is None else (found.offset, found.timestamp)

    assert offset_for(0) == (0, stamps[0])
    assert offset_for(stamps[2]) == (2, stamps[2])
    assert offset_for(stamps[2] + 1) == (3, stamps[3])
    assert offset_for(stamps[4]) == (4, stamps[4])
    assert offset_for(stamps[4] + 1) is None  # after every record: none
    assert consumer.offsets_for_times({tp1: 0}) == {tp1: None}


def test_admin_list_partition_offsets(admin, make_producer, topic_name):
    create_topic(admin, topic_name)
    base = now_ms() - 100_000
    stamps = [base + 3000, base + 1000, base + 5000, base + 2000]  # the max is at offset 2
    # One compressed batch: the broker has to look at the records inside it.
    producer = make_producer(linger_ms=50, compression_type="gzip")
    futures = [producer.send(topic_name, b"v", partition=0, timestamp_ms=ts) for ts in stamps]
    producer.flush(timeout=TIMEOUT)
    assert [f.get(timeout=TIMEOUT).offset for f in futures] == [0, 1, 2, 3]
    tp = TopicPartition(topic_name, 0)

    def list_offset(spec):
        found = admin.list_partition_offsets({tp: spec})[tp]
        return found.offset, found.timestamp

    assert list_offset(OffsetSpec.EARLIEST)[0] == 0
    assert list_offset(OffsetSpec.LATEST)[0] == 4
    assert list_offset(OffsetSpec.MAX_TIMESTAMP) == (2, base + 5000)
    assert list_offset(base + 4000) == (2, base + 5000)
    assert list_offset(base + 6000) == (-1, -1)


def test_fetch_past_end_without_reset_raises_out_of_range(admin, make_producer, make_consumer, topic_name):
    create_topic(admin, topic_name)
    make_producer().send(topic_name, b"only", partition=0).get(timeout=TIMEOUT)
    consumer = make_consumer(auto_offset_reset="none")
    tp = TopicPartition(topic_name, 0)
    consumer.assign([tp])
    consumer.seek(tp, 100)

    def nothing_to_read() -> None:
        assert consumer.poll(timeout_ms=100) == {}

    with pytest.raises(Errors.OffsetOutOfRangeError):
        throughout(nothing_to_read, TIMEOUT)  # until the poll raises


def test_fetch_past_end_resets_to_earliest(admin, make_producer, make_consumer, topic_name):
    create_topic(admin, topic_name)
    producer = make_producer()
    for i in range(3):
        producer.send(topic_name, f"{i}".encode(), partition=0).get(timeout=TIMEOUT)
    consumer = make_consumer(auto_offset_reset="earliest")
    tp = TopicPartition(topic_name, 0)
    consumer.assign([tp])
    consumer.seek(tp, 100)

    got = consume(consumer, 3)

    assert [(r.offset, r.value) for r in got] == [(0, b"0"), (1, b"1"), (2, b"2")]


# --- configs and cluster -------------------------------------------------------------------------


def test_describe_topic_configs(admin, topic_name):
    create_topic(admin, topic_name, configs={"retention.ms": "3600000"})

    modified = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic_name)])
    everything = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic_name)], config_filter="all")

    assert list(modified["topic"][topic_name]) == ["retention.ms"]
    configs = everything["topic"][topic_name]
    assert configs["retention.ms"]["value"] == "3600000"
    assert configs["retention.ms"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"
    assert configs["cleanup.policy"]["value"] == "delete"
    assert configs["cleanup.policy"]["config_source"] == "DEFAULT_CONFIG"
    assert configs["max.message.bytes"]["value"] == "1048588"


def test_describe_broker_configs(admin):
    result = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "1")], config_filter="all")

    configs = result["broker"]["1"]
    assert configs["num.partitions"]["value"] == "1"
    assert configs["message.max.bytes"]["value"] == "1048588"
    assert configs["auto.create.topics.enable"]["value"] == "true"


def test_describe_cluster(admin, broker):
    cluster = admin.describe_cluster()

    assert cluster["cluster_id"]
    assert cluster["controller_id"] == 1
    assert [(b["broker_id"], b["host"], b["port"]) for b in cluster["brokers"]] == [(1, "127.0.0.1", broker.port)]
