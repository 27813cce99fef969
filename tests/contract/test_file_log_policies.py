"""The filesystem log's time and flush policies, driven with a fake clock: segment.ms, flush.messages,
flush.ms. fsync calls are counted, since a process crash cannot show whether one happened."""

from __future__ import annotations

import os
import uuid

import crc32c
import pytest

from tests.batches import make_batch
from trafka.adapters.filesystem import FileLogStore, InternalLog, LogDir
from trafka.domain.batch import assign_offsets, validate_batches
from trafka.domain.topics import Topic, TopicPartition

TP = TopicPartition("t", 0)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


def open_log(tmp_path, configs: dict[str, str], clock: Clock):
    logdir = LogDir.open(str(tmp_path / "logs"), 1, uuid.UUID(int=1), uuid.UUID(int=2))
    store = FileLogStore(logdir, crc32c.crc32c, clock)
    return store.create(TP, Topic("t", uuid.UUID(int=3), 1, configs))


def append(log, n: int = 1, timestamp: int = 0) -> None:
    validated = validate_batches(make_batch([(timestamp, None, b"x")] * n), crc32c.crc32c, 1 << 20)
    log.append(validated.buffer, assign_offsets(validated, log.log_end_offset, 0, crc32c.crc32c))


def test_segment_ms_counts_from_the_first_batchs_timestamp(tmp_path):
    """Kafka's LogSegment.timeWaitedForRoll: the newest timestamp appended minus the segment's first
    batch's, whatever the broker's clock says; the segment rolls once that exceeds segment.ms."""
    clock = Clock()
    log = open_log(tmp_path, {"segment.ms": "1000"}, clock)
    append(log, timestamp=5_000)
    clock.now += 10_000  # the clock does not count when the records have timestamps
    append(log, timestamp=6_000)
    assert len(log.segment_infos()) == 1
    append(log, timestamp=6_001)
    assert [s.base_offset for s in log.segment_infos()] == [0, 2]


def test_segment_ms_counts_by_the_clock_when_the_first_batch_has_no_timestamp(tmp_path):
    clock = Clock()
    log = open_log(tmp_path, {"segment.ms": "1000"}, clock)
    append(log, timestamp=-1)
    clock.now += 1000
    append(log, timestamp=-1)
    assert len(log.segment_infos()) == 1
    clock.now += 1
    append(log, timestamp=-1)
    assert [s.base_offset for s in log.segment_infos()] == [0, 2]


@pytest.fixture
def fsyncs(monkeypatch):
    calls = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    return calls


def test_flush_messages_fsyncs_after_that_many_messages(tmp_path, fsyncs):
    log = open_log(tmp_path, {"flush.messages": "3"}, Clock())
    fsyncs.clear()
    append(log, 2)
    assert fsyncs == []
    append(log, 1)
    assert fsyncs != []


def test_flush_ms_fsyncs_unflushed_data_once_it_is_that_old(tmp_path, fsyncs):
    clock = Clock()
    log = open_log(tmp_path, {"flush.ms": "500"}, clock)
    fsyncs.clear()
    append(log)
    clock.now += 499
    log.flush_if_due(clock.now)
    assert fsyncs == []
    clock.now += 1
    log.flush_if_due(clock.now)
    assert fsyncs != []
    fsyncs.clear()
    clock.now += 10_000
    log.flush_if_due(clock.now)
    assert fsyncs == []  # nothing new to flush


def test_by_default_nothing_is_fsynced_per_append(tmp_path, fsyncs):
    log = open_log(tmp_path, {}, Clock())
    fsyncs.clear()
    for _ in range(20):
        append(log)
    assert fsyncs == []


def _internal(tmp_path, tp: TopicPartition, flush_messages: int | None = None, **kwargs):
    tmp_path.mkdir()
    logdir = LogDir.open(str(tmp_path / "logs"), 1, uuid.UUID(int=1), uuid.UUID(int=2))
    store = FileLogStore(logdir, crc32c.crc32c, Clock(), flush_messages)
    return InternalLog(store, tp, uuid.UUID(int=3), crc32c.crc32c, Clock(), **kwargs), store


