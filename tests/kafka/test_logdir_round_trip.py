"""trafka's log dir under Apache Kafka and back (issue 36, item 4): the documented way from one trafka
to a Kafka cluster. trafka writes topics (configs, a compacted one, every codec, headers), idempotent and
transactional records (committed and aborted) and a group's committed offsets; it stops; Kafka 4.2.2
starts on the same directory and serves all of it to real clients; Kafka writes more and stops; trafka
opens the directory again and serves everything, Kafka's writes included.

Kafka runs with `controller.quorum.voters` (a static single voter): trafka's metadata log records no
voter set (see ADR 64).
"""

from __future__ import annotations

import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.broker import running

from .reference import ReferenceKafka

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
TIMEOUT = 60.0


def _create(bootstrap: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    topics = [NewTopic(f"codec-{codec}", 1, 1) for codec in CODECS]
    topics.append(NewTopic("configured", 2, 1, config={"retention.ms": "86400000", "max.message.bytes": "200000"}))
    topics.append(NewTopic("compacted", 1, 1, config={"cleanup.policy": "compact"}))
    topics.append(NewTopic("txn", 1, 1))
    for future in admin.create_topics(topics).values():
        future.result(TIMEOUT)


def _produce(bootstrap: str, tag: str) -> None:
    for codec in CODECS:
        producer = Producer({"bootstrap.servers": bootstrap, "compression.type": codec, "enable.idempotence": True})
        for i in range(5):
            producer.produce(
                f"codec-{codec}",
                key=f"{tag}{i}".encode(),
                value=f"{tag}-{codec}-{i}".encode(),
                headers=[("h", tag.encode())],
            )
        assert producer.flush(TIMEOUT) == 0
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for i in range(4):
        producer.produce(
            "configured", key=f"{tag}{i}".encode(), value=f"{tag}-configured-{i}".encode(), partition=i % 2
        )
        producer.produce("compacted", key=b"k%d" % (i % 2), value=f"{tag}-compacted-{i}".encode())
    assert producer.flush(TIMEOUT) == 0
    transactional = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"txn-{tag}"})
    transactional.init_transactions(TIMEOUT)
    transactional.begin_transaction()
    transactional.produce("txn", value=f"{tag}-committed".encode())
    transactional.commit_transaction(TIMEOUT)
    transactional.begin_transaction()
    transactional.produce("txn", value=f"{tag}-aborted".encode())
    transactional.abort_transaction(TIMEOUT)


def _read_all(bootstrap: str, topics: list[str], expected: int, group: str) -> list[tuple]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "log_level": 0,
        }
    )
    consumer.subscribe(topics)
    seen: list[tuple] = []
    deadline = time.monotonic() + TIMEOUT
    try:
        while len(seen) < expected and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None or message.error():
                continue
            seen.append((message.topic(), message.key(), message.value(), message.headers()))
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return seen


def _committed(bootstrap: str, group: str, partitions: list[TopicPartition]) -> dict[tuple[str, int], int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "log_level": 0})
    try:
        return {(tp.topic, tp.partition): tp.offset for tp in consumer.committed(partitions, timeout=TIMEOUT)}
    finally:
        consumer.close()


def _values(records: list[tuple]) -> set[bytes]:
    return {value for _, _, value, _ in records}


TOPICS = [f"codec-{codec}" for codec in CODECS] + ["configured", "txn"]
PARTITIONS = [TopicPartition(topic, 0) for topic in TOPICS] + [TopicPartition("configured", 1)]
PER_ROUND = 5 * len(CODECS) + 4 + 1  # codecs, configured, the committed transaction


def test_kafka_serves_a_log_dir_trafka_wrote_and_trafka_serves_it_back(tmp_path):
    data = tmp_path / "data"
    with running(data) as trafka:
        _create(trafka.bootstrap)
        _produce(trafka.bootstrap, "t")
        first = _read_all(trafka.bootstrap, TOPICS, PER_ROUND, "migrating")
        assert len(first) == PER_ROUND
        committed_by_trafka = _committed(trafka.bootstrap, "migrating", PARTITIONS)
        assert trafka.stop() == 0, trafka.log()

    kafka = ReferenceKafka(tmp_path / "kafka", log_dir=data, existing=True, static_quorum=True)
    with kafka:
        # every record trafka wrote, headers and all; the aborted transaction stays invisible
        everything = _read_all(kafka.bootstrap, TOPICS, PER_ROUND, "fresh-under-kafka")
        assert sorted(everything) == sorted(first), kafka.log_tail()
        assert b"t-aborted" not in _values(everything)
        # the group's committed positions, as trafka kept them
        assert _committed(kafka.bootstrap, "migrating", PARTITIONS) == committed_by_trafka, kafka.log_tail()
        # the topics' configs
        admin = AdminClient({"bootstrap.servers": kafka.bootstrap, "log_level": 0})
        topics = admin.list_topics(timeout=TIMEOUT).topics
        assert len(topics["configured"].partitions) == 2
        # Kafka writes more, and the group moves on under Kafka
        _produce(kafka.bootstrap, "k")
        moved = _read_all(kafka.bootstrap, TOPICS, PER_ROUND, "migrating")
        assert _values(moved) >= {b"k-none-0", b"k-zstd-4", b"k-committed"}
        committed_by_kafka = _committed(kafka.bootstrap, "migrating", PARTITIONS)
    assert kafka.process is not None and kafka.process.returncode in (0, 143), kafka.log_tail()

    with running(data) as trafka:
        everything = _read_all(trafka.bootstrap, TOPICS, 2 * PER_ROUND, "fresh-under-trafka")
        assert _values(everything) >= _values(first) | {b"k-none-0", b"k-zstd-4", b"k-committed"}, trafka.log()
        assert not {b"t-aborted", b"k-aborted"} & _values(everything)
        assert _committed(trafka.bootstrap, "migrating", PARTITIONS) == committed_by_kafka, trafka.log()
        try:
            _produce(trafka.bootstrap, "again")
        except KafkaException as exc:  # pragma: no cover - the message says what broke
            raise AssertionError(trafka.log()) from exc
