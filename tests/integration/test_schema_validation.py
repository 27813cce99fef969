"""Broker-side schema id validation (confluent.value.schema.validation) with confluent-kafka's clients."""

from __future__ import annotations

import json
import struct
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from kafka.protocol.producer import ProduceRequest, ProduceResponse

from tests.batches import make_batch

from .broker import BrokerProcess
from .wire import WireClient

USER = json.dumps(
    {
        "type": "record",
        "name": "User",
        "namespace": "t",
        "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "int"}],
    }
)


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    process = BrokerProcess(["--data-dir", str(tmp_path_factory.mktemp("logs")), "--http-port", "0"]).start()
    yield process
    assert process.stop() == 0, process.log()


@pytest.fixture
def admin(broker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap})


@pytest.fixture
def registry(broker) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": broker.http_url})


def create_topic(admin: AdminClient, configs: dict[str, str]) -> str:
    name = f"validated-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(name, 1, 1, config=configs)])[name].result(30)
    return name


def produce(broker, topic: str, values: list[bytes], **config) -> list[KafkaError | None]:
    """Produce `values` as one batch, sent by the flush; the delivery error of each (None when delivered).

    The linger outlasts any loaded machine's enqueueing (a 50 ms linger split 31 records into two
    batches under CI's load); librdkafka's flush sends at once without waiting for it."""
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 30_000, **config})
    # The topic's partitions known first: records produced before are queued unassigned and may be
    # moved to the partition in two runs, which librdkafka then sends as two batches.
    producer.list_topics(topic, timeout=30)
    errors: list[KafkaError | None] = []
    for value in values:
        producer.produce(topic, value=value, on_delivery=lambda error, _: errors.append(error))
    assert producer.flush(60) == 0
    return errors


def stored(broker, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "watermarks"})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)
    finally:
        consumer.close()
    return high - low


def serialized(registry: SchemaRegistryClient, topic: str, users: list[dict]) -> list[bytes]:
    serializer = AvroSerializer(registry, USER)
    return [serializer(user, SerializationContext(topic, MessageField.VALUE)) for user in users]


def test_avro_serializer_records_are_accepted_and_raw_bytes_get_invalid_record(broker, admin, registry):
    topic = create_topic(admin, {"confluent.value.schema.validation": "true"})
    values = serialized(registry, topic, [{"name": f"u{i}", "age": i} for i in range(5)])
    assert produce(broker, topic, values) == [None] * 5

    (error,) = produce(broker, topic, [b"not avro"])
    assert error is not None and error.code() == KafkaError.INVALID_RECORD, error
    assert stored(broker, topic) == 5


def test_an_id_not_registered_under_the_subject_is_refused(broker, admin, registry):
    topic = create_topic(admin, {"confluent.value.schema.validation": "true"})
    other_id = registry.register_schema(f"other-{uuid.uuid4().hex[:8]}-value", Schema(USER, "AVRO"))
    unknown = b"\x00" + struct.pack(">i", 2**31 - 1) + b"\x02"
    for value in (b"\x00" + struct.pack(">i", other_id) + b"\x02", unknown):
        (error,) = produce(broker, topic, [value])
        assert error is not None and error.code() == KafkaError.INVALID_RECORD, error
    assert stored(broker, topic) == 0


def test_a_topic_without_the_config_is_unaffected(broker, admin):
    topic = create_topic(admin, {"retention.ms": "3600000"})
    assert produce(broker, topic, [b"raw", b"bytes"]) == [None, None]
    assert stored(broker, topic) == 2


@pytest.mark.parametrize("compression", ["gzip", "snappy", "lz4", "zstd"])
def test_compressed_batches_are_validated(broker, admin, registry, compression):
    topic = create_topic(admin, {"confluent.value.schema.validation": "true"})
    good = serialized(registry, topic, [{"name": "x" * 50, "age": i} for i in range(30)])
    assert produce(broker, topic, good, **{"compression.type": compression}) == [None] * 30
    errors = produce(broker, topic, [*good, b"raw"], **{"compression.type": compression})
    assert {e.code() for e in errors if e is not None} == {KafkaError.INVALID_RECORD}
    assert stored(broker, topic) == 30


def test_incremental_alter_configs_turns_validation_on_and_describe_configs_shows_it(broker, admin):
    topic = create_topic(admin, {})
    resource = ConfigResource(
        ConfigResource.Type.TOPIC,
        topic,
        incremental_configs=[
            ConfigEntry("confluent.value.schema.validation", "true", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    admin.incremental_alter_configs([resource])[resource].result(30)
    described = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)])
    entries = next(iter(described.values())).result(30)
    assert entries["confluent.value.schema.validation"].value == "true"
    assert entries["confluent.key.schema.validation"].value == "false"
    (error,) = produce(broker, topic, [b"raw"])
    assert error is not None and error.code() == KafkaError.INVALID_RECORD


def test_the_refusal_names_the_record_and_leaves_the_requests_other_partitions_alone(broker, admin, registry):
    validated = create_topic(admin, {"confluent.value.schema.validation": "true"})
    plain = create_topic(admin, {})
    schema_id = registry.register_schema(f"{validated}-value", Schema(USER, "AVRO"))
    good = b"\x00" + struct.pack(">i", schema_id) + b"\x06ann\x02"
    data = ProduceRequest.TopicProduceData
    request = ProduceRequest[9](
        transactional_id=None,
        acks=-1,
        timeout_ms=5000,
        topic_data=[
            data(
                name=validated,
                partition_data=[
                    data.PartitionProduceData(
                        index=0, records=make_batch([(1, None, good), (2, None, b"raw"), (3, None, good)])
                    )
                ],
            ),
            data(
                name=plain, partition_data=[data.PartitionProduceData(index=0, records=make_batch([(1, None, b"raw")]))]
            ),
        ],
    )
    with WireClient(broker.bootstrap) as wire:
        response = wire.request(request, ProduceResponse, 9)
    answers = {topic.name: topic.partition_responses[0] for topic in response.responses}
    refused = answers[validated]
    assert refused.error_code == KafkaError.INVALID_RECORD
    assert refused.error_message.startswith("One or more records have been rejected due to 1 record errors in total")
    assert "RecordError(batchIndex=1, message='the value has no schema id" in refused.error_message
    assert f"subject {validated}-value" in refused.error_message
    assert (answers[plain].error_code, answers[plain].base_offset) == (0, 0)
    assert stored(broker, validated) == 0 and stored(broker, plain) == 1


def test_validation_needs_no_http_listener_the_registry_being_the_schemas_topic(tmp_path):
    data_dir = str(tmp_path / "logs")
    with_http = BrokerProcess(["--data-dir", data_dir, "--http-port", "0"]).start()
    try:
        topic = create_topic(
            AdminClient({"bootstrap.servers": with_http.bootstrap}), {"confluent.value.schema.validation": "true"}
        )
        values = serialized(SchemaRegistryClient({"url": with_http.http_url}), topic, [{"name": "a", "age": 1}])
    finally:
        assert with_http.stop() == 0, with_http.log()
    without_http = BrokerProcess(["--data-dir", data_dir]).start()
    try:
        assert produce(without_http, topic, values) == [None]
        (error,) = produce(without_http, topic, [b"raw"])
        assert error is not None and error.code() == KafkaError.INVALID_RECORD
        assert stored(without_http, topic) == 1
    finally:
        assert without_http.stop() == 0, without_http.log()