def test_a_coordinators_log_follows_the_data_partitions_flush_policy(tmp_path, fsyncs):
    """ADR 120: `__consumer_offsets` (and the other coordinators' logs) are not fsynced per append, as
    Kafka's are not; a clean shutdown fsyncs them, and flush.messages applies to them too."""
    offsets, store = _internal(tmp_path / "a", TopicPartition("__consumer_offsets", 0))
    fsyncs.clear()
    for i in range(5):
        offsets.append([(b"k", str(i).encode())])
    assert fsyncs == []
    store.close()
    assert fsyncs != []

    every, _ = _internal(tmp_path / "b", TopicPartition("__consumer_offsets", 0), flush_messages=1)
    fsyncs.clear()
    every.append([(b"k", b"v")])
    assert fsyncs != []


def test_the_metadata_log_is_fsynced_on_every_append(tmp_path, fsyncs):
    metadata, _ = _internal(tmp_path / "m", TopicPartition("__cluster_metadata", 0), sync_appends=True)
    fsyncs.clear()
    metadata.append([(b"k", b"v")])
    assert fsyncs != []


def _commit_and_wait(offsets, store, clock: Clock, fsyncs: list, wait_ms: int) -> list:
    """Append to a coordinator's log, let `wait_ms` pass and run the store's maintenance (flush.ms):
    the fsyncs of the log's own files that this caused."""
    own = set()
    fsyncs.clear()
    offsets.append([(b"k", b"v")])
    clock.now += wait_ms
    store.maintain(clock.now)
    for segment in offsets.log.segments:
        own.add(segment._log_fd)
    return [fd for fd in fsyncs if fd in own]


def test_flush_ms_reaches_the_coordinators_logs(tmp_path, fsyncs):
    """ADR 120: the store's flush.ms maintenance (Kafka's LogManager flush scheduler, which flushes
    every log, internal ones included) fsyncs `__consumer_offsets` once its unflushed data is that old."""
    clock = Clock()
    tmp_path.mkdir(exist_ok=True)
    logdir = LogDir.open(str(tmp_path / "logs"), 1, uuid.UUID(int=1), uuid.UUID(int=2))
    store = FileLogStore(logdir, crc32c.crc32c, clock, topic_defaults={"flush.ms": "500"})
    offsets = InternalLog(store, TopicPartition("__consumer_offsets", 0), uuid.UUID(int=3), crc32c.crc32c, clock)
    assert _commit_and_wait(offsets, store, clock, fsyncs, 499) == []
    clock.now += 1
    store.maintain(clock.now)
    assert fsyncs != []


def test_broker_flush_defaults_set_after_start_reach_the_coordinators_logs(tmp_path, fsyncs):
    """A `log.flush.interval.ms` the broker learns after its coordinators' logs are open (a dynamic
    broker config, read from the metadata log at start or altered later) applies to them too, as
    Kafka's LogManager.reconfigureDefaultLogConfig changes every log that does not override it: their
    topics are not in the catalog, whose partitions alone are reconfigured one by one."""
    clock = Clock()
    tmp_path.mkdir(exist_ok=True)
    logdir = LogDir.open(str(tmp_path / "logs"), 1, uuid.UUID(int=1), uuid.UUID(int=2))
    store = FileLogStore(logdir, crc32c.crc32c, clock)
    offsets = InternalLog(
        store,
        TopicPartition("__consumer_offsets", 0),
        uuid.UUID(int=3),
        crc32c.crc32c,
        clock,
        {"segment.bytes": "4096"},
    )
    assert _commit_and_wait(offsets, store, clock, fsyncs, 10_000) == []  # flush.ms unset: never
    store.set_topic_defaults({"flush.ms": "500"})
    assert _commit_and_wait(offsets, store, clock, fsyncs, 500) != []
    assert offsets.log.config.segment_bytes == 4096  # the log's own configs still apply
    store.set_topic_defaults({})
    assert _commit_and_wait(offsets, store, clock, fsyncs, 10_000) == []
