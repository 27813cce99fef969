"""Log compaction seen from real clients: keyless records refused, compacted topics read back."""

from __future__ import annotations

import os
import re
import signal
import time
import urllib.request
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from prometheus_client.parser import text_string_to_metric_families

import trafka
from tests.batches import make_batch
from tests.waiting import eventually
from trafka.app.embedded import BrokerError

from .broker import BrokerProcess
from .wire import WireClient


def create_compacted(bootstrap: str, configs: dict[str, str] | None = None, partitions: int = 1) -> str:
    name = f"compacted-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1, config={"cleanup.policy": "compact", **(configs or {})})])[
        name
    ].result(30)
    return name


def test_a_keyless_record_is_refused_by_a_compacted_topic(bootstrap):
    topic = create_compacted(bootstrap)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    errors: list[KafkaError | None] = []
    producer.produce(topic, key=b"k", value=b"v", on_delivery=lambda error, _: errors.append(error))
    assert producer.flush(30) == 0
    producer.produce(topic, value=b"no key", on_delivery=lambda error, _: errors.append(error))
    assert producer.flush(30) == 0
    assert errors[0] is None
    assert errors[1] is not None and errors[1].code() == KafkaError.INVALID_RECORD, errors[1]


def test_the_refusal_carries_kafkas_message(bootstrap):
    topic = create_compacted(bootstrap)
    data = ProduceRequest.TopicProduceData
    request = ProduceRequest[9](
        transactional_id=None,
        acks=-1,
        timeout_ms=5000,
        topic_data=[
            data(
                name=topic,
                partition_data=[
                    data.PartitionProduceData(index=0, records=make_batch([(1, b"k", b"v"), (2, None, b"v")]))
                ],
            )
        ],
    )
    with WireClient(bootstrap) as wire:
        response = wire.request(request, ProduceResponse, 9)
    answer = response.responses[0].partition_responses[0]
    assert answer.error_code == KafkaError.INVALID_RECORD
    assert answer.error_message == (
        "One or more records have been rejected due to 1 record errors in total, and only showing the first three "
        "errors at most: [RecordError(batchIndex=1, message='Compacted topic cannot accept message without key in "
        f"topic partition {topic}-0')]"
    )
    assert [(e.batch_index, e.batch_index_error_message) for e in answer.record_errors] == [
        (1, f"Compacted topic cannot accept message without key in topic partition {topic}-0")
    ]


def consume_all(bootstrap: str, topic: str, expected_end: int) -> list[tuple[int, bytes | None, bytes | None]]:
    """Every record from the beginning, as a confluent-kafka consumer sees it."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{uuid.uuid4().hex[:6]}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    out: list[tuple[int, bytes | None, bytes | None]] = []

    def at_the_end() -> bool:
        message = consumer.poll(0.5)
        if message is None:
            return consumer.position([TopicPartition(topic, 0)])[0].offset >= expected_end
        assert message.error() is None, message.error()
        out.append((message.offset(), message.key(), message.value()))
        return False

    try:
        eventually(at_the_end, 30, what=f"offset {expected_end}", interval=0, state=lambda: out)
    finally:
        consumer.close()
    return out


def produce_all(bootstrap: str, topic: str, pairs: list[tuple[bytes, bytes | None]], **config) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **config})
    for key, value in pairs:
        producer.produce(topic, key=key, value=value)
    assert producer.flush(30) == 0


def test_a_compacted_topic_reads_back_latest_values_with_gaps_and_tombstones_go(tmp_path):
    logs = str(tmp_path / "logs")
    with trafka.Broker(data_dir=logs, log_cleaner_backoff_ms=3_600_000, clock="manual") as broker:
        topic = create_compacted(
            broker.bootstrap_servers, {"delete.retention.ms": "300", "internal.segment.bytes": "2048"}
        )
        writes = [(b"k%d" % (i % 10), b"v%d" % i) for i in range(200)] + [(b"k0", None), (b"k1", None)]
        produce_all(broker.bootstrap_servers, topic, writes)
        broker.compact(topic)
        read = consume_all(broker.bootstrap_servers, topic, 202)
        assert [(k, v) for _, k, v in read] == [(b"k%d" % i, b"v%d" % (190 + i)) for i in range(2, 10)] + [
            (b"k0", None),
            (b"k1", None),
        ]
        assert [o for o, _, _ in read] == [192, 193, 194, 195, 196, 197, 198, 199, 200, 201]
        broker.advance(0.4)  # past delete.retention.ms since the tombstones' first cleaning
        produce_all(broker.bootstrap_servers, topic, [(b"k2", b"new")])
        broker.compact(topic)
        after = consume_all(broker.bootstrap_servers, topic, 203)
        assert [(o, k, v) for o, k, v in after] == [
            *[(190 + i, b"k%d" % i, b"v%d" % (190 + i)) for i in range(3, 10)],
            (202, b"k2", b"new"),
        ]
    with trafka.Broker(data_dir=str(tmp_path / "logs"), log_cleaner_backoff_ms=3_600_000) as broker:
        assert consume_all(broker.bootstrap_servers, topic, 203) == after  # a restart keeps the cleaned log
        assert read_checkpoint(tmp_path / "logs" / "cleaner-offset-checkpoint") == {(topic, 0): 203}


def cleaner_processes(parent: int) -> list[int]:
    """The pids of the cleaner processes (`python -m trafka.app.cleaner.process`) of `parent`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if b"trafka.app.cleaner.process" in cmdline and ppid == parent:
            found.append(int(entry))
    return found


