"""Structured Streaming with `spark.readStream.format("trafka")`, without Spark's Kafka connector."""

from __future__ import annotations

from confluent_kafka import Producer
from confluent_kafka.admin import NewPartitions

from tests.waiting import eventually

from .records import TIMEOUT, TOPIC, admin, collect, create_topic


def produce(bootstrap: str, topic: str, partition: int, values: range) -> set:
    """Rows as `collect` shows them, for records produced now with a header and a fixed timestamp."""
    rows = set()
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "compression.type": "zstd", "log_level": 0})
    for n in values:

        def delivered(err, msg, n=n):
            assert err is None, err
            rows.add(
                (
                    topic,
                    msg.partition(),
                    msg.offset(),
                    b"k%d" % n,
                    b"v%d" % n,
                    1_700_000_000_000 + n,
                    0,
                    (("n", b"%d" % n),),
                )
            )

        producer.produce(
            topic,
            key=b"k%d" % n,
            value=b"v%d" % n,
            partition=partition,
            timestamp=1_700_000_000_000 + n,
            headers=[("n", b"%d" % n)],
            on_delivery=delivered,
        )
    assert producer.flush(TIMEOUT) == 0
    return rows


def test_a_stream_picks_up_records_produced_after_it_started(spark, broker, source_kind):
    topic = f"stream-{source_kind.replace('_', '-')}"
    create_topic(broker.bootstrap, topic, 2)
    produce(broker.bootstrap, topic, 0, range(5))  # before the start: not read (startingOffsets=latest)
    stream = (
        spark.readStream.format("trafka")
        .options(**broker.source(source_kind), topic=topic, includeHeaders="true")
        .load()
    )
    table = f"streamed_{source_kind}"
    query = stream.writeStream.format("memory").queryName(table).trigger(processingTime="200 milliseconds").start()
    try:
        query.processAllAvailable()
        assert collect(spark.table(table)) == set()

        expected = produce(broker.bootstrap, topic, 0, range(5, 25)) | produce(
            broker.bootstrap, topic, 1, range(25, 40)
        )
        query.processAllAvailable()
        assert collect(spark.table(table)) == expected

        # a partition added while the stream runs is read from its start, as Spark's Kafka source does
        client = admin(broker.bootstrap)
        client.create_partitions([NewPartitions(topic, 3)], request_timeout=TIMEOUT)[topic].result(TIMEOUT)
        expected |= produce(broker.bootstrap, topic, 2, range(40, 50))

        def all_collected() -> bool:
            if collect(spark.table(table)) == expected:
                return True
            query.processAllAvailable()
            return False

        eventually(all_collected, 30, what="every record in the table", interval=0)
        assert query.exception() is None
    finally:
        query.stop()


def test_available_now_in_bounded_micro_batches(spark, broker, produced, tmp_path):
    import pyspark.sql.streaming.datasource  # noqa: F401  (admission control: PySpark 4.2+, the extra's floor)

    stream = (
        spark.readStream.format("trafka")
        .options(**broker.source("data_dir"), topic=TOPIC, startingOffsets="earliest", maxOffsetsPerTrigger="300")
        .load()
    )
    query = (
        stream.writeStream.format("memory")
        .queryName("available_now")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None
    assert collect(spark.table("available_now")) == {r[:7] + (None,) for r in produced.rows}
    batches = [p for p in query.recentProgress if p["numInputRows"] > 0]
    assert len(batches) == -(-sum(produced.end_offsets().values()) // 300)
    assert all(p["numInputRows"] <= 300 for p in batches)
