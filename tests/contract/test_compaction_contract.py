"""The cleaner on both stores: the same writes cleaned alike, byte for byte; the filesystem's swap
protocol survives a crash at every step, and a restart keeps the cleaned state."""

from __future__ import annotations

import os
import uuid

import crc32c
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.batches import make_batch, read_batches
from trafka.adapters.compression import compress, decompress
from trafka.adapters.filesystem import FileLogStore, LogDir, segment_swap
from trafka.adapters.memory import MemoryLogStore
from trafka.domain.batch import assign_offsets, validate_batches
from trafka.domain.compaction import Cleaner, CompactionConfig, cleanable_offsets, log_to_clean
from trafka.domain.topics import Topic, TopicPartition

TP = TopicPartition("c", 0)
TOPIC = Topic("c", uuid.UUID(int=9), 1, {"internal.segment.bytes": "400", "index.interval.bytes": "100"})
CONFIG = CompactionConfig(delete_retention_ms=1000, segment_bytes=400)
CLEANER = Cleaner(crc32c.crc32c, decompress, compress, 1 << 20)


class Clock:
    now = 1_000

    def __call__(self) -> int:
        return self.now


class FileStore:
    def __init__(self, path: str) -> None:
        self.path = path
        self.open()

    def open(self) -> None:
        self.logdir = LogDir.open(self.path, 1, uuid.UUID(int=1), uuid.UUID(int=2))
        self.store = FileLogStore(self.logdir, crc32c.crc32c, Clock())
        self.log = self.store.open(TP, TOPIC)
        self.logdir.start()

    def restart(self, clean: bool) -> None:
        if clean:
            self.store.close()
            self.logdir.mark_clean_shutdown()
        else:  # kill -9: nothing flushed or checkpointed beyond what was written
            for partition_log in self.store.logs().values():
                partition_log.close()
        self.logdir.unlock()
        self.open()


def append(log, records, compression: int = 0) -> None:
    validated = validate_batches(make_batch(records, compression), crc32c.crc32c, 1 << 20)
    log.append(validated.buffer, assign_offsets(validated, log.log_end_offset, 0, crc32c.crc32c))


def clean(log, now: int, checkpoint: int | None = None) -> int:
    segments = log.segment_infos()
    first_dirty, uncleanable, _ = cleanable_offsets(
        segments, log.log_start_offset, log.log_end_offset, checkpoint, log.log_end_offset, now, 0
    )
    end, _ = CLEANER.clean(
        log, log_to_clean(TP, segments, first_dirty, uncleanable), CONFIG, {}, now, log.replace_segments
    )
    return end


def everything(log) -> bytes:
    out = b""
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        chunk = log.read(offset, 1 << 24, True)
        if not chunk:
            break
        out += chunk
        last = read_batches(chunk)[-1]
        offset = last.base_offset + last.last_offset_delta + 1
    return out


def records(log) -> list[tuple[int, bytes | None, bytes | None]]:
    return [(r.offset, r.key, r.value) for b in read_batches(everything(log)) for r in b]