def wait_gone(pids: list[int], seconds: float = 10.0) -> None:
    def alive() -> list[int]:
        return [p for p in pids if os.path.exists(f"/proc/{p}") and not _zombie(p)]

    eventually(lambda: not alive(), seconds, what=f"processes {pids} to end", state=alive)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False


def test_filesystem_logs_are_cleaned_in_the_cleaner_process_which_stops_with_the_broker(tmp_path):
    with trafka.Broker(data_dir=str(tmp_path / "logs"), log_cleaner_backoff_ms=3_600_000) as broker:
        topic = create_compacted(broker.bootstrap_servers, {"internal.segment.bytes": "4096"})
        produce_all(broker.bootstrap_servers, topic, [(b"k%d" % (i % 10), b"v%d" % i) for i in range(300)])
        broker.compact(topic)
        [first] = cleaner_processes(os.getpid())  # the cleaning ran there, off the broker's GIL
        # at the lowest priority, from its start (ADR 61): the event loop gets the CPU first
        assert os.getpriority(os.PRIO_PROCESS, first) == 19
        assert len(broker.records(topic)) == 10
        os.kill(first, signal.SIGKILL)  # a cleaner process that dies is started again when next needed
        wait_gone([first])
        produce_all(broker.bootstrap_servers, topic, [(b"k%d" % (i % 10), b"w%d" % i) for i in range(300)])
        broker.compact(topic)
        [second] = cleaner_processes(os.getpid())
        assert second != first
        assert sorted((r.key, r.value) for r in broker.records(topic)) == [
            (b"k%d" % i, b"w%d" % (290 + i)) for i in range(10)
        ]
    wait_gone([second])  # the broker's stop takes it down


def read_checkpoint(path) -> dict[tuple[str, int], int]:
    lines = path.read_text().splitlines()
    assert lines[0] == "0" and int(lines[1]) == len(lines) - 2
    return {(t, int(p)): int(o) for t, p, o in (line.split(" ") for line in lines[2:])}


def test_the_background_cleaner_compacts_a_dirty_log(tmp_path):
    """The issue's case: 2,002 writes of 10 keys to 16 KiB segments with min.cleanable.dirty.ratio 0.01."""
    with trafka.Broker(data_dir=str(tmp_path / "logs"), log_cleaner_backoff_ms=100) as broker:
        topic = create_compacted(
            broker.bootstrap_servers, {"internal.segment.bytes": "16384", "min.cleanable.dirty.ratio": "0.01"}
        )
        writes = [(b"k%d" % (i % 10), b"x" * 50) for i in range(2002)]
        produce_all(broker.bootstrap_servers, topic, writes, **{"batch.size": 1000})

        def compacted() -> list | None:
            records = broker.records(topic)
            return records if len(records) < 500 else None

        records = eventually(compacted, 30, what="the background cleaner", interval=0.2)
        assert {r.key for r in records} == {b"k%d" % i for i in range(10)}


