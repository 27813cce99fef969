"""Batch reads with `spark.read.format("trafka")`, through both sources, against what was produced."""

from __future__ import annotations

import pytest
from confluent_kafka import TopicPartition
from pyspark.errors import PySparkException
from pyspark.sql.types import ArrayType, BinaryType, IntegerType, LongType, StringType, StructType, TimestampType

from .records import APPEND_TIME_TOPIC, TIMEOUT, TOPIC, admin, collect, create_topic

SPARK_KAFKA_COLUMNS = [
    ("key", BinaryType()),
    ("value", BinaryType()),
    ("topic", StringType()),
    ("partition", IntegerType()),
    ("offset", LongType()),
    ("timestamp", TimestampType()),
    ("timestampType", IntegerType()),
]


def read(spark, broker, kind: str, **options):
    return spark.read.format("trafka").options(**broker.source(kind), **options).load()


def test_every_field_of_every_record(spark, broker, produced, source_kind):
    frame = read(spark, broker, source_kind, topic=TOPIC, includeHeaders="true")
    assert collect(frame) == produced.rows


def test_schema_is_sparks_kafka_schema(spark, broker, produced, source_kind):
    plain = read(spark, broker, source_kind, topic=TOPIC)
    assert [(f.name, f.dataType, f.nullable) for f in plain.schema.fields] == [
        (name, kind, True) for name, kind in SPARK_KAFKA_COLUMNS
    ]
    headers = read(spark, broker, source_kind, topic=TOPIC, includeHeaders="true").schema["headers"].dataType
    assert isinstance(headers, ArrayType)
    assert isinstance(headers.elementType, StructType)
    assert [(f.name, f.dataType) for f in headers.elementType.fields] == [
        ("key", StringType()),
        ("value", BinaryType()),
    ]
    assert collect(plain) == {r[:7] + (None,) for r in produced.rows}


def test_offset_ranges(spark, broker, produced, source_kind):
    ends = produced.end_offsets()
    frame = read(
        spark,
        broker,
        source_kind,
        topic=TOPIC,
        includeHeaders="true",
        startingOffsets=f'{{"{TOPIC}":{{"0":5,"1":-2,"2":{ends[2] - 3}}}}}',
        endingOffsets=f'{{"{TOPIC}":{{"0":40,"1":7,"2":-1}}}}',
    )
    assert collect(frame) == produced.of(0, 5, 40) | produced.of(1, 0, 7) | produced.of(2, ends[2] - 3, ends[2])


def test_chunks_of_large_partitions(spark, broker, produced, source_kind):
    frame = read(spark, broker, source_kind, topic=TOPIC, includeHeaders="true", maxRecordsPerPartition="70")
    ends = produced.end_offsets()
    assert frame.rdd.getNumPartitions() == sum(-(-end // 70) for end in ends.values())
    assert collect(frame) == produced.rows


def test_log_append_time(spark, broker, produced, source_kind):
    rows = read(spark, broker, source_kind, topic=APPEND_TIME_TOPIC).collect()
    assert {(r.topic, r.partition, r.offset, bytes(r.key), bytes(r.value)) for r in rows} == produced.append_time_rows
    assert {r.timestampType for r in rows} == {1}
    assert all(r.timestamp.year >= 2024 for r in rows), "the broker's append time, not the producer's"


@pytest.fixture(scope="module")
def trimmed(broker):
    """A topic whose log start was moved into the middle of its only batch (DeleteRecords)."""
    from confluent_kafka import Producer

    create_topic(broker.bootstrap, "trimmed", 1)
    producer = Producer(
        {"bootstrap.servers": broker.bootstrap, "linger.ms": 50, "compression.type": "lz4", "log_level": 0}
    )
    for n in range(10):
        producer.produce("trimmed", value=b"v%d" % n, partition=0)
    assert producer.flush(TIMEOUT) == 0
    client = admin(broker.bootstrap)
    futures = client.delete_records([TopicPartition("trimmed", 0, 4)], request_timeout=TIMEOUT)
    for future in futures.values():
        assert future.result(TIMEOUT).low_watermark == 4
    return "trimmed"


def test_records_below_the_log_start_are_skipped(spark, broker, trimmed, source_kind):
    rows = read(spark, broker, source_kind, topic=trimmed).collect()
    assert sorted((r.offset, bytes(r.value)) for r in rows) == [(n, b"v%d" % n) for n in range(4, 10)]


def test_a_start_below_the_log_start_is_data_loss(spark, broker, trimmed, source_kind):
    with pytest.raises(PySparkException, match="below its log start offset 4"):
        read(spark, broker, source_kind, topic=trimmed, startingOffsets='{"trimmed":{"0":1}}').collect()
    rows = read(
        spark, broker, source_kind, topic=trimmed, startingOffsets='{"trimmed":{"0":1}}', failOnDataLoss="false"
    ).collect()
    assert sorted(r.offset for r in rows) == list(range(4, 10))


def test_bad_options_name_the_problem(spark, broker, produced):
    with pytest.raises(PySparkException, match="startingOffsets can't be latest"):
        read(spark, broker, "data_dir", topic=TOPIC, startingOffsets="latest").collect()
    with pytest.raises(PySparkException, match="does not exist"):
        read(spark, broker, "bootstrap", topic="no-such-topic").collect()


@pytest.fixture(scope="module")
def transactional(broker):
    """A topic holding a committed and an aborted transaction: each ends in a control batch."""
    from confluent_kafka import Producer

    create_topic(broker.bootstrap, "transactional", 1)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "spark-suite", "log_level": 0})
    producer.init_transactions(TIMEOUT)
    for outcome in ("commit", "abort", "commit"):
        producer.begin_transaction()
        for n in range(3):
            producer.produce("transactional", key=outcome.encode(), value=b"%d" % n, partition=0)
        producer.flush(TIMEOUT)
        getattr(producer, f"{outcome}_transaction")(TIMEOUT)
    return "transactional"


def test_control_batches_are_skipped(spark, broker, transactional, source_kind):
    """Markers take offsets 3, 7 and 11 but are no rows; aborted records are read, as Spark's Kafka
    source reads them by default (read_uncommitted)."""
    rows = read(spark, broker, source_kind, topic=transactional).collect()
    assert sorted((r.offset, bytes(r.key), bytes(r.value)) for r in rows) == [
        (o, outcome, b"%d" % n)
        for outcome, first in ((b"commit", 0), (b"abort", 4), (b"commit", 8))
        for n, o in enumerate(range(first, first + 3))
    ]


def test_read_committed_through_the_broker(spark, broker, transactional):
    rows = read(
        spark, broker, "bootstrap", topic=transactional, **{"kafka.isolation.level": "read_committed"}
    ).collect()
    assert sorted(r.offset for r in rows) == [0, 1, 2, 8, 9, 10]
