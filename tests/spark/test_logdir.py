"""The data-dir source's reader (`trafka.adapters.filesystem.read_only.ReadOnlyLogDir`): read-only, torn tails, control
batches, index use, corruption, and a log dir Apache Kafka 4.0 wrote."""

from __future__ import annotations

import glob
import hashlib
import os
import shutil

import pytest

import trafka.app.wiring.spark as wiring
from trafka.adapters.filesystem import read_only
from trafka.adapters.spark import SourceError
from trafka.domain.batch import BatchHeader

from .batches import build_batch, commit_marker
from .records import TOPIC, collect

KAFKA_FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "kafka-4.0-kraft-logdir")


def snapshot(directory) -> dict[str, str]:
    """Every file under `directory` with the hash of its content."""
    out = {}
    for root, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, directory)] = hashlib.sha256(f.read()).hexdigest()
    return out


@pytest.fixture
def copied(broker, produced, tmp_path) -> str:
    target = str(tmp_path / "logdir")
    shutil.copytree(broker.data_dir, target)
    return target


def last_segment(data_dir: str, partition: int) -> str:
    return sorted(glob.glob(os.path.join(data_dir, f"{TOPIC}-{partition}", "*.log")))[-1]


def test_a_kafka_4_0_log_dir_is_read_without_a_write(spark, tmp_path):
    assert os.path.isdir(KAFKA_FIXTURE), f"the Kafka 4.0 log dir fixture is missing at {os.path.abspath(KAFKA_FIXTURE)}"
    data_dir = str(tmp_path / "kafka")
    shutil.copytree(KAFKA_FIXTURE, data_dir)
    before = snapshot(data_dir)
    rows = spark.read.format("trafka").options(data_dir=data_dir, topic="foo").load().collect()
    assert [(r.partition, r.offset, r.key, bytes(r.value)) for r in rows] == [(0, 0, None, b"Hello World!")]
    assert snapshot(data_dir) == before


def test_control_batches_and_a_torn_tail(spark, produced, copied):
    """A commit marker takes an offset but no row; half a batch at the end is a tail being written."""
    reader = wiring.open_log_dir(copied)
    end = reader.log_end_offset(TOPIC, 1)
    appended = build_batch(
        end + 1,
        [(1_800_000_000_000, b"after", b"marker", [("h", b"1")]), (1_800_000_000_001, None, b"second", [])],
        codec="zstd",
    )
    torn = build_batch(end + 3, [(1_800_000_000_002, b"torn", b"x" * 500, [])])
    with open(last_segment(copied, 1), "ab") as f:
        f.write(commit_marker(end, 1_800_000_000_000) + appended + torn[: len(torn) // 2])
    assert wiring.open_log_dir(copied).log_end_offset(TOPIC, 1) == end + 3

    frame = spark.read.format("trafka").options(data_dir=copied, topic=TOPIC, includeHeaders="true").load()
    new = {
        (TOPIC, 1, end + 1, b"after", b"marker", 1_800_000_000_000, 0, (("h", b"1"),)),
        (TOPIC, 1, end + 2, None, b"second", 1_800_000_000_001, 0, None),
    }
    assert collect(frame) == set(produced.rows) | new


def test_index_lookups_and_small_reads_give_the_same_batches(produced, copied, monkeypatch):
    reader = wiring.open_log_dir(copied)
    everything = list(reader.batches(TOPIC, 0, 0))
    headers = [BatchHeader.parse(b) for b in everything]
    assert [h.base_offset for h in headers[1:]] == [h.next_offset for h in headers[:-1]]
    assert headers[-1].next_offset == reader.log_end_offset(TOPIC, 0) == produced.end_offsets()[0]
    indexes = sorted(glob.glob(os.path.join(copied, f"{TOPIC}-0", "*.index")))
    assert os.path.getsize(indexes[0]) > 0, "index.interval.bytes=1024 should have indexed the first segment"
    for index in indexes:
        with open(index, "ab") as f:
            f.write(bytes(8 * 64))  # Kafka preallocates its index files with zeros
    monkeypatch.setattr(read_only, "_READ_CHUNK", 100)
    for offset in range(0, produced.end_offsets()[0], 17):
        expected = [b for b, h in zip(everything, headers) if h.last_offset >= offset]
        assert list(wiring.open_log_dir(copied).batches(TOPIC, 0, offset)) == expected


def test_corruption_before_the_last_segment_is_an_error(copied):
    first = sorted(glob.glob(os.path.join(copied, f"{TOPIC}-2", "*.log")))[0]
    with open(first, "r+b") as f:
        f.seek(70)
        f.write(b"\xff")
    with pytest.raises(
        SourceError,
        match=r"segment .*00000000000000000000\.log is corrupt at position 0: batch at offset 0 fails its CRC",
    ):
        list(wiring.open_log_dir(copied).batches(TOPIC, 2, 0))


def test_a_bad_batch_at_the_end_ends_the_log(produced, copied):
    end = produced.end_offsets()[2]
    with open(last_segment(copied, 2), "r+b") as f:
        f.seek(-3, os.SEEK_END)  # inside the last batch: as a crash mid-write could leave it
        f.write(b"\x00\x01\x02")
    reader = wiring.open_log_dir(copied)
    batches = list(reader.batches(TOPIC, 2, 0))
    last = BatchHeader.parse(batches[-1])
    assert last.next_offset == reader.log_end_offset(TOPIC, 2) < end


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda tmp: str(tmp / "missing"), "does not exist"),
        (lambda tmp: (tmp / "file").write_text("x") and str(tmp / "file"), "is not a directory"),
        (lambda tmp: str(tmp), "is not a Kafka or trafka log dir (no meta.properties)"),
        (lambda tmp: (tmp / "meta.properties").write_text("version=7\n") and str(tmp), "unsupported version '7'"),
    ],
)
def test_unusable_data_dirs(tmp_path, make, message):
    with pytest.raises(SourceError, match=message.replace("(", r"\(").replace(")", r"\)")):
        wiring.open_log_dir(make(tmp_path))