batches = st.lists(
    st.tuples(
        st.lists(
            st.tuples(st.sampled_from([b"a", b"b", b"c", b"d", b"e"]), st.none() | st.binary(max_size=40)),
            min_size=1,
            max_size=5,
        ),
        st.sampled_from([0, 1, 3]),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=batches, second=batches)
def test_both_stores_clean_alike_and_a_restart_keeps_it(tmp_path_factory, first, second):
    memory = MemoryLogStore().create(TP, TOPIC)
    files = FileStore(str(tmp_path_factory.mktemp("logs")))
    checkpoints: list[int | None] = [None, None]
    for now, writes in ((2_000, first), (4_000, second)):
        for rs, compression in writes:
            for log in (memory, files.log):
                append(log, [(now, k, v) for k, v in rs], compression)
        for i, log in enumerate((memory, files.log)):
            log.roll()
            checkpoints[i] = clean(log, now, checkpoints[i])
        assert checkpoints[0] == checkpoints[1]
        assert everything(memory) == everything(files.log)
    cleaned = everything(files.log)
    files.restart(clean=True)
    assert everything(files.log) == cleaned
    files.restart(clean=False)
    assert everything(files.log) == cleaned


def _dirty_log(path: str) -> FileStore:
    files = FileStore(path)
    for i in range(40):
        append(files.log, [(i, b"k%d" % (i % 4), b"v%d" % i * 10)])
    files.log.roll()
    return files


def _latest(rs) -> dict:
    out = {}
    for _, key, value in rs:
        out[key] = value
    return out


@pytest.mark.parametrize("step", ["cleaned", "swap", "deleted", "swapped"])
def test_a_crash_at_any_step_of_the_swap_leaves_a_readable_log_with_nothing_lost(tmp_path, monkeypatch, step):
    files = _dirty_log(str(tmp_path / "logs"))
    before = records(files.log)
    assert len(files.log.segment_infos()) > 3

    class Crash(Exception):
        pass

    def crash_at(name: str) -> None:
        if name == step:
            raise Crash

    monkeypatch.setattr(segment_swap, "swap_step", crash_at)
    with pytest.raises(Crash):
        clean(files.log, 5_000)
    monkeypatch.undo()
    files.restart(clean=False)
    after = records(files.log)
    assert _latest(after) == _latest(before)
    assert set(after) <= set(before)
    assert [o for o, _, _ in after] == sorted({o for o, _, _ in after})
    leftovers = [n for n in os.listdir(files.log.directory) if n.endswith((".cleaned", ".swap", ".deleted"))]
    assert leftovers == []
    if step == "cleaned":  # not yet a .swap: the cleaning is undone
        assert after == before
    else:  # the .swap was complete: the first group is swapped in
        assert len(after) < len(before)
    assert (files.log.log_start_offset, files.log.log_end_offset) == (0, 40)
    clean(files.log, 6_000)  # and the next cleaning goes through
    assert _latest(records(files.log)) == _latest(before)


def test_a_crash_while_the_cleaned_segment_is_written_loses_nothing(tmp_path, monkeypatch):
    files = _dirty_log(str(tmp_path / "logs"))
    before = records(files.log)
    writes = []

    def failing_append(self, batch, header):
        writes.append(header)
        if len(writes) == 2:
            raise OSError("disk gone")
        self.segment.append(batch, [(0, header)])

    monkeypatch.setattr(segment_swap.FileCleanedSegment, "append", failing_append)
    monkeypatch.setattr(segment_swap.FileCleanedSegment, "discard", lambda self: None)  # killed: no clean-up
    with pytest.raises(OSError):
        clean(files.log, 5_000)
    monkeypatch.undo()
    assert any(n.endswith(".cleaned") for n in os.listdir(files.log.directory))
    partial = records(files.log)  # the groups swapped in before the failure stay cleaned
    files.restart(clean=False)
    assert records(files.log) == partial
    assert _latest(partial) == _latest(before) and set(partial) <= set(before)
    assert not any(n.endswith(".cleaned") for n in os.listdir(files.log.directory))


def test_a_fetch_from_a_removed_offset_returns_the_next_record(tmp_path):
    files = _dirty_log(str(tmp_path / "logs"))
    clean(files.log, 5_000)
    kept = [o for o, _, _ in records(files.log)]
    assert kept == [36, 37, 38, 39]
    for offset in (0, 17, 35, 36):
        first = read_batches(files.log.read(offset, 1 << 20, True))[0]
        assert first.base_offset == min(o for o in kept if o >= offset)
    files.restart(clean=True)
    assert read_batches(files.log.read(3, 1 << 20, True))[0].base_offset == 36


def test_an_aborted_cleaning_removes_its_cleaned_segment(tmp_path, monkeypatch):
    files = _dirty_log(str(tmp_path / "logs"))

    def failing_append(self, batch, header):
        raise OSError("disk full")

    monkeypatch.setattr(segment_swap.FileCleanedSegment, "append", failing_append)
    with pytest.raises(OSError):
        clean(files.log, 5_000)
    assert not any(n.endswith(".cleaned") for n in os.listdir(files.log.directory))
