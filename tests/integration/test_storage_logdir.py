"""The data dir is a Kafka log dir: trafka reads one Apache Kafka 4.0 wrote, writes files an
independent decoder (kafka-python's record batch reader) accepts, lays them out as Kafka does, and
refuses a directory it must not use without touching it.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import signal
import stat
import struct
import subprocess
import sys

import pytest
from confluent_kafka import TopicCollection
from kafka.record.default_records import DefaultRecordBatch

from .broker import DATA_DIR_ENV, BrokerProcess, running
from .clients import confluent_admin, create_topic, produce_batches, read_partition

TIMEOUT = 15.0
FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "kafka-4.0-kraft-logdir")
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
TOPIC_RECORD, PARTITION_RECORD = 2, 3


# -- helpers ---------------------------------------------------------------------------------------


def stop_clean(broker: BrokerProcess) -> None:
    assert broker.stop(signal.SIGTERM) == 0, broker.log()


def topic_id(bootstrap: str, topic: str) -> str:
    """The topic id the broker reports, in Kafka's text form (URL-safe base64, no padding)."""
    client = confluent_admin(bootstrap)
    value = client.describe_topics(TopicCollection([topic]), request_timeout=TIMEOUT)[topic].result(TIMEOUT).topic_id
    msb, lsb = value.get_most_significant_bits(), value.get_least_significant_bits()
    return kafka_uuid(struct.pack(">qq", msb, lsb))


def read_batches(path: str) -> list[tuple[int, DefaultRecordBatch]]:
    """Every batch in a `.log` file as (position, batch); the file must end on a batch boundary."""
    with open(path, "rb") as f:
        raw = f.read()
    out = []
    pos = 0
    while pos < len(raw):
        assert len(raw) - pos >= 61, f"{path}: {len(raw) - pos} stray bytes at {pos}"
        size = 12 + struct.unpack_from(">i", raw, pos + 8)[0]
        assert pos + size <= len(raw), f"{path}: the batch at {pos} runs past the end of the file"
        out.append((pos, DefaultRecordBatch(raw[pos : pos + size])))
        pos += size
    return out


