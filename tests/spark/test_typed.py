"""Typed DataFrames: Avro and JSON Schema topics read into columns through the broker's registry."""

from __future__ import annotations

import json
import uuid

import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from pyspark.errors import PySparkException
from pyspark.sql.types import LongType, StringType, StructField, StructType

from tests.integration.broker import BrokerProcess

USER_V1 = json.dumps({"type": "record", "name": "User", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": "int"}]})
USER_V2 = json.dumps({"type": "record", "name": "User", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": "long"},
    {"name": "email", "type": ["null", "string"], "default": None}]})
ORDER_V1 = json.dumps({"type": "object", "properties": {"id": {"type": "integer"}, "item": {"type": "string"}},
                       "additionalProperties": False})
ORDER_V2 = json.dumps({"type": "object", "properties": {"id": {"type": "integer"}, "item": {"type": "string"},
                                                        "qty": {"type": "number"}}, "additionalProperties": False})


@pytest.fixture(scope="module")
def registry_broker(tmp_path_factory):
    process = BrokerProcess(["--data-dir", str(tmp_path_factory.mktemp("typed")), "--http-port", "0"]).start()
    yield process
    assert process.stop() == 0, process.log()


def produce(broker, topic: str, serialized: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for value in serialized:
        producer.produce(topic, value=value)
    assert producer.flush(10) == 0


def read(spark, broker, topic: str, **options):
    return (spark.read.format("trafka").option("topic", topic).option("bootstrap", broker.bootstrap)
            .option("schemaRegistry", broker.http_url).options(**options).load())


def test_an_avro_topic_written_by_two_versions_reads_as_the_latest(spark, registry_broker):
    topic = f"users-{uuid.uuid4().hex[:8]}"
    client = SchemaRegistryClient({"url": registry_broker.http_url})
    context = SerializationContext(topic, MessageField.VALUE)
    old = [{"name": "ann", "age": 31}, {"name": "bob", "age": 42}]
    new = [{"name": "cy", "age": 2**40, "email": "cy@example.com"}, {"name": "di", "age": 5, "email": None}]
    produce(registry_broker, topic, [AvroSerializer(client, USER_V1)(u, context) for u in old]
            + [AvroSerializer(client, USER_V2)(u, context) for u in new] + [b"not avro"])

    frame = read(spark, registry_broker, topic, valueFormat="avro")
    assert frame.schema["value"].dataType == StructType([
        StructField("name", StringType(), False), StructField("age", LongType(), False),
        StructField("email", StringType(), True)])
    rows = frame.orderBy("offset").select("value", "_corrupt").collect()
    assert [r["value"].asDict() if r["value"] else None for r in rows] == (
        [{**u, "email": None} for u in old] + new + [None])
    assert [r["_corrupt"] for r in rows[:-1]] == [None] * 4
    assert "magic byte" in rows[-1]["_corrupt"]
    with pytest.raises(PySparkException, match="FAILFAST"):
        read(spark, registry_broker, topic, valueFormat="avro", mode="FAILFAST").collect()


def test_a_json_schema_topic_reads_into_columns(spark, registry_broker):
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    client = SchemaRegistryClient({"url": registry_broker.http_url})
    context = SerializationContext(topic, MessageField.VALUE)
    old = [{"id": 1, "item": "pen"}]
    new = [{"id": 2, "item": "ink", "qty": 2.5}]
    produce(registry_broker, topic, [JSONSerializer(ORDER_V1, client)(o, context) for o in old]
            + [JSONSerializer(ORDER_V2, client)(o, context) for o in new])
    frame = read(spark, registry_broker, topic, valueFormat="json")
    rows = frame.orderBy("offset").select("value.id", "value.item", "value.qty").collect()
    assert [tuple(r) for r in rows] == [(1, "pen", None), (2, "ink", 2.5)]


def test_formats_need_a_registry_and_a_known_format(spark, registry_broker):
    with pytest.raises(PySparkException, match="schemaRegistry"):
        spark.read.format("trafka").option("topic", "x").option("bootstrap", registry_broker.bootstrap) \
            .option("valueFormat", "avro").load()
    with pytest.raises(PySparkException, match="valueFormat must be raw, avro, json or protobuf"):
        read(spark, registry_broker, "x", valueFormat="xml").collect()


def test_export_writes_typed_parquet(spark, registry_broker, tmp_path):
    import pyarrow.parquet as pq

    from trafka.app.export import main

    topic = f"export-{uuid.uuid4().hex[:8]}"
    client = SchemaRegistryClient({"url": registry_broker.http_url})
    context = SerializationContext(topic, MessageField.VALUE)
    users = [{"name": "ann", "age": 31, "email": None}, {"name": "bo", "age": 7, "email": "b@x"}]
    produce(registry_broker, topic, [AvroSerializer(client, USER_V2)(u, context) for u in users])
    output = tmp_path / "out"
    assert main(["--topic", topic, "--bootstrap", registry_broker.bootstrap, "--output", str(output),
                 "--value-format", "avro", "--schema-registry", registry_broker.http_url, "--master", "local[1]"]) == 0
    table = pq.read_table(output)
    assert table.schema.field("value").type.num_fields == 3
    assert sorted(table.column("value").to_pylist(), key=lambda v: v["name"]) == users
    assert main(["--topic", topic, "--bootstrap", registry_broker.bootstrap, "--output", str(tmp_path / "csv"),
                 "--format", "csv", "--value-format", "avro", "--schema-registry", registry_broker.http_url]) == 2