def test_the_consumer_offsets_log_is_cleaned_and_a_restart_keeps_the_commits(tmp_path):
    data_dir = tmp_path / "logs"
    with trafka.Broker(data_dir=str(data_dir), log_cleaner_backoff_ms=3_600_000) as broker:
        topic = create_compacted(broker.bootstrap_servers, partitions=3)
        consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "changelog-restorer"})
        try:
            for r in range(30):
                consumer.commit(offsets=[TopicPartition(topic, p, r * 10 + p) for p in range(3)], asynchronous=False)
        finally:
            consumer.close()
        offsets_dir = data_dir / "__consumer_offsets-0"
        before = sum(f.stat().st_size for f in offsets_dir.glob("*.log"))
        broker.compact("__consumer_offsets")
        after = sum(f.stat().st_size for f in offsets_dir.glob("*.log"))
        assert after < before / 5, (before, after)
        assert broker.committed("changelog-restorer") == {(topic, p): 290 + p for p in range(3)}
    with trafka.Broker(data_dir=str(data_dir), log_cleaner_backoff_ms=3_600_000) as broker:
        assert broker.committed("changelog-restorer") == {(topic, p): 290 + p for p in range(3)}


def test_compact_names_an_unknown_topic():
    with trafka.Broker() as broker, pytest.raises(BrokerError, match="unknown topic"):
        broker.compact("nope")


def test_the_cleaners_metrics_are_rendered_as_kafkas_jmx_exporter_names_them(tmp_path):
    config = tmp_path / "server.properties"
    config.write_text("log.cleaner.backoff.ms=100\n")
    process = BrokerProcess(["--memory", "--http-port", "0", "--config", str(config)]).start()
    try:
        topic = create_compacted(
            process.bootstrap, {"internal.segment.bytes": "4096", "min.cleanable.dirty.ratio": "0.01"}
        )
        writes = [(b"k%d" % (i % 5), b"x" * 40) for i in range(600)]
        produce_all(process.bootstrap, topic, writes, **{"batch.size": 500})

        def cleaned() -> dict[str, float] | None:
            with urllib.request.urlopen(process.http_url + "/metrics", timeout=10) as response:
                text = response.read().decode()
            samples = {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples}
            return samples if samples.get("kafka_log_logcleaner_max_clean_time_secs", 0) > 0 else None

        samples = eventually(cleaned, 30, what="a cleaning in the metrics", interval=0.2)
        assert 0 < samples["kafka_log_logcleaner_cleaner_recopy_percent"] < 100
        assert samples["kafka_log_logcleaner_deadthreadcount"] == 0
        for name in (
            "kafka_log_logcleaner_max_buffer_utilization_percent",
            "kafka_log_logcleaner_max_compaction_delay_secs",
            "kafka_log_logcleanermanager_max_dirty_percent",
            "kafka_log_logcleanermanager_time_since_last_run_ms",
        ):
            assert name in samples
        with urllib.request.urlopen(f"{process.http_url}/topics/{topic}", timeout=10) as response:
            page = response.read().decode()
        clean = re.search(r'data-value="(\d+)" class="num clean-bytes"', page)
        dirty = re.search(r'data-value="(\d+)" class="num dirty-bytes"', page)
        assert clean is not None and dirty is not None, page
        assert int(clean.group(1)) > 0  # the console's topic page shows the cleaned section
    finally:
        assert process.stop() == 0, process.log()


def test_dump_log_reads_a_cleaned_segment(tmp_path):
    from .test_dump_log import assert_same_as_kafka_python, dump, dump_json

    data_dir = tmp_path / "logs"
    with trafka.Broker(data_dir=str(data_dir), log_cleaner_backoff_ms=3_600_000) as broker:
        topic = create_compacted(broker.bootstrap_servers, {"index.interval.bytes": "100"})
        idempotent = {"enable.idempotence": True, "batch.size": 200}
        produce_all(broker.bootstrap_servers, topic, [(b"k%d" % (i % 7), b"v%d" % i) for i in range(300)], **idempotent)
        produce_all(broker.bootstrap_servers, topic, [(b"k1", None), (b"k9", b"x")])
        broker.compact(topic)
    segment = data_dir / f"{topic}-0"
    [dumped] = dump_json(str(segment / "00000000000000000000.log"), "--print-data-log")
    assert_same_as_kafka_python(segment / "00000000000000000000.log", dumped)
    horizons = [b for b in dumped["batches"] if b["deleteHorizonMs"] is not None]
    assert horizons and any(r["payload"] is None for b in horizons for r in b["records"])
    assert [b["producerId"] for b in dumped["batches"]].count(-1) <= 2  # the idempotent producer's batches kept ids
    verified = dump(str(segment / "00000000000000000000.index"), "--verify-index-only")
    assert verified.returncode == 0, verified.stdout


