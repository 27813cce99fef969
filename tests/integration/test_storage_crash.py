"""Durability and recovery of the filesystem store, with real broker processes and real files.

Every test owns a data dir under tmp_path and stops the broker either cleanly (SIGTERM: flush,
checkpoints, `.kafka_cleanshutdown`) or by SIGKILL (no clean-shutdown marker, so the next start
recovers the logs). Every wait is bounded by a deadline.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import struct
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, TopicCollection, TopicPartition
from confluent_kafka.admin import (
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    ResourceType,
)
from kafka.protocol.consumer import FetchRequest, FetchResponse
from kafka.record.default_records import DefaultRecordBatch

from tests.waiting import eventually

from .broker import BrokerProcess, running
from .clients import confluent_admin, confluent_producer, create_topic, produce_batches, read_partition, unique
from .wire import WireClient

TIMEOUT = 15.0
CLEAN, KILL = "sigterm", "sigkill"


# -- broker and client helpers ---------------------------------------------------------------------


def stop(broker: BrokerProcess, how: str) -> None:
    if how == CLEAN:
        assert broker.stop(signal.SIGTERM) == 0, broker.log()
    else:
        broker.process.kill()
        assert broker.process.wait(10) == -signal.SIGKILL


def watermarks(bootstrap: str, topic: str, partition: int) -> tuple[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("wm"), "log_level": 0})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=TIMEOUT, cached=False)
    finally:
        consumer.close()


def by_partition(reports) -> dict[int, list[tuple[int, bytes | None, bytes]]]:
    out: dict[int, list] = {}
    for partition, offset, key, value in reports:
        out.setdefault(partition, []).append((offset, key, value))
    return {p: sorted(records) for p, records in out.items()}


def assert_log_is(bootstrap: str, topic: str, expected: dict[int, list[tuple[int, bytes | None, bytes]]]) -> None:
    """Each partition holds exactly the expected records, from offset 0, in order, intact."""
    for partition, records in expected.items():
        assert [o for o, _, _ in records] == list(range(len(records))), "acknowledged offsets are not 0..n-1"
        assert watermarks(bootstrap, topic, partition) == (0, len(records))
        got = read_partition(bootstrap, topic, partition, 0, len(records))
        assert got == records, f"partition {partition}: {len(got)} of {len(records)} records read back, or they differ"


def fetch_batches(
    bootstrap: str, topic: str, partition: int, offset: int, max_bytes: int = 64 * 1024
) -> list[DefaultRecordBatch]:
    """The record batches a raw Fetch v11 at `offset` returns, exactly as served."""
    Topic = FetchRequest.FetchTopic
    request = FetchRequest[11](
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=0,
        max_bytes=max_bytes,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=[
            Topic(
                topic=topic,
                partitions=[
                    Topic.FetchPartition(
                        partition=partition,
                        current_leader_epoch=-1,
                        fetch_offset=offset,
                        log_start_offset=-1,
                        partition_max_bytes=max_bytes,
                    )
                ],
            )
        ],
        forgotten_topics_data=[],
        rack_id="",
    )
    with WireClient(bootstrap, timeout=TIMEOUT) as client:
        response = client.request(request, FetchResponse, 11)
    data = response.responses[0].partitions[0]
    assert data.error_code == 0
    return list(split_batches(bytes(data.records or b"")))


def split_batches(raw: bytes) -> Iterator[DefaultRecordBatch]:
    pos = 0
    while len(raw) - pos >= 12:
        size = 12 + struct.unpack_from(">i", raw, pos + 8)[0]
        if pos + size > len(raw):
            return  # a partial batch at the end of a fetch response is allowed
        yield DefaultRecordBatch(raw[pos : pos + size])
        pos += size


def batch_spans(path: str) -> list[tuple[int, int, int, int]]:
    """(position, size, base offset, last offset) of each complete batch in a `.log` file."""
    with open(path, "rb") as f:
        raw = f.read()
    out = []
    pos = 0
    while len(raw) - pos >= 61:
        base, length = struct.unpack_from(">qi", raw, pos)
        size = 12 + length
        if pos + size > len(raw):
            break
        (delta,) = struct.unpack_from(">i", raw, pos + 23)
        out.append((pos, size, base, base + delta))
        pos += size
    return out


def segment_files(partition_dir: str, suffix: str) -> list[str]:
    return sorted(os.path.join(partition_dir, n) for n in os.listdir(partition_dir) if n.endswith(suffix))


# -- acknowledged records survive a crash ------------------------------------------------------------


@pytest.mark.parametrize("env", [{}, {"TRAFKA_STORAGE_FLUSH_MESSAGES": "1"}], ids=["page-cache", "fsync-each-batch"])
def test_acknowledged_records_survive_kill_9(tmp_path, env):
    topic, partitions = "durable", 3
    batches = [
        [(i % partitions, f"k-{b}-{i}".encode() if i % 7 else None, os.urandom(10 + (i * 37) % 400)) for i in range(60)]
        for b in range(8)
    ]
    with running(tmp_path, env) as broker:
        create_topic(broker.bootstrap, topic, partitions)
        reports = produce_batches(broker.bootstrap, topic, batches)
        stop(broker, KILL)
    assert not os.path.exists(tmp_path / ".kafka_cleanshutdown")

    expected = by_partition(reports)
    assert sorted(expected) == list(range(partitions))
    with running(tmp_path, env) as broker:
        assert_log_is(broker.bootstrap, topic, expected)
        more = produce_batches(broker.bootstrap, topic, [[(p, b"after", b"restart-%d" % p) for p in range(partitions)]])
        for partition, offset, _, value in more:
            assert offset == len(expected[partition]), "a produce after recovery did not get the next offset"
            assert read_partition(broker.bootstrap, topic, partition, offset, 1) == [(offset, b"after", value)]
        stop(broker, CLEAN)


def test_records_acknowledged_before_a_kill_mid_stream_survive(tmp_path):
    """Kill -9 while a producer is streaming: whatever was acknowledged is there afterwards, and the
    log holds consecutive offsets with nothing but produced records (a torn last write is cut)."""
    topic, partitions = "stream", 2
    acked: list[tuple[int, int, bytes | None, bytes]] = []
    errors: list = []

    def on_delivery(err, msg) -> None:
        if err is None:
            acked.append((msg.partition(), msg.offset(), msg.key(), msg.value()))
        else:
            errors.append(err)

    with running(tmp_path) as broker:
        create_topic(broker.bootstrap, topic, partitions)
        p = confluent_producer(broker.bootstrap, **{"linger.ms": 1, "message.timeout.ms": 3000, "retries": 0})
        produced = {}

        def enough_acknowledged() -> bool:
            if len(acked) >= 400 and {part for part, *_ in acked} == set(range(partitions)):
                return True
            i = len(produced)
            value = b"%d:" % i + os.urandom(200)
            produced[value] = b"k%d" % i
            try:
                p.produce(topic, value=value, key=b"k%d" % i, partition=i % partitions, on_delivery=on_delivery)
            except BufferError:
                pass
            p.poll(0)
            return False

        eventually(enough_acknowledged, TIMEOUT, what="400 acknowledgements on every partition", interval=0)
        broker.process.kill()  # with requests still in flight
        assert broker.process.wait(10) == -signal.SIGKILL
        p.purge()
        p.flush(5)

    with running(tmp_path) as broker:
        for partition in range(partitions):
            mine = sorted((o, k, v) for part, o, k, v in acked if part == partition)
            low, high = watermarks(broker.bootstrap, topic, partition)
            assert low == 0 and high >= mine[-1][0] + 1, "acknowledged records are missing"
            stored = read_partition(broker.bootstrap, topic, partition, 0, high)
            assert [o for o, _, _ in stored] == list(range(high))
            assert all(produced.get(v) == k for _, k, v in stored), "a record that was never produced is served"
            by_offset = {o: (k, v) for o, k, v in stored}
            assert all(by_offset[o] == (k, v) for o, k, v in mine), "an acknowledged record changed"
        stop(broker, CLEAN)


# -- a torn tail is cut back ----------------------------------------------------------------------


def _garbage(kind: str, last_batch: bytes, next_offset: int) -> bytes:
    if kind == "random-37-bytes":
        return os.urandom(37)
    # The next batch as it would have been written: the last one again at the next offset (the base
    # offset is outside the CRC, so the copy is a valid batch).
    copy = bytearray(struct.pack(">q", next_offset) + last_batch[8:])
    if kind == "half-a-batch":
        assert len(copy) // 2 > 61, "the cut must leave a complete header so the length check matters"
        return bytes(copy[: len(copy) // 2])
    assert kind == "whole-batch-bad-crc"
    copy[-5] ^= 0xFF  # inside the last record: the CRC no longer matches
    return bytes(copy)


@pytest.mark.parametrize("kind", ["random-37-bytes", "half-a-batch", "whole-batch-bad-crc"])
def test_a_torn_tail_is_truncated_after_kill_9(tmp_path, kind):
    topic = "torn"
    batches = [[(0, b"key-%d-%d" % (b, i), bytes([b]) * 300 + b"%d" % i) for i in range(5)] for b in range(8)]
    with running(tmp_path) as broker:
        create_topic(broker.bootstrap, topic, 1)
        reports = produce_batches(broker.bootstrap, topic, batches)
        stop(broker, KILL)

    log_path = segment_files(str(tmp_path / f"{topic}-0"), ".log")[-1]
    spans = batch_spans(log_path)
    with open(log_path, "rb") as f:
        original = f.read()
    assert spans and spans[-1][0] + spans[-1][1] == len(original)
    pos, size, _, last = spans[-1]
    garbage = _garbage(kind, original[pos : pos + size], last + 1)
    with open(log_path, "ab") as f:
        f.write(garbage)

    expected = by_partition(reports)
    with running(tmp_path) as broker:
        with open(log_path, "rb") as f:
            assert f.read() == original, "the torn tail was not truncated back to the last complete batch"
        mentions = [line for line in broker.output if re.search("truncat", line, re.I) and topic in line]
        assert mentions, "the broker did not report the truncation:\n" + broker.log()
        assert str(len(garbage)) in mentions[0], mentions[0]
        assert_log_is(broker.bootstrap, topic, expected)
        more = produce_batches(broker.bootstrap, topic, [[(0, b"new", b"after-truncation")]])
        n = len(expected[0])
        assert [(o, k, v) for _, o, k, v in more] == [(n, b"new", b"after-truncation")]
        assert read_partition(broker.bootstrap, topic, 0, n, 1) == [(n, b"new", b"after-truncation")]
        stop(broker, KILL)

    # The append after the truncation landed where the garbage was: a further recovery cuts nothing.
    with running(tmp_path) as broker:
        assert not [line for line in broker.output if re.search("truncat", line, re.I)], broker.log()
        expected[0].append((n, b"new", b"after-truncation"))
        assert_log_is(broker.bootstrap, topic, expected)
        stop(broker, CLEAN)


# -- a lost or corrupt offset index is rebuilt ----------------------------------------------------------


@pytest.mark.parametrize("how", [CLEAN, KILL])
@pytest.mark.parametrize("damage", ["deleted", "random-bytes"])
def test_a_lost_or_corrupt_index_is_rebuilt(tmp_path, damage, how):
    topic = "indexed"
    # 60 batches of ~10 KB in segments of ~200 KB: several segments, each with many index entries
    # (one per 4096 bytes appended).
    batches = [[(0, b"%d-%d" % (b, i), os.urandom(1000)) for i in range(10)] for b in range(60)]
    with running(tmp_path) as broker:
        create_topic(broker.bootstrap, topic, 1, {"internal.segment.bytes": str(200_000)})
        reports = produce_batches(broker.bootstrap, topic, batches)
        stop(broker, how)
    expected = by_partition(reports)[0]
    values = {o: (k, v) for o, k, v in expected}

    partition_dir = str(tmp_path / f"{topic}-0")
    logs = segment_files(partition_dir, ".log")
    assert len(logs) >= 3, "the test needs several segments"
    originals = {}
    for log_path in logs:
        with open(log_path[:-4] + ".index", "rb") as f:
            originals[log_path[:-4] + ".index"] = f.read()
    assert all(len(content) >= 3 * 8 for content in list(originals.values())[:-1]), "too few index entries"
    assert list(originals.values())[-1], "the active segment has no index entry"
    for index_path in originals:
        if damage == "deleted":
            os.remove(index_path)
        else:
            with open(index_path, "wb") as f:
                f.write(os.urandom(len(originals[index_path])))

    spans = [(log_path, batch_spans(log_path)) for log_path in logs]
    batch_of = {o: (base, last) for _, ss in spans for _, _, base, last in ss for o in range(base, last + 1)}
    probes = {0, 1, 5, len(expected) - 1, len(expected) // 2, len(expected) // 3 + 3}
    for _, ss in spans:
        first, middle = ss[0], ss[len(ss) // 2]
        probes |= {first[2], first[3], middle[2] + 4, middle[3], ss[-1][3]}

    with running(tmp_path) as broker:
        for offset in sorted(probes):
            served = fetch_batches(broker.bootstrap, topic, 0, offset)
            assert served, f"nothing served at offset {offset}"
            assert (served[0].base_offset, served[0].last_offset) == batch_of[offset], (
                f"fetch at {offset} did not start with the batch holding it"
            )
            records = [r for batch in served for r in batch if r.offset >= offset]
            assert records[0].offset == offset
            assert [r.offset for r in records] == list(range(offset, offset + len(records)))
            assert all((r.key, r.value) == values[r.offset] for r in records)
        assert (
            read_partition(broker.bootstrap, topic, 0, len(expected) // 2 + 3, 5)
            == expected[len(expected) // 2 + 3 : len(expected) // 2 + 8]
        )
        for index_path, content in originals.items():
            assert os.path.exists(index_path), f"{index_path} was not rebuilt"
            with open(index_path, "rb") as f:
                assert f.read() == content, f"{index_path} was not rebuilt with the same entries"
        stop(broker, CLEAN)


# -- committed offsets survive -------------------------------------------------------------------


def _consumer(bootstrap: str, group: str) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "log_level": 0,
            "session.timeout.ms": 6000,
            "fetch.wait.max.ms": 100,
        }
    )


def _wait_for_assignment(consumer: Consumer, count: int) -> None:

    def assigned() -> bool:
        if len(consumer.assignment()) >= count:
            return True
        message = consumer.poll(0.2)
        assert message is None or not message.error() or message.error().code() < 0, message.error()
        return False

    eventually(assigned, TIMEOUT, what="the consumer's partitions", interval=0)


@pytest.mark.parametrize("how", [CLEAN, KILL])
def test_committed_offsets_survive_a_restart(tmp_path, how):
    topic, group = "committed", "the-group"
    batches = [[(p, None, b"%d-%d" % (p, i)) for p in range(2) for i in range(10)]]
    with running(tmp_path) as broker:
        create_topic(broker.bootstrap, topic, 2)
        produce_batches(broker.bootstrap, topic, batches)
        consumer = _consumer(broker.bootstrap, group)
        try:
            consumer.subscribe([topic])
            _wait_for_assignment(consumer, 2)
            consumer.commit(offsets=[TopicPartition(topic, 0, 2), TopicPartition(topic, 1, 3)], asynchronous=False)
            consumer.commit(
                offsets=[TopicPartition(topic, 0, 4, metadata="m0"), TopicPartition(topic, 1, 7, metadata="m1")],
                asynchronous=False,
            )
        finally:
            consumer.close()
        # A standalone (assign-only) commit for a second group, as a simple consumer makes it.
        standalone = _consumer(broker.bootstrap, "simple-group")
        try:
            standalone.assign([TopicPartition(topic, 0, 0)])
            standalone.commit(offsets=[TopicPartition(topic, 0, 9)], asynchronous=False)
        finally:
            standalone.close()
        stop(broker, how)

    with running(tmp_path) as broker:
        consumer = _consumer(broker.bootstrap, group)
        try:
            committed = consumer.committed([TopicPartition(topic, 0), TopicPartition(topic, 1)], timeout=TIMEOUT)
            assert [(tp.partition, tp.offset, tp.metadata) for tp in committed] == [(0, 4, "m0"), (1, 7, "m1")]
            consumer.subscribe([topic])
            got: dict[int, list[int]] = {0: [], 1: []}

            def resumed() -> bool:
                message = consumer.poll(0.2)
                if message is not None and not message.error():
                    got[message.partition()].append(message.offset())
                return len(got[0]) + len(got[1]) >= 6 + 3

            eventually(resumed, TIMEOUT, what="9 records", interval=0, state=lambda: got)
            assert got == {0: [4, 5, 6, 7, 8, 9], 1: [7, 8, 9]}, "the group did not resume from its committed offsets"
        finally:
            consumer.close()
        simple = _consumer(broker.bootstrap, "simple-group")
        try:
            [tp] = simple.committed([TopicPartition(topic, 0)], timeout=TIMEOUT)
            assert tp.offset == 9
        finally:
            simple.close()
        stop(broker, CLEAN)


@pytest.mark.parametrize("how", [CLEAN, KILL])
def test_committed_offsets_survive_the_cleaning_of_the_offsets_log(tmp_path, how):
    """The log cleaner compacts `__consumer_offsets` in the background (small segments here, Kafka's
    offsets.topic.segment.bytes); a restart after it loses nothing and rewrites nothing."""
    topic, partitions, rounds = "many", 50, 25  # 1250 offset records, 50 live
    env = {"KAFKA_OFFSETS_TOPIC_SEGMENT_BYTES": "4096", "KAFKA_LOG_CLEANER_BACKOFF_MS": "100"}
    offsets_dir = str(tmp_path / "__consumer_offsets-0")

    def log_bytes() -> int:
        total = 0
        for path in segment_files(offsets_dir, ".log"):
            with contextlib.suppress(FileNotFoundError):  # the cleaner may delete it meanwhile
                total += os.path.getsize(path)
        return total

    with running(tmp_path, env) as broker:
        create_topic(broker.bootstrap, topic, partitions)
        consumer = _consumer(broker.bootstrap, "busy-group")
        try:
            for r in range(rounds):
                offsets = [TopicPartition(topic, p, r * 100 + p) for p in range(partitions)]
                consumer.commit(offsets=offsets, asynchronous=False)
        finally:
            consumer.close()
        eventually(lambda: log_bytes() < 20_000, 30, what="the cleaner to compact the offsets log", interval=0.1)
        stop(broker, how)

    final = {p: (rounds - 1) * 100 + p for p in range(partitions)}
    for restart in range(2):
        cleaned = log_bytes()
        with running(tmp_path, env) as broker:
            consumer = _consumer(broker.bootstrap, "busy-group")
            try:
                committed = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=TIMEOUT)
                assert {tp.partition: tp.offset for tp in committed} == final, f"after restart {restart + 1}"
                if restart == 0:
                    assert log_bytes() == cleaned, "start-up rewrote the offsets log"
                    consumer.commit(offsets=[TopicPartition(topic, 0, 5000)], asynchronous=False)
                    final[0] = 5000
            finally:
                consumer.close()
            stop(broker, how)


# -- topics survive ----------------------------------------------------------------------------------


def _topics(bootstrap: str) -> dict[str, int]:
    client = confluent_admin(bootstrap)
    metadata = client.list_topics(timeout=TIMEOUT)
    return {name: len(t.partitions) for name, t in metadata.topics.items() if not name.startswith("__")}


def _configs(bootstrap: str, topic: str) -> dict[str, str]:
    client = confluent_admin(bootstrap)
    futures = client.describe_configs([ConfigResource(ResourceType.TOPIC, topic)], request_timeout=TIMEOUT)
    [future] = futures.values()
    return {name: entry.value for name, entry in future.result(TIMEOUT).items() if not entry.is_default}


def _topic_id(bootstrap: str, topic: str) -> str:
    client = confluent_admin(bootstrap)
    futures = client.describe_topics(TopicCollection([topic]), request_timeout=TIMEOUT)
    return str(futures[topic].result(TIMEOUT).topic_id)


@pytest.mark.parametrize("how", [CLEAN, KILL])
def test_topics_survive_a_restart(tmp_path, how):
    configs = {"retention.ms": "123456", "cleanup.policy": "compact", "max.message.bytes": "200000"}
    with running(tmp_path) as broker:
        b = broker.bootstrap
        create_topic(b, "kept", 3, configs)
        create_topic(b, "gone", 2)
        create_topic(b, "grown", 1)
        produce_batches(b, "gone", [[(0, None, b"doomed"), (1, None, b"doomed")]])
        client = confluent_admin(b)
        client.delete_topics(["gone"], operation_timeout=TIMEOUT)["gone"].result(TIMEOUT)
        client.create_partitions([NewPartitions("grown", 4)], operation_timeout=TIMEOUT)["grown"].result(TIMEOUT)
        kept_id = _topic_id(b, "kept")
        assert _topics(b) == {"kept": 3, "grown": 4}
        resource = ConfigResource(
            ResourceType.TOPIC,
            "kept",
            incremental_configs=[
                ConfigEntry("retention.ms", "999", incremental_operation=AlterConfigOpType.SET),
                ConfigEntry("max.message.bytes", None, incremental_operation=AlterConfigOpType.DELETE),
            ],
        )
        [future] = client.incremental_alter_configs([resource], request_timeout=TIMEOUT).values()
        future.result(TIMEOUT)
        # min.insync.replicas: the cluster's, not a default (Kafka 4.2 sets it with eligible leader replicas, ADR 137)
        altered = {"retention.ms": "999", "cleanup.policy": "compact", "min.insync.replicas": "1"}
        assert _configs(b, "kept") == altered
        stop(broker, how)

    assert not any(name.startswith("gone-") for name in os.listdir(tmp_path)), "a deleted topic's log dir is left"
    with running(tmp_path) as broker:
        b = broker.bootstrap
        assert _topics(b) == {"kept": 3, "grown": 4}
        assert _configs(b, "kept") == altered, "config changes did not survive the restart"
        assert _topic_id(b, "kept") == kept_id
        reports = produce_batches(b, "grown", [[(3, None, b"to the added partition")]])
        assert [(p, o) for p, o, _, _ in reports] == [(3, 0)]
        # The deleted topic is really gone: a new one of that name starts empty.
        create_topic(b, "gone", 1)
        assert watermarks(b, "gone", 0) == (0, 0)
        stop(broker, how)

    with running(tmp_path) as broker:
        assert _topics(broker.bootstrap) == {"kept": 3, "grown": 4, "gone": 1}
        assert read_partition(broker.bootstrap, "grown", 3, 0, 1) == [(0, None, b"to the added partition")]
        stop(broker, CLEAN)


def test_a_deleted_topics_leftover_log_dir_does_not_come_back(tmp_path):
    """A crash between recording a topic's deletion in the metadata log and removing its log dir
    leaves the dir behind (simulated by putting a copy back). It is a stray log, as Kafka calls it:
    the topic stays deleted, and a new topic of that name starts empty rather than with the old data."""
    with running(tmp_path) as broker:
        create_topic(broker.bootstrap, "gone", 1)
        produce_batches(broker.bootstrap, "gone", [[(0, b"old", b"from the deleted topic")] * 3])
        stop(broker, CLEAN)
    leftover = tmp_path.parent / f"{tmp_path.name}-leftover"
    shutil.copytree(tmp_path / "gone-0", leftover)

    with running(tmp_path) as broker:
        client = confluent_admin(broker.bootstrap)
        client.delete_topics(["gone"], operation_timeout=TIMEOUT)["gone"].result(TIMEOUT)
        stop(broker, KILL)
    assert not (tmp_path / "gone-0").exists()
    shutil.copytree(leftover, tmp_path / "gone-0")  # as if the crash came before the directory was removed

    with running(tmp_path) as broker:
        assert "gone" not in _topics(broker.bootstrap)
        create_topic(broker.bootstrap, "gone", 1)
        assert watermarks(broker.bootstrap, "gone", 0) == (0, 0), "the deleted topic's records came back"
        reports = produce_batches(broker.bootstrap, "gone", [[(0, b"new", b"in the new topic")]])
        assert [(o, k, v) for _, o, k, v in reports] == [(0, b"new", b"in the new topic")]
        stop(broker, CLEAN)
