"""Records the Spark suite produces, and the same records as a DataFrame should show them.

A row is compared as (topic, partition, offset, key, value, timestamp ms, timestampType, headers),
headers a tuple of (key, value) pairs or None for a record without any (as Spark's Kafka source).
"""

from __future__ import annotations

import random
import time

import attrs
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaProducer

TOPIC = "records"
APPEND_TIME_TOPIC = "appendtime"
PARTITIONS = 3
BASE_TIMESTAMP = 1_700_000_000_000
CONFLUENT_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")  # librdkafka writes snappy raw
PER_CODEC = 150
TIMEOUT = 30.0

Row = tuple  # (topic, partition, offset, key, value, timestamp_ms, timestamp_type, headers)


@attrs.frozen
class Produced:
    rows: frozenset  # every row of TOPIC
    append_time_rows: frozenset  # APPEND_TIME_TOPIC: timestamps are the broker's

    def of(self, partition: int, first: int, until: int) -> set:
        return {r for r in self.rows if r[1] == partition and first <= r[2] < until}

    def end_offsets(self) -> dict[int, int]:
        ends = dict.fromkeys(range(PARTITIONS), 0)
        for r in self.rows:
            ends[r[1]] = max(ends[r[1]], r[2] + 1)
        return ends


def admin(bootstrap: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})


def create_topic(bootstrap: str, name: str, partitions: int, configs: dict[str, str] | None = None) -> None:
    """The records carry fixed, old timestamps: retention is off, or the broker would delete them."""
    client = admin(bootstrap)
    configs = {"retention.ms": "-1", **(configs or {})}
    futures = client.create_topics([NewTopic(name, partitions, 1, config=configs)], request_timeout=TIMEOUT)
    futures[name].result(TIMEOUT)


def _record(rng: random.Random, i: int) -> tuple[bytes | None, bytes | None, list]:
    key = None if i % 7 == 0 else f"key-{i}".encode()
    if i % 11 == 0:
        value = None  # a tombstone
    elif i % 13 == 0:
        value = b""
    else:
        value = rng.randbytes(rng.randrange(1, 400)) + b"x" * rng.randrange(0, 400)
    headers: list = []
    if i % 3 == 1:
        headers = [("trace", f"t-{i}".encode()), ("nothing", None)]
    elif i % 3 == 2:
        headers = [("empty", b""), ("ünïcode", b"\x00\xff"), ("trace", b"again")]
    return key, value, headers


def _headers(headers: list) -> tuple | None:
    return tuple(headers) if headers else None


def produce_everything(bootstrap: str) -> Produced:
    create_topic(bootstrap, TOPIC, PARTITIONS, {"internal.segment.bytes": "65536", "index.interval.bytes": "1024"})
    create_topic(bootstrap, APPEND_TIME_TOPIC, 1, {"message.timestamp.type": "LogAppendTime"})
    rng = random.Random(6)
    rows: set = set()
    i = 0
    for codec in CONFLUENT_CODECS:
        producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "compression.type": codec,
                "linger.ms": 20,
                "batch.num.messages": 25,
                "log_level": 0,
            }
        )
        for _ in range(PER_CODEC):
            key, value, headers = _record(rng, i)
            partition, timestamp = i % PARTITIONS, BASE_TIMESTAMP + i * 1000

            def delivered(err, msg, key=key, value=value, headers=headers, timestamp=timestamp):
                assert err is None, err
                rows.add((TOPIC, msg.partition(), msg.offset(), key, value, timestamp, 0, _headers(headers)))

            producer.produce(
                TOPIC,
                value=value,
                key=key,
                partition=partition,
                timestamp=timestamp,
                headers=headers,
                on_delivery=delivered,
            )
            i += 1
        assert producer.flush(TIMEOUT) == 0

    # kafka-python frames snappy the xerial way (as the Java client does); its headers cannot be null
    producer = KafkaProducer(bootstrap_servers=bootstrap, compression_type="snappy", linger_ms=20, batch_size=4096)
    futures = []
    for _ in range(PER_CODEC):
        key, value, headers = _record(rng, i)
        headers = [(k, v if v is not None else b"") for k, v in headers]
        if key is None and value is None:
            key = b"kafka-python needs a key or a value"
        timestamp = BASE_TIMESTAMP + i * 1000
        future = producer.send(
            TOPIC, key=key, value=value, headers=headers, partition=i % PARTITIONS, timestamp_ms=timestamp
        )
        futures.append((future, key, value, headers, timestamp))
        i += 1
    producer.flush(TIMEOUT)
    for future, key, value, headers, timestamp in futures:
        meta = future.get(TIMEOUT)
        rows.add((TOPIC, meta.partition, meta.offset, key, value, timestamp, 0, _headers(headers)))
    producer.close()

    append_rows: set = set()
    before = int(time.time() * 1000)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "log_level": 0})
    for n in range(20):

        def delivered(err, msg, n=n):
            assert err is None, err
            append_rows.add((APPEND_TIME_TOPIC, msg.partition(), msg.offset(), b"k%d" % n, b"v%d" % n))

        producer.produce(
            APPEND_TIME_TOPIC, value=b"v%d" % n, key=b"k%d" % n, timestamp=before - 10**9, on_delivery=delivered
        )
    assert producer.flush(TIMEOUT) == 0
    return Produced(frozenset(rows), frozenset(append_rows))


def collect(frame) -> set:
    """A DataFrame's rows in the comparison form."""
    from pyspark.sql import functions as F

    columns = ["topic", "partition", "offset", "key", "value", F.unix_millis("timestamp").alias("ms"), "timestampType"]
    with_headers = "headers" in frame.columns
    if with_headers:
        columns.append("headers")
    out = set()
    for row in frame.select(*columns).collect():
        headers = None
        if with_headers and row.headers is not None:
            headers = tuple((h.key, None if h.value is None else bytes(h.value)) for h in row.headers)
        out.add(
            (
                row.topic,
                row.partition,
                row.offset,
                _bytes(row.key),
                _bytes(row.value),
                row.ms,
                row.timestampType,
                headers,
            )
        )
    return out


def _bytes(value) -> bytes | None:
    return None if value is None else bytes(value)
