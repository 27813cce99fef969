"""One contract for every storage adapter: the same tests run against memory and the filesystem.

The hypothesis state machine drives both with the same random appends, reads, rolls, retention,
DeleteRecords and (for the filesystem) restarts, clean and unclean, and requires identical answers.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid

import crc32c
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from tests.batches import make_batch
from trafka.adapters.filesystem import FileLogStore, LogDir
from trafka.adapters.memory import MemoryLogStore
from trafka.domain.batch import assign_offsets, iter_batches, validate_batches
from trafka.domain.topics import Topic, TopicPartition

TP = TopicPartition("t", 0)
TOPIC = Topic("t", uuid.UUID(int=7), 1, {"internal.segment.bytes": "600", "index.interval.bytes": "100"})


class Clock:
    now = 1_000

    def __call__(self) -> int:
        return self.now


class FileStore:
    def __init__(self, path: str) -> None:
        self.path = path
        self.clock = Clock()
        self.open()

    def open(self) -> None:
        self.logdir = LogDir.open(self.path, 1, uuid.UUID(int=1), uuid.UUID(int=2))
        self.store = FileLogStore(self.logdir, crc32c.crc32c, self.clock)
        self.log = self.store.open(TP, TOPIC)
        self.logdir.start()

    def restart(self, clean: bool) -> None:
        if clean:
            self.store.close()
            self.logdir.mark_clean_shutdown()
        else:
            for pl in self.store.logs().values():
                pl.close()
        self.logdir.unlock()  # as the process ending would
        self.open()


def append(log, records) -> None:
    validated = validate_batches(make_batch(records), crc32c.crc32c, 1 << 20)
    headers = assign_offsets(validated, log.log_end_offset, 0, crc32c.crc32c)
    log.append(validated.buffer, headers)


@pytest.fixture(params=["memory", "filesystem"])
def log(request, tmp_path):
    if request.param == "memory":
        return MemoryLogStore().create(TP, TOPIC)
    return FileStore(str(tmp_path / "logs")).log


def _offsets(data: bytes) -> list[int]:
    return [h.base_offset for _, h in iter_batches(data)]


def test_appends_are_read_back_as_whole_batches(log):
    for i in range(10):
        append(log, [(100 * i, b"k", b"v" * 50), (100 * i + 1, None, b"w")])
    assert (log.log_start_offset, log.log_end_offset) == (0, 20)
    assert _offsets(log.read(0, 1 << 20, True))[:1] == [0]
    assert _offsets(log.read(7, 1 << 20, True))[0] == 6
    assert log.read(0, 1, False) == b""
    assert len(_offsets(log.read(0, 1, True))) == 1
    assert len(log.segment_infos()) > 1  # internal.segment.bytes = 600 rolled the log


def test_timestamp_lookups(log):
    for i in range(6):
        append(log, [(100 * i, None, b"a"), (100 * i + 50, None, b"b")])
    first = next(log.batches_from_timestamp(260))
    assert _offsets(first)[0] == 6
    assert _offsets(log.batch_with_max_timestamp()) == [10]
    assert list(log.batches_from_timestamp(10_000)) == []


def test_retention_and_delete_records_move_the_log_start(log):
    for i in range(10):
        append(log, [(100 * i, None, b"x" * 100)])
    infos = log.segment_infos()
    log.delete_segments_before(infos[2].base_offset)
    assert log.log_start_offset == infos[2].base_offset
    log.advance_log_start_offset(infos[2].base_offset + 1)
    assert log.log_start_offset == infos[2].base_offset + 1
    assert log.log_end_offset == 10


@pytest.mark.parametrize("kind", ["memory", "filesystem"])
def test_each_segment_knows_when_it_was_last_written(kind, tmp_path):
    """Retention's fallback for segments whose records have no timestamp (-1): the store's clock at
    the segment's last append. No time index entry is made for -1 (Kafka's TimeIndex.maybeAppend)."""
    if kind == "memory":
        clock = Clock()
        log = MemoryLogStore(clock_ms=clock).create(TP, TOPIC)
    else:
        store = FileStore(str(tmp_path / "logs"))
        clock, log = store.clock, store.log
    for i in range(10):
        clock.now = 5_000 + i
        append(log, [(-1, None, b"x" * 100)])
    infos = log.segment_infos()
    assert len(infos) > 2 and all(info.max_timestamp == -1 for info in infos)
    assert [info.largest_timestamp for info in infos[:-1]] == [5_000 + info.next_offset - 1 for info in infos[:-1]]
    assert list(log.batches_from_timestamp(0)) == []
    if kind == "filesystem":
        assert all(not segment._time_index for segment in log.segments)


class StoresAgree(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.mkdtemp()
        self.file = FileStore(self.dir + "/logs")
        self.memory = MemoryLogStore().create(TP, TOPIC)
        self.timestamp = 0

    def teardown(self) -> None:
        for pl in self.file.store.logs().values():
            pl.close()
        self.file.logdir.unlock()
        shutil.rmtree(self.dir)

    @rule(count=st.integers(1, 5), size=st.integers(0, 300))
    def append(self, count, size):
        records = [(self.timestamp + i, None, b"x" * size) for i in range(count)]
        self.timestamp += count
        append(self.file.log, records)
        append(self.memory, records)

    @rule(data=st.data(), max_bytes=st.integers(1, 2000), min_one=st.booleans())
    def read(self, data, max_bytes, min_one):
        if self.memory.log_end_offset == self.memory.log_start_offset:
            return
        offset = data.draw(st.integers(self.memory.log_start_offset, self.memory.log_end_offset - 1))
        assert self.file.log.read(offset, max_bytes, min_one) == self.memory.read(offset, max_bytes, min_one)

    @rule(data=st.data())
    def timestamps(self, data):
        target = data.draw(st.integers(-1, self.timestamp + 1))
        assert next(self.file.log.batches_from_timestamp(target), None) == next(
            self.memory.batches_from_timestamp(target), None
        )

    @rule(data=st.data())
    def headers_from(self, data):
        offset = data.draw(st.integers(0, self.memory.log_end_offset + 1))
        assert list(self.file.log.batch_headers(offset)) == list(self.memory.batch_headers(offset))

    @rule()
    def roll(self):
        self.file.log.roll()
        self.memory.roll()

    @rule(data=st.data())
    def retention(self, data):
        infos = self.memory.segment_infos()
        assert [(i.base_offset, i.next_offset, i.size) for i in infos] == [
            (i.base_offset, i.next_offset, i.size) for i in self.file.log.segment_infos()
        ]
        cut = data.draw(st.sampled_from([i.base_offset for i in infos]))
        self.file.log.delete_segments_before(cut)
        self.memory.delete_segments_before(cut)

    @rule(data=st.data())
    def delete_records(self, data):
        offset = data.draw(st.integers(self.memory.log_start_offset, self.memory.log_end_offset))
        self.file.log.advance_log_start_offset(offset)
        self.memory.advance_log_start_offset(offset)

    @rule(clean=st.booleans())
    def restart(self, clean):
        self.file.restart(clean)

    @invariant()
    def same_offsets(self):
        assert (self.file.log.log_start_offset, self.file.log.log_end_offset) == (
            self.memory.log_start_offset,
            self.memory.log_end_offset,
        )


StoresAgree.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
test_stores_agree = StoresAgree.TestCase