def test_a_consumer_group_restores_a_changelog_after_compaction(tmp_path):
    """As a Kafka Streams or Faust table restores: subscribe from the beginning, keep the last value."""
    with trafka.Broker(data_dir=str(tmp_path / "logs"), log_cleaner_backoff_ms=3_600_000) as broker:
        topic = create_compacted(broker.bootstrap_servers, {"internal.segment.bytes": "4096"}, partitions=2)
        writes = [(b"user-%d" % (i % 50), b"state-%d" % i) for i in range(2000)] + [(b"user-7", None)]
        produce_all(broker.bootstrap_servers, topic, writes)
        broker.compact(topic)
        stored = len(broker.records(topic))
        assert stored <= 60, stored
        consumer = Consumer(
            {
                "bootstrap.servers": broker.bootstrap_servers,
                "group.id": "restorer",
                "auto.offset.reset": "earliest",
                "enable.partition.eof": True,
            }
        )
        consumer.subscribe([topic])
        table: dict[bytes, bytes | None] = {}
        done: set[int] = set()

        def at_both_ends() -> bool:
            message = consumer.poll(0.5)
            if message is not None and message.error() is not None:
                assert message.error().code() == KafkaError._PARTITION_EOF, message.error()
                done.add(message.partition())
            elif message is not None:
                table[message.key()] = message.value()
            return len(done) == 2

        try:
            eventually(at_both_ends, 30, what="the end of both partitions", interval=0)
        finally:
            consumer.close()
        expected: dict[bytes, bytes | None] = {}
        for key, value in writes:
            expected[key] = value
        assert table == expected


def test_compact_delete_applies_retention_too(tmp_path):
    settings = {"log_cleaner_backoff_ms": 3_600_000, "log_retention_check_interval_ms": 100}
    with trafka.Broker(
        data_dir=str(tmp_path / "logs"), retention_initial_delay_ms=0, clock="manual", **settings
    ) as broker:
        topic = create_compacted(
            broker.bootstrap_servers,
            {"cleanup.policy": "compact,delete", "internal.segment.bytes": "1024", "retention.ms": "1500"},
        )
        produce_all(broker.bootstrap_servers, topic, [(b"k%d" % (i % 3), b"v" * 50) for i in range(100)])
        broker.compact(topic)
        assert len(broker.records(topic)) == 3  # compacted
        broker.advance(60)  # well past retention.ms of the records' times (their producer's wall clock)
        assert broker.records(topic) == []  # and then deleted by retention.ms


@pytest.mark.parametrize("delay", [0.2, 0.7, 1.5, 3.0])
def test_a_broker_killed_while_cleaning_loses_nothing(tmp_path, delay):
    """kill -9 at some point of a (throttled, so slow) background cleaning; the restarted broker has
    every key's last value, the whole offset range, and no half-done swap left behind."""
    config = tmp_path / "server.properties"
    config.write_text("log.cleaner.backoff.ms=50\nlog.cleaner.io.max.bytes.per.second=2000000\n")
    data_dir = tmp_path / "logs"
    broker = BrokerProcess(["--data-dir", str(data_dir), "--config", str(config)]).start()
    try:
        topic = create_compacted(
            broker.bootstrap, {"internal.segment.bytes": "65536", "min.cleanable.dirty.ratio": "0.01"}
        )
        writes = [(b"k%d" % (i % 100), b"%d:" % i + b"v" * 100) for i in range(20_000)]
        produce_all(broker.bootstrap, topic, writes, **{"batch.size": 4000})
        time.sleep(delay)
        cleaners = cleaner_processes(broker.process.pid)
    finally:
        broker.process.kill()
        broker.process.wait(10)
    # an orphaned cleaner process stops by itself at its next batch, before a new broker starts
    wait_gone(cleaners)
    leftovers_before = [
        p.name for p in (data_dir / f"{topic}-0").iterdir() if p.suffix in (".cleaned", ".swap", ".deleted")
    ]
    restarted = BrokerProcess(["--data-dir", str(data_dir), "--config", str(config)]).start()
    try:
        read = consume_all(restarted.bootstrap, topic, 20_000)
        latest: dict[bytes, bytes] = {}
        for key, value in writes:
            latest[key] = value
        got: dict[bytes | None, bytes | None] = {}
        for _, key, value in read:
            got[key] = value
        assert got == latest, f"leftovers at the kill: {leftovers_before}"
        offsets = [o for o, _, _ in read]
        assert offsets == sorted(set(offsets)) and offsets[-1] == 19_999
    finally:
        assert restarted.stop() == 0, restarted.log()
    names = [p.name for p in (data_dir / f"{topic}-0").iterdir()]
    assert not [n for n in names if n.endswith((".cleaned", ".swap", ".deleted"))], names
