"""Typed DataFrames from a Protobuf topic written by two schema versions (confluent-kafka's
ProtobufSerializer, message classes built at test time), read through the broker's registry."""

from __future__ import annotations

import datetime
import uuid

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from pyspark.errors import PySparkException
from pyspark.sql.types import (
    ArrayType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from tests.protobuf_classes import message_classes

from .test_typed import produce, read, registry_broker, typed_data_dir  # noqa: F401 - the fixtures

USER_V1 = """
syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
message User {
  string name = 1;
  int32 age = 2;
  Address home = 3;
  repeated string tags = 4;
  map<string, int64> scores = 5;
  Kind kind = 6;
  google.protobuf.Timestamp joined = 7;
  enum Kind { PERSON = 0; COMPANY = 1; }
}
message Address { string city = 1; int32 zip = 2; }
"""
USER_V2 = USER_V1.replace("int32 age = 2;", "int64 age = 2;\n  optional string email = 8;")


def test_a_protobuf_topic_written_by_two_versions_reads_as_the_latest(spark, registry_broker):
    topic = f"pusers-{uuid.uuid4().hex[:8]}"
    client = SchemaRegistryClient({"url": registry_broker.http_url})
    context = SerializationContext(topic, MessageField.VALUE)
    v1, v2 = message_classes({"shop/user.proto": USER_V1}), message_classes({"shop/user.proto": USER_V2})
    old = v1["shop.User"](
        name="ann", age=31, home=v1["shop.Address"](city="Oslo", zip=150), tags=["a", "b"], scores={"x": 2**40}, kind=1
    )
    old.joined.FromSeconds(1_700_000_000)
    new = v2["shop.User"](name="bo", age=2**40, email="bo@example.com")
    address = v1["shop.Address"](city="Rome")  # another message of the file: not the column's
    produce(
        registry_broker,
        topic,
        [
            ProtobufSerializer(v1["shop.User"], client)(old, context),
            ProtobufSerializer(v2["shop.User"], client)(new, context),
            ProtobufSerializer(v1["shop.Address"], client)(address, context),
            b"not protobuf",
        ],
    )
    # The column's message is the latest schema's (v2) first one, User.
    frame = read(spark, registry_broker, topic, valueFormat="protobuf")
    value = frame.schema["value"].dataType
    assert value == StructType(
        [
            StructField("name", StringType()),
            StructField("age", LongType()),
            StructField("email", StringType()),
            StructField("home", StructType([StructField("city", StringType()), StructField("zip", IntegerType())])),
            StructField("tags", ArrayType(StringType(), False)),
            StructField("scores", MapType(StringType(), LongType())),
            StructField("kind", StringType()),
            StructField("joined", TimestampType()),
        ]
    )
    rows = frame.orderBy("offset").select("value", "_corrupt").collect()
    first = rows[0]["value"].asDict(recursive=True)
    assert first == {
        "name": "ann",
        "age": 31,
        "home": {"city": "Oslo", "zip": 150},
        "tags": ["a", "b"],
        "scores": {"x": 2**40},
        "kind": "COMPANY",
        "joined": datetime.datetime.fromtimestamp(1_700_000_000),
        "email": None,
    }
    second = rows[1]["value"].asDict(recursive=True)
    # As Spark's from_protobuf: fields the payload leaves unset are null, repeated ones empty.
    assert second == {
        "name": "bo",
        "age": 2**40,
        "home": None,
        "tags": [],
        "scores": {},
        "kind": None,
        "joined": None,
        "email": "bo@example.com",
    }
    assert [r["_corrupt"] for r in rows[:2]] == [None, None]
    assert rows[2]["value"] is None and "shop.Address, not the column's shop.User" in rows[2]["_corrupt"]
    assert rows[3]["value"] is None and "magic byte" in rows[3]["_corrupt"]
    with pytest.raises(PySparkException, match="FAILFAST"):
        read(spark, registry_broker, topic, valueFormat="protobuf", mode="FAILFAST").collect()
    with pytest.raises(PySparkException, match="latest schema is PROTOBUF"):
        read(spark, registry_broker, topic, valueFormat="avro").collect()


def test_export_writes_typed_parquet_from_a_protobuf_topic(spark, registry_broker, tmp_path):
    import pyarrow.parquet as pq

    from trafka.app.cli.export import main

    topic = f"pexport-{uuid.uuid4().hex[:8]}"
    client = SchemaRegistryClient({"url": registry_broker.http_url})
    context = SerializationContext(topic, MessageField.VALUE)
    User = message_classes({"shop/user.proto": USER_V2})["shop.User"]
    produce(
        registry_broker,
        topic,
        [ProtobufSerializer(User, client)(User(name=n, age=i, tags=[n]), context) for i, n in enumerate(["ann", "bo"])],
    )
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
                "protobuf",
                "--schema-registry",
                registry_broker.http_url,
                "--master",
                "local[1]",
            ]
        )
        == 0
    )
    values = sorted(pq.read_table(output).column("value").to_pylist(), key=lambda v: v["name"])
    assert [(v["name"], v["age"], v["tags"], v["email"]) for v in values] == [
        ("ann", None, ["ann"], None),
        ("bo", 1, ["bo"], None),
    ]


def test_a_protobuf_stream_reads_typed_columns_and_ids_registered_after_the_start(spark, registry_broker, tmp_path):
    topic = f"pstream-{uuid.uuid4().hex[:8]}"
    client = SchemaRegistryClient({"url": registry_broker.http_url})
    context = SerializationContext(topic, MessageField.VALUE)
    v1, v2 = message_classes({"shop/user.proto": USER_V1}), message_classes({"shop/user.proto": USER_V2})
    produce(
        registry_broker,
        topic,
        [ProtobufSerializer(v1["shop.User"], client)(v1["shop.User"](name="ann", age=31), context)],
    )
    stream = (
        spark.readStream.format("trafka")
        .option("topic", topic)
        .option("bootstrap", registry_broker.bootstrap)
        .option("schemaRegistry", registry_broker.http_url)
        .option("valueFormat", "protobuf")
        .option("startingOffsets", "earliest")
        .load()
    )
    assert stream.schema["value"].dataType["age"].dataType == IntegerType()  # v1's, the latest at the start
    table = f"ptyped_{uuid.uuid4().hex[:8]}"
    query = (
        stream.writeStream.format("memory")
        .queryName(table)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    try:
        query.processAllAvailable()
        # v2, registered after the start, is fetched by id on the executor and read in v1's shape
        produce(
            registry_broker,
            topic,
            [
                ProtobufSerializer(v2["shop.User"], client)(
                    v2["shop.User"](name="bo", age=7, email="bo@example.com"), context
                ),
                b"raw",
            ],
        )
        query.processAllAvailable()
        rows = spark.table(table).orderBy("offset").select("value.name", "value.age", "_corrupt").collect()
        assert [tuple(r)[:2] for r in rows[:2]] == [("ann", 31), ("bo", 7)]
        assert [r["_corrupt"] is None for r in rows] == [True, True, False]
        assert "magic byte" in rows[2]["_corrupt"]
        assert query.exception() is None
    finally:
        query.stop()
