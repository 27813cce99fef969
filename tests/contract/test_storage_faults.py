"""Storage faults through the filesystem store's one I/O seam (`fileio`): disk full is one ERROR line
per episode and survived with nothing half-written; any other I/O error takes the log dir offline
and stops the broker, as Kafka's log dir failure handling does."""

from __future__ import annotations

import errno
import logging
import os
import uuid

import crc32c
import pytest

from tests.batches import make_batch
from trafka.adapters.filesystem import FileLogStore, LogDir, fileio
from trafka.domain.batch import assign_offsets, iter_batches, validate_batches
from trafka.domain.topics import Topic, TopicPartition

TP = TopicPartition("orders", 3)
TOPIC = Topic("orders", uuid.UUID(int=9), 4, {"index.interval.bytes": "100"})


class Faulty(fileio.FileIO):
    """Fails every write and fsync with `error`, except to the fds in `spared`."""

    def __init__(self, error: int, spared: set[int] = frozenset()) -> None:
        self.error = error
        self.spared = spared
        self.failures = 0

    def write(self, fd, data):
        if fd not in self.spared:
            self.failures += 1
            raise OSError(self.error, "injected")
        return super().write(fd, data)

    def fsync(self, fd):
        if fd not in self.spared:
            raise OSError(self.error, "injected")
        super().fsync(fd)


class Store:
    def __init__(self, path: str) -> None:
        self.path = path
        self.open()

    def open(self) -> None:
        self.logdir = LogDir.open(self.path, 1, uuid.UUID(int=1), uuid.UUID(int=2))
        self.store = FileLogStore(self.logdir, crc32c.crc32c, lambda: 1_000)
        self.log = self.store.open(TP, TOPIC)
        self.logdir.start()

    def crash_and_reopen(self) -> None:
        for pl in self.store.logs().values():
            pl.close()
        self.logdir.unlock()
        self.open()


def _append(log, values: list[bytes]) -> int:
    validated = validate_batches(make_batch([(1, None, v) for v in values]), crc32c.crc32c, 1 << 20)
    headers = assign_offsets(validated, log.log_end_offset, 0, crc32c.crc32c)
    log.append(validated.buffer, headers)
    return headers[0].base_offset


def _values(log) -> list[int]:
    """(base offset, record count) of every stored batch, read back from the files."""
    data = log.read(0, 1 << 24, True)
    return [(h.base_offset, h.records_count) for _, h in iter_batches(data)]


@pytest.fixture
def store(tmp_path):
    s = Store(str(tmp_path / "logs"))
    yield s
    s.logdir.unlock()


def test_disk_full_is_one_error_per_episode_and_writes_resume(store, caplog):
    caplog.set_level(logging.INFO, logger="trafka.storage")
    _append(store.log, [b"a"])
    with fileio.injected(Faulty(errno.ENOSPC)) as faulty:
        for _ in range(3):
            with pytest.raises(OSError):
                _append(store.log, [b"lost", b"lost"])
        assert faulty.failures == 3
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1
    message = errors[0].getMessage()
    assert store.path in message and "orders-3" in message and "bytes free" in message
    assert store.log.log_end_offset == 1  # nothing of the failed appends counts
    assert _append(store.log, [b"b"]) == 1
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert len(infos) == 1 and "space again" in infos[0] and store.path in infos[0]
    assert _values(store.log) == [(0, 1), (1, 1)]
    assert store.store.health.offline is None


def test_a_failed_index_write_takes_the_batch_back_out(store):
    _append(store.log, [b"x" * 150])  # past index.interval.bytes: the next append writes an index entry
    segment = store.log._segments[-1]
    size, end = segment.size, store.log.log_end_offset
    faulty = Faulty(errno.ENOSPC, spared={segment._log_fd})  # the log write succeeds, the index's fails
    with fileio.injected(faulty):
        with pytest.raises(OSError):
            _append(store.log, [b"y" * 150])
    assert faulty.failures == 1
    assert (segment.size, store.log.log_end_offset) == (size, end)
    assert os.path.getsize(segment.log_path) == size  # the written batch was cut back out
    store.crash_and_reopen()  # recovery finds exactly what was there before
    assert store.log.log_end_offset == end
    assert _append(store.log, [b"z"]) == end
    assert _values(store.log) == [(0, 1), (1, 1)]


def test_an_io_error_takes_the_log_dir_offline_and_stops_the_broker(store, caplog):
    caplog.set_level(logging.INFO, logger="trafka.storage")
    stops = []
    store.store.health.on_offline = lambda: stops.append(True)
    _append(store.log, [b"a"])
    with fileio.injected(Faulty(errno.EIO)):
        with pytest.raises(OSError):
            _append(store.log, [b"b"])
    assert stops == [True]
    with pytest.raises(fileio.LogDirOffline):  # later writes fail without touching the disk
        _append(store.log, [b"c"])
    assert stops == [True]
    [error] = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert store.path in error and "offline" in error
    assert not store.store.clean  # no clean-shutdown marker: the next start recovers
    store.store.checkpoint()  # skipped, not raised
    store.crash_and_reopen()
    assert _values(store.log) == [(0, 1)]


def test_a_full_disk_at_checkpoint_is_reported_and_retried(store, caplog):
    caplog.set_level(logging.INFO, logger="trafka.storage")
    _append(store.log, [b"a"])
    with fileio.injected(Faulty(errno.ENOSPC)):
        store.store.checkpoint()
    assert [r.levelno for r in caplog.records] == [logging.ERROR]
    store.store.checkpoint()
    assert [r.levelno for r in caplog.records] == [logging.ERROR, logging.INFO]
