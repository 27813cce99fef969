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
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from tests.integration.broker import BrokerProcess

USER_V1 = json.dumps(
    {"type": "record", "name": "User", "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "int"}]}
)
USER_V2 = json.dumps(
    {
        "type": "record",
        "name": "User",
        "fields": [
            {"name": "name", "type": "string"},
            {"name": "age", "type": "long"},
            {"name": "email", "type": ["null", "string"], "default": None},
        ],
    }
)
ORDER_V1 = json.dumps(
    {
        "type": "object",
        "properties": {"id": {"type": "integer"}, "item": {"type": "string"}},
        "additionalProperties": False,
    }
)
ORDER_V2 = json.dumps(
    {
        "type": "object",
        "properties": {"id": {"type": "integer"}, "item": {"type": "string"}, "qty": {"type": "number"}},
        "additionalProperties": False,
    }
)


@pytest.fixture(scope="module")
def typed_data_dir(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("typed"))


@pytest.fixture(scope="module")
def registry_broker(typed_data_dir):
    process = BrokerProcess(["--data-dir", typed_data_dir, "--http-port", "0"]).start()
    yield process
    assert process.stop() == 0, process.log()


OLD_USERS = [{"name": "ann", "age": 31}]
NEW_USERS = [{"name": "cy", "age": 2**40, "email": "cy@example.com"}]


def users_topic(broker, prefix: str, extra: list[bytes] = ()):
    """A fresh topic holding OLD_USERS written with USER_V1, then NEW_USERS with USER_V2, then `extra`."""
    topic = f"{prefix}-{uuid.uuid4().hex[:8]}"
    client = SchemaRegistryClient({"url": broker.http_url})
    context = SerializationContext(topic, MessageField.VALUE)
    produce(
        broker,
        topic,
        [AvroSerializer(client, USER_V1)(u, context) for u in OLD_USERS]
        + [AvroSerializer(client, USER_V2)(u, context) for u in NEW_USERS]
        + list(extra),
    )
    return topic, client, context


def produce(broker, topic: str, serialized: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for value in serialized:
        producer.produce(topic, value=value)
    assert producer.flush(10) == 0


def read(spark, broker, topic: str, **options):
    return (
        spark.read.format("trafka")
        .option("topic", topic)
        .option("bootstrap", broker.bootstrap)
        .option("schemaRegistry", broker.http_url)
        .options(**options)
        .load()
    )


def test_an_avro_topic_written_by_two_versions_reads_as_the_latest(spark, registry_broker):
    topic = f"users-{uuid.uuid4().hex[:8]}"
    client = SchemaRegistryClient({"url": registry_broker.http_url})
    context = SerializationContext(topic, MessageField.VALUE)
    old = [{"name": "ann", "age": 31}, {"name": "bob", "age": 42}]
    new = [{"name": "cy", "age": 2**40, "email": "cy@example.com"}, {"name": "di", "age": 5, "email": None}]
    produce(
        registry_broker,
        topic,
        [AvroSerializer(client, USER_V1)(u, context) for u in old]
        + [AvroSerializer(client, USER_V2)(u, context) for u in new]
        + [b"not avro"],
    )

    frame = read(spark, registry_broker, topic, valueFormat="avro")
    assert frame.schema["value"].dataType == StructType(
        [
            StructField("name", StringType(), False),
            StructField("age", LongType(), False),
            StructField("email", StringType(), True),
        ]
    )
    rows = frame.orderBy("offset").select("value", "_corrupt").collect()
    assert [r["value"].asDict() if r["value"] else None for r in rows] == (
        [{**u, "email": None} for u in old] + new + [None]
    )
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
    produce(
        registry_broker,
        topic,
        [JSONSerializer(ORDER_V1, client)(o, context) for o in old]
        + [JSONSerializer(ORDER_V2, client)(o, context) for o in new],
    )
    frame = read(spark, registry_broker, topic, valueFormat="json")
    rows = frame.orderBy("offset").select("value.id", "value.item", "value.qty").collect()
    assert [tuple(r) for r in rows] == [(1, "pen", None), (2, "ink", 2.5)]


def test_protobuf_needs_a_registry_and_formats_are_known(spark, registry_broker, typed_data_dir):
    with pytest.raises(PySparkException, match="valueFormat protobuf needs the schemaRegistry option"):
        spark.read.format("trafka").option("topic", "x").option("bootstrap", registry_broker.bootstrap).option(
            "valueFormat", "protobuf"
        ).load()
    with pytest.raises(PySparkException, match="keyFormat protobuf needs the schemaRegistry option"):
        spark.read.format("trafka").option("topic", "x").option("data_dir", typed_data_dir).option(
            "keyFormat", "protobuf"
        ).load()
    with pytest.raises(PySparkException, match="valueFormat must be raw, avro, json or protobuf"):
        read(spark, registry_broker, "x", valueFormat="xml").collect()


def test_a_broker_read_without_schema_registry_decodes_with_the_brokers_own_schemas(spark, registry_broker):
    topic, client, context = users_topic(registry_broker, "own-users", extra=[b"\0\0\0\x03\xe7"])
    old, new = OLD_USERS, NEW_USERS

    frame = (
        spark.read.format("trafka")
        .option("topic", topic)
        .option("kafka.bootstrap.servers", registry_broker.bootstrap)
        .option("valueFormat", "avro")
        .load()
    )
    assert frame.schema["value"].dataType == StructType(
        [
            StructField("name", StringType(), False),
            StructField("age", LongType(), False),
            StructField("email", StringType(), True),
        ]
    )
    rows = frame.orderBy("offset").select("value", "_corrupt").collect()
    assert [r["value"].asDict() if r["value"] else None for r in rows] == [{**old[0], "email": None}, *new, None]
    assert (
        rows[-1]["_corrupt"]
        == f"value: schema id 999: not in the _schemas topic of the broker at {registry_broker.bootstrap}"
    )

    json_topic = f"own-orders-{uuid.uuid4().hex[:8]}"
    json_context = SerializationContext(json_topic, MessageField.VALUE)
    produce(
        registry_broker,
        json_topic,
        [JSONSerializer(ORDER_V2, client)({"id": 1, "item": "pen", "qty": 2.0}, json_context)],
    )
    frame = (
        spark.read.format("trafka")
        .option("topic", json_topic)
        .option("bootstrap", registry_broker.bootstrap)
        .option("valueFormat", "json")
        .load()
    )
    assert [tuple(r) for r in frame.select("value.id", "value.item", "value.qty").collect()] == [(1, "pen", 2.0)]

    with pytest.raises(PySparkException, match="subject 'nobody-value' is not in the _schemas topic of the broker at"):
        spark.read.format("trafka").option("topic", "nobody").option("bootstrap", registry_broker.bootstrap).option(
            "valueFormat", "avro"
        ).load()


def test_a_broker_without_schemas_says_so(spark, broker, produced, tmp_path, capsys):
    from trafka.app.cli.export import main

    with pytest.raises(PySparkException, match=f"the broker at {broker.bootstrap} has no _schemas topic"):
        spark.read.format("trafka").option("topic", "records").option("bootstrap", broker.bootstrap).option(
            "valueFormat", "avro"
        ).load()
    # export says so before Spark starts, and so for protobuf without --schema-registry
    for value_format, message in (("avro", "has no _schemas topic"), ("protobuf", "needs the schemaRegistry option")):
        assert (
            main(
                [
                    "--topic",
                    "records",
                    "--bootstrap",
                    broker.bootstrap,
                    "--output",
                    str(tmp_path / value_format),
                    "--value-format",
                    value_format,
                ]
            )
            == 2
        )
        assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_export_writes_typed_parquet(spark, registry_broker, tmp_path):
    import pyarrow.parquet as pq

    from trafka.app.cli.export import main

    topic = f"export-{uuid.uuid4().hex[:8]}"
    client = SchemaRegistryClient({"url": registry_broker.http_url})
    context = SerializationContext(topic, MessageField.VALUE)
    users = [{"name": "ann", "age": 31, "email": None}, {"name": "bo", "age": 7, "email": "b@x"}]
    produce(registry_broker, topic, [AvroSerializer(client, USER_V2)(u, context) for u in users])
    output = tmp_path / "out"
    assert (
        main(
            [
                "--topic",
                topic,
                "--bootstrap",
                registry_broker.bootstrap,
                "--output",
                str(output),
                "--value-format",
                "avro",
                "--schema-registry",
                registry_broker.http_url,
                "--master",
                "local[1]",
            ]
        )
        == 0
    )
    table = pq.read_table(output)
    assert table.schema.field("value").type.num_fields == 3
    assert sorted(table.column("value").to_pylist(), key=lambda v: v["name"]) == users
    # without --schema-registry, the broker's own _schemas
    assert (
        main(
            [
                "--topic",
                topic,
                "--bootstrap",
                registry_broker.bootstrap,
                "--output",
                str(tmp_path / "own"),
                "--value-format",
                "avro",
                "--master",
                "local[1]",
            ]
        )
        == 0
    )
    assert sorted(pq.read_table(tmp_path / "own").column("value").to_pylist(), key=lambda v: v["name"]) == users
    assert (
        main(
            [
                "--topic",
                topic,
                "--bootstrap",
                registry_broker.bootstrap,
                "--output",
                str(tmp_path / "csv"),
                "--format",
                "csv",
                "--value-format",
                "avro",
                "--schema-registry",
                registry_broker.http_url,
            ]
        )
        == 2
    )


USER_V3 = json.dumps(
    {
        "type": "record",
        "name": "User",
        "fields": [
            {"name": "name", "type": "string"},
            {"name": "age", "type": "long"},
            {"name": "email", "type": ["null", "string"], "default": None},
            {"name": "city", "type": "string", "default": "?"},
        ],
    }
)


def test_a_stream_reads_typed_columns_with_the_schema_of_query_start(spark, registry_broker, tmp_path):
    topic, client, context = users_topic(registry_broker, "stream-users")
    old, new = OLD_USERS, NEW_USERS
    stream = (
        spark.readStream.format("trafka")
        .option("topic", topic)
        .option("bootstrap", registry_broker.bootstrap)
        .option("schemaRegistry", registry_broker.http_url)
        .option("valueFormat", "avro")
        .option("startingOffsets", "earliest")
        .load()
    )
    latest_at_start = StructType(
        [
            StructField("name", StringType(), False),
            StructField("age", LongType(), False),
            StructField("email", StringType(), True),
        ]
    )
    assert stream.schema["value"].dataType == latest_at_start
    table = f"typed_{uuid.uuid4().hex[:8]}"
    query = (
        stream.writeStream.format("memory")
        .queryName(table)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    try:
        query.processAllAvailable()
        rows = spark.table(table).orderBy("offset").select("value", "_corrupt").collect()
        assert [r["value"].asDict() for r in rows] == [{**old[0], "email": None}, *new]

        # a version registered after the start is read in the start's shape (its extra field dropped)
        newer = [{"name": "di", "age": 5, "email": None, "city": "Oslo"}]
        produce(registry_broker, topic, [AvroSerializer(client, USER_V3)(u, context) for u in newer] + [b"raw"])
        query.processAllAvailable()
        rows = spark.table(table).orderBy("offset").select("value", "_corrupt").collect()
        assert [r["value"].asDict() if r["value"] else None for r in rows[2:]] == [
            {"name": "di", "age": 5, "email": None},
            None,
        ]
        assert [r["_corrupt"] is None for r in rows] == [True, True, True, False]
        assert query.exception() is None
    finally:
        query.stop()
    assert spark.table(table).schema["value"].dataType == latest_at_start


def test_a_data_dir_read_decodes_with_the_dirs_own_schemas(spark, registry_broker, typed_data_dir, tmp_path):
    import pyarrow.parquet as pq

    from trafka.app.cli.export import main

    topic, client, context = users_topic(registry_broker, "dir-users")
    old, new = OLD_USERS, NEW_USERS
    expected = [{**old[0], "email": None}, *new]

    frame = (
        spark.read.format("trafka")
        .option("topic", topic)
        .option("data_dir", typed_data_dir)
        .option("valueFormat", "avro")
        .load()
    )
    assert frame.schema["value"].dataType.names == ["name", "age", "email"]
    assert [r["value"].asDict() for r in frame.orderBy("offset").collect()] == expected

    output = tmp_path / "out"
    assert (
        main(
            [
                "--topic",
                topic,
                "--data-dir",
                typed_data_dir,
                "--output",
                str(output),
                "--value-format",
                "avro",
                "--master",
                "local[1]",
            ]
        )
        == 0
    )
    assert sorted(pq.read_table(output).column("value").to_pylist(), key=lambda v: v["name"]) == expected


def test_a_data_dir_without_the_subject_or_without_schemas_says_so(spark, registry_broker, typed_data_dir, broker):
    with pytest.raises(PySparkException, match="is not in the _schemas topic"):
        spark.read.format("trafka").option("topic", "nobody").option("data_dir", typed_data_dir).option(
            "valueFormat", "avro"
        ).load()
    with pytest.raises(PySparkException, match="has no _schemas topic"):
        spark.read.format("trafka").option("topic", "records").option("data_dir", broker.data_dir).option(
            "valueFormat", "json"
        ).load()


def test_a_stream_from_a_broker_without_schema_registry_uses_its_own_schemas(spark, registry_broker, tmp_path):
    topic = f"own-stream-{uuid.uuid4().hex[:8]}"
    client = SchemaRegistryClient({"url": registry_broker.http_url})
    context = SerializationContext(topic, MessageField.VALUE)
    produce(registry_broker, topic, [AvroSerializer(client, USER_V1)({"name": "ann", "age": 31}, context)])
    stream = (
        spark.readStream.format("trafka")
        .option("topic", topic)
        .option("bootstrap", registry_broker.bootstrap)
        .option("valueFormat", "avro")
        .option("startingOffsets", "earliest")
        .load()
    )
    assert stream.schema["value"].dataType == StructType(
        [StructField("name", StringType(), False), StructField("age", IntegerType(), False)]
    )
    table = f"own_{uuid.uuid4().hex[:8]}"
    query = (
        stream.writeStream.format("memory")
        .queryName(table)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    try:
        query.processAllAvailable()
        # a version registered after the start: its id is read from _schemas by the executor
        with_email = json.dumps(
            {
                **json.loads(USER_V1),
                "fields": [
                    *json.loads(USER_V1)["fields"],
                    {"name": "email", "type": ["null", "string"], "default": None},
                ],
            }
        )
        produce(
            registry_broker,
            topic,
            [AvroSerializer(client, with_email)({"name": "bo", "age": 7, "email": "b@x"}, context)],
        )
        query.processAllAvailable()
        rows = spark.table(table).orderBy("offset").select("value", "_corrupt").collect()
        assert [(r["value"].asDict(), r["_corrupt"]) for r in rows] == [
            ({"name": "ann", "age": 31}, None),
            ({"name": "bo", "age": 7}, None),
        ]
        assert query.exception() is None
    finally:
        query.stop()