def read_uvarint(data: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def metadata_records(data_dir) -> list[tuple[int, int, int, int, bytes]]:
    """(offset, frame version, record type, record version, body) of every KRaft metadata record,
    decoded independently of trafka; every batch's CRC checked, offsets increasing (a log Kafka
    wrote may have gaps)."""
    out = []
    expected = 0
    directory = os.path.join(str(data_dir), "__cluster_metadata-0")
    for name in sorted(n for n in os.listdir(directory) if n.endswith(".log")):
        for _, batch in read_batches(os.path.join(directory, name)):
            assert batch.validate_crc(), f"metadata batch at offset {batch.base_offset} fails its CRC"
            assert batch.base_offset >= expected, "metadata log offsets go backwards"
            expected = batch.next_offset
            if batch.is_control_batch:
                continue
            for record in batch:
                value = bytes(record.value)
                frame_version, pos = read_uvarint(value, 0)
                record_type, pos = read_uvarint(value, pos)
                record_version, pos = read_uvarint(value, pos)
                out.append((record.offset, frame_version, record_type, record_version, value[pos:]))
    return out


def kafka_uuid(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def properties(path) -> dict[str, str]:
    with open(path) as f:
        return dict(line.split("=", 1) for line in f.read().splitlines() if "=" in line and not line.startswith("#"))


def copy_fixture(tmp_path) -> str:
    if not os.path.isdir(FIXTURE):
        pytest.fail(f"the Kafka 4.0 log dir fixture is missing at {os.path.abspath(FIXTURE)}")
    target = str(tmp_path / "kafka-logdir")
    shutil.copytree(FIXTURE, target)
    for root, dirs, files in os.walk(target):
        for name in dirs + files:
            path = os.path.join(root, name)
            os.chmod(path, os.stat(path).st_mode | stat.S_IWUSR)
    os.chmod(target, os.stat(target).st_mode | stat.S_IWUSR)
    return target


# -- a log dir Apache Kafka 4.0 wrote -------------------------------------------------------------------


def test_serves_and_extends_a_kafka_4_0_log_dir(tmp_path):
    data_dir = copy_fixture(tmp_path)
    meta_before = properties(os.path.join(data_dir, "meta.properties"))
    with open(os.path.join(data_dir, "foo-0", "partition.metadata")) as f:
        foo_metadata = f.read()
    foo_id = re.search(r"topic_id: (\S+)", foo_metadata).group(1)
    kafka_records = metadata_records(data_dir)
    assert kafka_records, "the fixture's metadata log holds no records"

    with running(data_dir) as broker:
        b = broker.bootstrap
        assert read_partition(b, "foo", 0, 0, 1) == [(0, None, b"Hello World!")]
        assert topic_id(b, "foo") == foo_id
        reports = produce_batches(b, "foo", [[(0, b"k", b"written by trafka")]])
        assert [(p, o) for p, o, _, _ in reports] == [(0, 1)]
        assert read_partition(b, "foo", 0, 0, 2) == [(0, None, b"Hello World!"), (1, b"k", b"written by trafka")]

        create_topic(b, "bar", 3)
        bar_id = topic_id(b, "bar")
        client = confluent_admin(b)
        assert client.describe_cluster(request_timeout=TIMEOUT).result(TIMEOUT).cluster_id == meta_before["cluster.id"]
        assert client.list_topics(timeout=TIMEOUT).cluster_id == meta_before["cluster.id"]

        records = metadata_records(data_dir)
        assert records[: len(kafka_records)] == kafka_records, "Kafka's metadata records were changed"
        added = records[len(kafka_records) :]
        kafka_end = kafka_records[-1][0] + 1
        assert [r[0] for r in added] == list(range(kafka_end, kafka_end + len(added))), "appended offsets"
        assert all(frame == 1 for _, frame, _, _, _ in added), "frame version must be 1"
        topic_records = []
        for _, _, record_type, _, body in added:
            if record_type == TOPIC_RECORD:
                name_length, pos = read_uvarint(body, 0)  # compact string: length + 1
                name = body[pos : pos + name_length - 1].decode()
                topic_records.append((name, kafka_uuid(body[pos + name_length - 1 : pos + name_length + 15])))
        # trafka's internal topics first (one partition each, ADR 64), then the topic created
        internal = {"__consumer_offsets", "__transaction_state", "__share_group_state"}
        assert [name for name, _ in topic_records[:3]] == sorted(internal, key=[n for n, _ in topic_records].index)
        assert {name for name, _ in topic_records[:3]} == internal
        assert topic_records[3:] == [("bar", bar_id)]
        internal_ids = {topic_id for name, topic_id in topic_records if name in internal}
        partition_records = sorted(
            (struct.unpack_from(">i", body, 0)[0], kafka_uuid(body[4:20]))
            for _, _, record_type, _, body in added
            if record_type == PARTITION_RECORD and kafka_uuid(body[4:20]) not in internal_ids
        )
        assert partition_records == [(0, bar_id), (1, bar_id), (2, bar_id)]
        stop_clean(broker)

    with open(os.path.join(data_dir, "foo-0", "partition.metadata")) as f:
        assert f.read() == foo_metadata
    meta_after = properties(os.path.join(data_dir, "meta.properties"))
    for key in ("cluster.id", "node.id", "directory.id", "version"):
        assert meta_after[key] == meta_before[key], key

    with running(data_dir) as broker:  # and all of it is there again after a restart
        assert read_partition(broker.bootstrap, "foo", 0, 0, 2)[1] == (1, b"k", b"written by trafka")
        assert topic_id(broker.bootstrap, "bar") == bar_id
        stop_clean(broker)


# -- segments an independent decoder accepts ----------------------------------------------------------


def test_segments_and_indexes_decode_independently(tmp_path):
    topic, partitions, interval = "codecs", 2, 1024
    reports = []

    def produce_with(bootstrap: str, codecs: list[str]) -> None:
        for codec in codecs:
            batches = [
                [
                    (i % partitions, f"{codec}-{b}-{i}".encode(), os.urandom(40).hex().encode() + b"x" * 200)
                    for i in range(24)
                ]
                for b in range(8)
            ]
            reports.extend(produce_batches(bootstrap, topic, batches, **{"compression.type": codec}))

    # Half the codecs, a kill -9 (so the next start recovers and rebuilds the indexes), the rest.
    with running(tmp_path) as broker:
        configs = {"internal.segment.bytes": "16384", "index.interval.bytes": str(interval)}
        create_topic(broker.bootstrap, topic, partitions, configs)
        produce_with(broker.bootstrap, list(CODECS)[:3])
        broker.process.kill()
        broker.process.wait(10)
    with running(tmp_path) as broker:
        produce_with(broker.bootstrap, list(CODECS)[3:])
        stop_clean(broker)

    expected = {(p, o): (k, v) for p, o, k, v in reports}
    seen: dict[tuple[int, int], tuple[bytes | None, bytes]] = {}
    codecs_seen = set()
    for partition in range(partitions):
        directory = str(tmp_path / f"{topic}-{partition}")
        logs = sorted(n for n in os.listdir(directory) if n.endswith(".log"))
        assert len(logs) >= 3, "the test needs several segments"
        next_offset = 0
        for name in logs:
            assert re.fullmatch(r"\d{20}\.log", name)
            segment_base = int(name[:20])
            assert segment_base == next_offset, f"{name}: the segment's name is not its first offset"
            batches = read_batches(os.path.join(directory, name))
            assert batches, f"{name} is empty"
            spans = []
            for pos, batch in batches:
                assert batch.validate_crc(), f"{name}: the batch at {pos} fails its CRC"
                assert batch.base_offset == next_offset, f"{name}: offsets are not consecutive at {pos}"
                records = list(batch)
                assert [r.offset for r in records] == list(range(batch.base_offset, batch.next_offset))
                for r in records:
                    seen[(partition, r.offset)] = (r.key, r.value)
                codecs_seen.add(batch.compression_type)
                spans.append((pos, batch.size_in_bytes, batch.base_offset, batch.last_offset, batch.max_timestamp))
                next_offset = batch.next_offset
            _check_offset_index(os.path.join(directory, name[:20] + ".index"), segment_base, spans, interval)
            _check_time_index(os.path.join(directory, name[:20] + ".timeindex"), segment_base, spans)
        assert next_offset == sum(1 for p, _ in expected if p == partition)
    assert seen == expected, "the records decoded from the segments are not the ones produced"
    assert codecs_seen == set(CODECS.values())


def _check_offset_index(path: str, base: int, spans, interval: int) -> None:
    with open(path, "rb") as f:
        raw = f.read()
    assert len(raw) % 8 == 0, f"{path}: {len(raw)} bytes is not a whole number of entries"
    entries = [struct.unpack_from(">ii", raw, i) for i in range(0, len(raw), 8)]
    by_position = {pos: (first, last) for pos, _, first, last, _ in spans}
    for rel, pos in entries:
        assert pos in by_position, f"{path}: entry ({rel}, {pos}) does not point at a batch start"
        first, last = by_position[pos]
        assert first <= base + rel <= last, f"{path}: entry ({rel}, {pos}) points at a batch without {base + rel}"
    assert all(b[0] > a[0] and b[1] > a[1] for a, b in zip(entries, entries[1:])), f"{path}: entries not increasing"
    # Sparse, but no sparser than one entry per index.interval.bytes (plus one batch).
    largest = max(size for _, size, _, _, _ in spans)
    end = spans[-1][0] + spans[-1][1]
    marks = [0] + [pos for _, pos in entries] + [end]
    assert all(b - a <= interval + 2 * largest for a, b in zip(marks, marks[1:])), f"{path}: entries too far apart"
    if end > interval + 2 * largest:
        assert entries, f"{path}: no index entry in {end} bytes"


def _check_time_index(path: str, base: int, spans) -> None:
    with open(path, "rb") as f:
        raw = f.read()
    assert len(raw) % 12 == 0, f"{path}: {len(raw)} bytes is not a whole number of entries"
    entries = [struct.unpack_from(">qi", raw, i) for i in range(0, len(raw), 12)]
    assert all(b[0] >= a[0] and b[1] >= a[1] for a, b in zip(entries, entries[1:])), f"{path}: entries decrease"
    for timestamp, rel in entries:
        # (max timestamp so far, the last offset of the batch holding it), as Kafka's LogSegment keeps it
        upto = [s for s in spans if s[2] <= base + rel]
        assert upto and upto[-1][3] == base + rel, f"{path}: entry offset {base + rel} is not a batch's last offset"
        assert timestamp == max(s[4] for s in upto), f"{path}: ({timestamp}, {rel}) is not the max timestamp so far"


# -- the layout --------------------------------------------------------------------------------------


def test_log_dir_layout_and_clean_shutdown_files(tmp_path):
    data_dir = tmp_path / "data"  # does not exist yet: trafka creates it
    counts = {0: 7, 1: 4}
    with running(data_dir) as broker:
        b = broker.bootstrap
        create_topic(b, "lay", 2)
        produce_batches(b, "lay", [[(p, None, b"v%d" % i) for p in counts for i in range(counts[p])]])
        lay_id = topic_id(b, "lay")
        client = confluent_admin(b)
        reported_cluster_id = client.describe_cluster(request_timeout=TIMEOUT).result(TIMEOUT).cluster_id

        assert not (data_dir / ".kafka_cleanshutdown").exists(), "the clean shutdown marker exists while running"
        meta = properties(data_dir / "meta.properties")
        assert meta["version"] == "1"
        assert meta["node.id"] == "1"
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", meta["cluster.id"])
        assert meta["cluster.id"] == reported_cluster_id
        assert len(base64.urlsafe_b64decode(meta["directory.id"] + "==")) == 16
        for p in counts:
            directory = data_dir / f"lay-{p}"
            assert directory.is_dir()
            assert {"0" * 20 + ".log", "partition.metadata"} <= set(os.listdir(directory))
            assert (directory / "partition.metadata").read_text() == f"version: 0\ntopic_id: {lay_id}"
        stop_clean(broker)

    stem = "0" * 20
    segment_files = {p: set(os.listdir(data_dir / f"lay-{p}")) for p in counts}

    assert (data_dir / ".kafka_cleanshutdown").exists(), "no clean shutdown marker after a clean stop"
    recovery = _checkpoint(data_dir / "recovery-point-offset-checkpoint")
    assert recovery[("lay", 0)] == counts[0] and recovery[("lay", 1)] == counts[1]
    starts = _checkpoint(data_dir / "log-start-offset-checkpoint")
    assert starts.get(("lay", 0), 0) == 0 and starts.get(("lay", 1), 0) == 0  # Kafka omits offset 0 entries

    with running(data_dir) as broker:
        assert not (data_dir / ".kafka_cleanshutdown").exists(), "the marker was not removed at startup"
        assert properties(data_dir / "meta.properties") == meta
        broker.process.kill()
        broker.process.wait(10)
    assert not (data_dir / ".kafka_cleanshutdown").exists(), "a killed broker left a clean shutdown marker"

    # Every segment has its .index and .timeindex, as Kafka's LogSegment creates them on the first
    # append, even while they hold no entry yet; and a clean stop leaves each partition written in
    # this run a producer snapshot at its end offset, as Kafka's UnifiedLog.close takes one (even
    # with no idempotent producer: ProducerStateManager.takeSnapshot writes at the log's end); the
    # leader epochs are in leader-epoch-checkpoint, as Kafka's makeLeader leaves it.
    for p, names in segment_files.items():
        expected = {
            f"{stem}.log",
            f"{stem}.index",
            f"{stem}.timeindex",
            f"{counts[p]:020d}.snapshot",
            "partition.metadata",
            "leader-epoch-checkpoint",
        }
        assert names == expected, (p, names)


def _checkpoint(path) -> dict[tuple[str, int], int]:
    lines = path.read_text().split("\n")
    assert lines[-1] == "", f"{path} does not end with a newline"
    lines = lines[:-1]
    assert lines[0] == "0", f"{path}: version line {lines[0]!r}"
    assert int(lines[1]) == len(lines) - 2, f"{path}: the count does not match the entries"
    out = {}
    for line in lines[2:]:
        match = re.fullmatch(r"(\S+) (\d+) (\d+)", line)
        assert match, f"{path}: bad entry {line!r}"
        out[(match.group(1), int(match.group(2)))] = int(match.group(3))
    return out


# -- data dirs trafka must refuse ----------------------------------------------------------------------


def _snapshot(path: str) -> list[tuple]:
    """Everything observable about a path and what is under it."""

    def entry(p: str) -> tuple:
        st = os.lstat(p)
        digest = None
        if stat.S_ISREG(st.st_mode):
            with open(p, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
        return (os.path.relpath(p, path), st.st_mode, st.st_size, st.st_mtime_ns, digest)

    out = [entry(path)]
    if os.path.isdir(path):
        for root, dirs, files in os.walk(path):
            out += [entry(os.path.join(root, n)) for n in sorted(dirs + files)]
    return sorted(out, key=lambda e: e[0])


def _without_root_powers() -> list[str]:
    """A command prefix under which permission bits apply, even for root."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: permission bits cannot be enforced")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--"]


def _meta(node_id: int = 1, version: int = 1) -> str:
    return (
        "#\ncluster.id=7Cuz9nmnQG-6bsNyNEQZ3Q\ndirectory.id=AiSXPLrdRM-HREWplhnaNA\n"
        f"node.id={node_id}\nversion={version}\n"
    )


def _bad_dir(kind: str, tmp_path) -> tuple[str, str, str, list[str]]:
    """(data dir path, path whose snapshot must not change, problem regex, command prefix)."""
    path = str(tmp_path / "data")
    if kind == "non-empty-without-meta":
        os.mkdir(path)
        with open(os.path.join(path, "notes.txt"), "wb") as f:
            f.write(os.urandom(100))
        return path, path, r"meta\.properties|not empty|neither empty", []
    if kind == "a-regular-file":
        with open(path, "wb") as f:
            f.write(os.urandom(100))
        return path, path, r"not a directory", []
    if kind == "a-file-where-a-partition-dir-should-be":
        os.mkdir(path)
        (tmp_path / "data" / "meta.properties").write_text(_meta())
        (tmp_path / "data" / "orders-0").write_bytes(os.urandom(100))
        return path, path, r"orders-0.*not a directory", []
    if kind == "another-node":
        os.mkdir(path)
        (tmp_path / "data" / "meta.properties").write_text(_meta(node_id=7))
        return path, path, r"node", []
    if kind == "unsupported-meta-version":
        os.mkdir(path)
        (tmp_path / "data" / "meta.properties").write_text(_meta(version=9))
        return path, path, r"version", []
    if kind == "not-writable":
        prefix = _without_root_powers()
        os.mkdir(path)
        (tmp_path / "data" / "meta.properties").write_text(_meta())
        os.chmod(path, 0o555)
        return path, path, r"writ|permission", prefix
    assert kind == "parent-not-writable"
    prefix = _without_root_powers()
    parent = str(tmp_path / "locked")
    os.mkdir(parent)
    os.chmod(parent, 0o555)
    return os.path.join(parent, "data"), parent, r"writ|permission|creat", prefix


@pytest.mark.parametrize(
    "kind",
    [
        "non-empty-without-meta",
        "a-regular-file",
        "a-file-where-a-partition-dir-should-be",
        "another-node",
        "unsupported-meta-version",
        "not-writable",
        "parent-not-writable",
    ],
)
def test_an_unusable_data_dir_is_refused_untouched(tmp_path, kind):
    path, watched, problem, prefix = _bad_dir(kind, tmp_path)
    before = _snapshot(watched)
    try:
        result = subprocess.run(
            [
                *prefix,
                sys.executable,
                "-m",
                "trafka",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--data-dir",
                path,
            ],
            capture_output=True,
            text=True,
            timeout=20,
            env={**os.environ, **DATA_DIR_ENV},
        )
        after = _snapshot(watched)
    finally:
        for p in (path, watched):
            if os.path.isdir(p):
                os.chmod(p, 0o755)  # so pytest can clean up
    assert result.returncode == 1, f"trafka accepted {path} or failed otherwise:\n{result.stdout}{result.stderr}"
    assert "listening" not in result.stdout
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert path in result.stderr, f"stderr does not name {path}:\n{result.stderr}"
    assert re.search(problem, result.stderr, re.I), f"stderr does not say what is wrong:\n{result.stderr}"
    assert "Traceback" not in result.stderr, result.stderr
    assert after == before, f"{watched} was modified"
