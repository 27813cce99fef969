"""`__consumer_offsets` read by a real client (librdkafka) from `trafka serve` on its filesystem store,
as Apache Kafka 4.2.2 serves it (ADR 108): ListOffsets gives its bounds, Fetch returns the records the
group coordinator wrote, in Kafka's formats (OffsetCommitKey v1, OffsetCommitValue v4); before any
group coordinator was looked for it does not exist. tests/differential compares the same reads with
Apache Kafka."""

from __future__ import annotations

import struct
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from tests.waiting import eventually

from .broker import running

OFFSETS = "__consumer_offsets"


def offset_commit(key: bytes, value: bytes | None) -> tuple[str, str, int, int] | None:
    """(group, topic, partition, offset) of an OffsetCommitKey v0-1 record, else None."""
    (version,) = struct.unpack_from(">h", key)
    if version not in (0, 1) or value is None:
        return None
    fields, position = [], 2
    for _ in range(2):
        (size,) = struct.unpack_from(">h", key, position)
        fields.append(key[position + 2 : position + 2 + size].decode())
        position += 2 + size
    (partition,) = struct.unpack_from(">i", key, position)
    (offset,) = struct.unpack_from(">q", value, 2)
    return fields[0], fields[1], partition, offset


def latest(admin: AdminClient) -> int | KafkaException:
    partition = TopicPartition(OFFSETS, 0)
    try:
        return admin.list_offsets({partition: OffsetSpec.latest()})[partition].result(timeout=10).offset
    except KafkaException as refused:
        return refused


def test_a_client_reads_the_offsets_a_group_committed_from_consumer_offsets(tmp_path):
    with running(tmp_path / "data") as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        before = latest(admin)
        assert isinstance(before, KafkaException), "no group coordinator was looked for: no such topic yet"

        producer = Producer({"bootstrap.servers": broker.bootstrap})
        producer.produce("orders", b"o-1")
        producer.flush(10)
        committer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "g1"})
        committer.commit(offsets=[TopicPartition("orders", 0, 1)], asynchronous=False)
        committer.close()
        assert eventually(lambda: isinstance(end := latest(admin), int) and end >= 1, 10, what="ListOffsets")

        reader = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "reader", "enable.auto.commit": False})
        reader.assign([TopicPartition(OFFSETS, 0, OFFSET_BEGINNING)])
        seen: list[tuple[str, str, int, int]] = []

        def committed_record_read() -> bool:
            message = reader.poll(0.5)
            if message is not None and message.error() is None and message.key():
                found = offset_commit(message.key(), message.value())
                if found is not None:
                    seen.append(found)
            return ("g1", "orders", 0, 1) in seen

        try:
            eventually(committed_record_read, 15, what="the commit read back", state=lambda: seen)
        finally:
            reader.close()
            admin = producer = None  # destroyed while the broker still listens: no reconnect noise after it stops


def _commits_read(broker, isolation: str, until: tuple[str, str, int, int]) -> list[tuple[str, str, int, int]]:
    """The offset commits a reader of `isolation` finds in `__consumer_offsets`, read until `until`."""
    reader = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": f"reader-{isolation}",
            "enable.auto.commit": False,
            "isolation.level": isolation,
        }
    )
    reader.assign([TopicPartition(OFFSETS, 0, OFFSET_BEGINNING)])
    seen: list[tuple[str, str, int, int]] = []

    def read() -> bool:
        message = reader.poll(0.5)
        if message is not None and message.error() is None and message.key():
            found = offset_commit(message.key(), message.value())
            if found is not None:
                seen.append(found)
        return until in seen

    try:
        eventually(read, 15, what=f"{until} read back ({isolation})", state=lambda: seen)
    finally:
        reader.close()
    return seen


def test_a_read_committed_reader_skips_the_offsets_an_aborted_transaction_committed(tmp_path):
    """Kafka indexes the transaction a coordinator's abort marker ends in `__consumer_offsets` too, so
    a read_committed reader drops its TxnOffsetCommit records; a read_uncommitted one sees them."""
    with running(tmp_path / "data") as broker:
        plain = Producer({"bootstrap.servers": broker.bootstrap})
        plain.produce("orders", b"o-1")
        plain.flush(10)
        producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "etl"})
        producer.init_transactions(10)
        group = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "etl-group"})
        metadata = group.consumer_group_metadata()
        for offset, commit in ((7, False), (3, True)):
            producer.begin_transaction()
            producer.send_offsets_to_transaction([TopicPartition("orders", 0, offset)], metadata, 10)
            if commit:
                producer.commit_transaction(10)
            else:
                producer.abort_transaction(10)
        group.close()
        aborted, committed = ("etl-group", "orders", 0, 7), ("etl-group", "orders", 0, 3)

        assert aborted in _commits_read(broker, "read_uncommitted", committed)
        assert aborted not in _commits_read(broker, "read_committed", committed)
        producer = plain = None


def test_a_fetch_waiting_on_consumer_offsets_is_answered_by_the_next_commit(tmp_path):
    """A commit appends to `__consumer_offsets` and wakes the Fetch parked there, as an append wakes
    Kafka's delayed fetches: the reader gets it long before its fetch.wait.max.ms."""
    with running(tmp_path / "data") as broker:
        producer = Producer({"bootstrap.servers": broker.bootstrap})
        producer.produce("orders", b"o-1")
        producer.flush(10)
        committer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "g1", "enable.auto.commit": False})
        committer.commit(offsets=[TopicPartition("orders", 0, 1)], asynchronous=False)
        reader = Consumer(
            {
                "bootstrap.servers": broker.bootstrap,
                "group.id": "reader",
                "enable.auto.commit": False,
                "fetch.wait.max.ms": 30_000,
            }
        )
        reader.assign([TopicPartition(OFFSETS, 0, OFFSET_BEGINNING)])
        seen: list[tuple[str, str, int, int]] = []

        def read() -> None:
            message = reader.poll(0.2)
            if message is not None and message.error() is None and message.key():
                found = offset_commit(message.key(), message.value())
                if found is not None:
                    seen.append(found)

        try:
            assert eventually(lambda: read() or ("g1", "orders", 0, 1) in seen, 15, what="the first commit")
            for _ in range(10):  # 2 s of polls: the reader's next fetch is parked at the end of the log
                read()
            committed = time.monotonic()
            committer.commit(offsets=[TopicPartition("orders", 0, 2)], asynchronous=False)
            assert eventually(lambda: read() or ("g1", "orders", 0, 2) in seen, 25, what="the second commit")
            assert time.monotonic() - committed < 10, "answered by the commit, not at fetch.wait.max.ms"
        finally:
            reader.close()
            committer.close()
            producer = None
