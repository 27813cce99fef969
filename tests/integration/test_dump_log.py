"""`trafka dump-log` on segments written by Apache Kafka (the shared fixture) and by trafka, compared
field by field with what kafka-python's record reader (`kafka.record`) decodes from the same bytes."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.record import MemoryRecords

from .broker import BrokerProcess

KAFKA_LOGDIR = Path(__file__).resolve().parents[1] / "fixtures" / "kafka-4.0-kraft-logdir"


def dump(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trafka", "dump-log", *args], capture_output=True, text=True, timeout=60
    )


def dump_json(*args: str) -> list[dict]:
    result = dump(*args, "-o", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def kafka_python_batches(path: Path) -> list:
    records = MemoryRecords(path.read_bytes())
    out = []
    while (batch := records.next_batch()) is not None:
        valid = batch.validate_crc()  # before iterating, as kafka.record requires
        out.append((batch, list(batch), valid))
    return out


def assert_same_as_kafka_python(path: Path, dumped: dict) -> None:
    expected = kafka_python_batches(path)
    assert len(dumped["batches"]) == len(expected)
    position = 0
    for got, (batch, records, valid) in zip(dumped["batches"], expected):
        assert (got["baseOffset"], got["lastOffset"], got["count"]) == (
            batch.base_offset,
            batch.last_offset,
            batch.records_count,
        )
        assert (got["producerId"], got["producerEpoch"], got["baseSequence"]) == (
            batch.producer_id,
            batch.producer_epoch,
            batch.base_sequence,
        )
        assert (got["partitionLeaderEpoch"], got["magic"], got["crc"]) == (batch.leader_epoch, batch.magic, batch.crc)
        assert (got["isTransactional"], got["isControl"]) == (batch.is_transactional, batch.is_control_batch)
        assert (got["timestamp"], got["size"], got["position"]) == (batch.max_timestamp, batch.size_in_bytes, position)
        assert got["compresscodec"] == {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}[batch.compression_type]
        assert got["isvalid"] is True and valid
        position += batch.size_in_bytes
        assert len(got["records"]) == len(records)
        for dumped_record, record in zip(got["records"], records):
            assert (dumped_record["offset"], dumped_record["timestamp"]) == (record.offset, record.timestamp)
            assert dumped_record["headerKeys"] == [k for k, _ in record.headers]
            assert dumped_record["keySize"] == (-1 if record.key is None else len(record.key))
            assert dumped_record["valueSize"] == (-1 if record.value is None else len(record.value))
            if not batch.is_control_batch and "payload" in dumped_record:
                assert dumped_record["key"] == (None if record.key is None else record.key.decode())
                assert dumped_record["payload"] == (None if record.value is None else record.value.decode())


def test_a_segment_kafka_wrote_matches_kafka_python():
    path = KAFKA_LOGDIR / "foo-0" / "00000000000000000000.log"
    [dumped] = dump_json(str(path), "--print-data-log")
    assert_same_as_kafka_python(path, dumped)
    assert dumped["batches"][0]["records"][0]["payload"] == "Hello World!"


def test_text_output_is_kafka_dump_logs():
    path = KAFKA_LOGDIR / "foo-0" / "00000000000000000000.log"
    result = dump(str(path), "--print-data-log")
    assert result.returncode == 0
    assert result.stdout.splitlines() == [
        f"Dumping {path}",
        "Log starting offset: 0",
        "baseOffset: 0 lastOffset: 0 count: 1 baseSequence: 0 lastSequence: 0 producerId: 0 producerEpoch: 0 "
        "partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty "
        "position: 0 CreateTime: 1726045973899 size: 80 magic: 2 compresscodec: none crc: 2565609683 isvalid: true",
        "| offset: 0 CreateTime: 1726045973899 keySize: -1 valueSize: 12 sequence: 0 headerKeys: [] payload: Hello World!",
    ]
    assert "| offset" not in dump(str(path)).stdout  # batches only without --print-data-log


def test_the_cluster_metadata_decoder_reads_kafkas_kraft_records():
    path = KAFKA_LOGDIR / "__cluster_metadata-0" / "00000000000000000000.log"
    [dumped] = dump_json(str(path), "--print-data-log", "--cluster-metadata-decoder")
    payloads = [r["payload"] for b in dumped["batches"] for r in b["records"]]
    topic = next(p for p in payloads if p["type"] == "TopicRecord")
    assert topic["data"] == {"name": "foo", "topic_id": "bfd99e5e-3235-4552-81f8-d4af1741970c"}
    assert any(p["type"] == "FeatureLevelRecord" and p["data"]["name"] == "metadata.version" for p in payloads)


@pytest.fixture(scope="module")
def trafka_logdir(tmp_path_factory):
    data = tmp_path_factory.mktemp("dump")
    broker = BrokerProcess(["--data-dir", str(data)], env={"TRAFKA_GROUPS_INITIAL_REBALANCE_DELAY_MS": "0"}).start()
    try:
        plain = KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=0)
        for i in range(30):
            plain.send("dumped", key=b"k%d" % i, value=b"v" * 300, headers=[("h", b"1")]).get(10)
        plain.close()
        gzipped = KafkaProducer(bootstrap_servers=broker.bootstrap, compression_type="gzip", linger_ms=50)
        for i in range(5):
            gzipped.send("dumped", value=b"zipped %d" % i)
        gzipped.flush()
        gzipped.close()
        txn = KafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id="dumper")
        txn.init_transactions()
        txn.begin_transaction()
        txn.send("dumped", value=b"in a transaction")
        txn.commit_transaction()
        txn.close()
        consumer = KafkaConsumer(
            "dumped",
            bootstrap_servers=broker.bootstrap,
            group_id="dump-group",
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        while not consumer.poll(500):
            pass
        consumer.commit()
        consumer.close()
    finally:
        assert broker.stop() == 0, broker.log()
    return data


def test_a_segment_trafka_wrote_matches_kafka_python(trafka_logdir):
    path = trafka_logdir / "dumped-0" / "00000000000000000000.log"
    [dumped] = dump_json(str(path), "--print-data-log")
    assert_same_as_kafka_python(path, dumped)
    batches = dumped["batches"]
    assert batches[0]["records"][0]["key"] == "k0" and batches[0]["records"][0]["headerKeys"] == ["h"]
    assert any(b["compresscodec"] == "gzip" for b in batches)
    control = [b for b in batches if b["isControl"]]
    assert control and control[0]["isTransactional"] and control[0]["records"][0]["controlType"] == "COMMIT"


def test_index_entries_point_at_the_batches_and_verify(trafka_logdir, tmp_path):
    segment = trafka_logdir / "dumped-0"
    [index] = dump_json(str(segment / "00000000000000000000.index"))
    assert len(index["entries"]) >= 2 and index["mismatches"] == []
    [log] = dump_json(str(segment / "00000000000000000000.log"))
    last_offsets = {b["position"]: b["lastOffset"] for b in log["batches"]}
    assert all(last_offsets[e["position"]] == e["offset"] for e in index["entries"])
    [times] = dump_json(str(segment / "00000000000000000000.timeindex"))
    assert times["entries"] and times["mismatches"] == []
    verified = dump(str(segment / "00000000000000000000.index"), "--verify-index-only")
    assert verified.returncode == 0 and verified.stdout.splitlines() == [
        f"Dumping {segment / '00000000000000000000.index'}"
    ]

    broken = tmp_path / "dumped-0"
    shutil.copytree(segment, broken)
    with open(broken / "00000000000000000000.index", "r+b") as index_file:
        index_file.seek(8)
        index_file.write(struct.pack(">ii", 999, index["entries"][1]["position"]))
    bad = dump(str(broken / "00000000000000000000.index"), "--verify-index-only")
    assert bad.returncode == 1
    assert f"Index offset: 999, log offset: {index['entries'][1]['offset']}" in bad.stdout


def test_offsets_and_transaction_log_decoders(trafka_logdir):
    offsets = next((trafka_logdir / "__consumer_offsets-0").glob("*.log"))
    [dumped] = dump_json(str(offsets), "--print-data-log", "--offsets-decoder")
    commits = [r for b in dumped["batches"] for r in b["records"]]
    assert any(
        r["key"]["data"]["group"] == "dump-group"
        and r["key"]["data"].get("topic") == "dumped"
        and r["payload"]["data"]["offset"] > 0
        for r in commits
    )
    generations = [(r["payload"]["version"], r["payload"]["data"]) for r in commits if r["key"]["type"] == "2"]
    # the group as its JoinGroup created it (generation 0, as Kafka), then each generation; empty after close()
    assert [g["generation"] for _, g in generations] == list(range(len(generations)))
    (_, created), (version, stable), (_, empty) = generations[0], generations[1], generations[-1]
    assert created["members"] == [] and created["protocol"] is None and created["leader"] is None
    assert version == "3" and stable["protocol_type"] == "consumer" and stable["protocol"] == "range"
    assert [m["member_id"] for m in stable["members"]] == [stable["leader"]] and stable["members"][0]["assignment"]
    assert empty["members"] == [] and empty["leader"] is None
    txn = next((trafka_logdir / "__transaction_state-0").glob("*.log"))
    [dumped] = dump_json(str(txn), "--print-data-log", "--transaction-log-decoder")
    states = [r for b in dumped["batches"] for r in b["records"]]
    assert all(r["key"]["data"]["transactional_id"] == "dumper" for r in states)
    assert {r["payload"]["data"]["transaction_status"] for r in states if r["payload"]} >= {0}


def test_a_torn_tail_and_bad_files_are_reported(trafka_logdir, tmp_path):
    torn = tmp_path / "00000000000000000000.log"
    data = (trafka_logdir / "dumped-0" / "00000000000000000000.log").read_bytes()
    torn.write_bytes(data + data[:30])
    result = dump(str(torn))
    assert result.returncode == 0 and "Found 30 invalid bytes at the end of 00000000000000000000.log" in result.stdout
    corrupt = bytearray(data)
    corrupt[70] ^= 0xFF
    torn.write_bytes(bytes(corrupt))
    [dumped] = dump_json(str(torn), "--print-data-log")
    assert dumped["batches"][0]["isvalid"] is False and "records" not in dumped["batches"][0]
    other = tmp_path / "notes.txt"
    other.write_text("x")
    result = dump(str(other))
    assert result.returncode == 1 and result.stderr.startswith("trafka: ") and "not a .log" in result.stderr
    missing = dump(str(tmp_path / "missing.log"))
    assert missing.returncode == 1 and "cannot read" in missing.stderr
    assert os.path.exists(trafka_logdir / "dumped-0")


def test_the_share_group_state_decoder_reads_share_snapshots(tmp_path):
    import uuid

    import crc32c

    from trafka.adapters.filesystem import FileLogStore, LogDir
    from trafka.adapters.filesystem.internal_log import InternalLog
    from trafka.adapters.filesystem.share_state_store import FileShareStateStore
    from trafka.domain.ports import ShareSnapshot
    from trafka.domain.topics import TopicPartition

    logdir = LogDir.open(str(tmp_path), 1, uuid.UUID(int=1), uuid.UUID(int=2))
    logs = FileLogStore(logdir, crc32c.crc32c, lambda: 1_000)
    state = TopicPartition("__share_group_state", 0)
    store = FileShareStateStore(InternalLog(logs, state, uuid.UUID(int=3), crc32c.crc32c, lambda: 1_000), lambda: 7)
    topic_id = uuid.UUID(int=9)
    store.write([ShareSnapshot("workers", topic_id, 0, 42, ((42, 45, 2, 1), (46, 46, 4, 5)))], [])
    store.write([ShareSnapshot("workers", topic_id, 0, 42, ((42, 45, 2, 1), (46, 46, 4, 5), (47, 48, 2, 1)))], [])
    logs.close()
    logdir.unlock()
    segment = next((tmp_path / "__share_group_state-0").glob("*.log"))
    [dumped] = dump_json(str(segment), "--print-data-log", "--share-group-state-decoder")
    [record, update] = [r for b in dumped["batches"] for r in b["records"]]
    assert update["key"]["type"] == "1"  # a ShareUpdate: only the batch that changed
    assert [(b["first_offset"], b["last_offset"]) for b in update["payload"]["data"]["state_batches"]] == [(47, 48)]
    assert update["payload"]["data"]["delivery_complete_count"] == 7
    assert record["key"] == {
        "type": "0",
        "data": {"group_id": "workers", "topic_id": str(topic_id), "partition": 0},
    }
    data = record["payload"]["data"]
    assert (data["start_offset"], data["write_timestamp"]) == (42, 7)
    assert [
        (b["first_offset"], b["last_offset"], b["delivery_state"], b["delivery_count"]) for b in data["state_batches"]
    ] == [
        (42, 45, 2, 1),
        (46, 46, 4, 5),
    ]


def test_the_offsets_decoder_reads_share_group_records(tmp_path):
    import uuid

    from tests.contract.test_group_metadata_store import FileStores
    from trafka.domain.groups.modern.records import GroupEpoch
    from trafka.domain.groups.share.records import ShareCurrentAssignment, ShareGroupRecord, ShareRecordKind

    stores = FileStores(str(tmp_path))
    store = stores.open()
    topic_id = uuid.UUID(int=9)
    store.store_share_group_records(
        [
            ShareGroupRecord(ShareRecordKind.GROUP_EPOCH, "workers", None, GroupEpoch(4)),
            ShareGroupRecord(
                ShareRecordKind.CURRENT_ASSIGNMENT,
                "workers",
                "m1",
                ShareCurrentAssignment(4, 3, 2, ((topic_id, (0,)),)),
            ),
        ]
    )
    stores.logs.close()
    stores.logdir.unlock()
    segment = next((tmp_path / "__consumer_offsets-0").glob("*.log"))
    [dumped] = dump_json(str(segment), "--print-data-log", "--offsets-decoder")
    epoch, member = [r for b in dumped["batches"] for r in b["records"]]
    assert epoch["key"] == {"type": "11", "data": {"group_id": "workers"}}
    assert epoch["payload"]["data"]["epoch"] == 4
    assert member["key"] == {"type": "14", "data": {"group_id": "workers", "member_id": "m1"}}
    assert member["payload"]["data"]["member_epoch"] == 4
    assert member["payload"]["data"]["assigned_partitions"][0]["topic_id"] == str(topic_id)
