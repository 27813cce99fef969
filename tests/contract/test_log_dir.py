"""`LogStore.log_dir`: the one log dir, from both stores."""

from __future__ import annotations

import os
import uuid

import crc32c

from trafka.adapters.filesystem import FileLogStore, LogDir
from trafka.adapters.memory import MemoryLogStore
from trafka.domain.log_dirs import UNKNOWN_VOLUME_BYTES
from trafka.domain.topics import ZERO_UUID


def test_the_filesystem_store_names_its_absolute_path_directory_id_and_volume(tmp_path):
    logdir = LogDir.open(str(tmp_path / "data"), 1, uuid.UUID(int=1), uuid.UUID(int=2))
    store = FileLogStore(logdir, crc32c.crc32c, lambda: 0)
    usage = store.log_dir()
    assert usage.path == os.path.abspath(tmp_path / "data")
    assert usage.directory_id == uuid.UUID(int=2)
    stat = os.statvfs(usage.path)
    assert usage.total_bytes == stat.f_blocks * stat.f_frsize > 0
    assert 0 <= usage.usable_bytes <= usage.total_bytes
    logdir.unlock()


def test_the_memory_store_has_a_named_log_dir_of_unknown_size():
    usage = MemoryLogStore().log_dir()
    assert (usage.path, usage.directory_id) == ("memory", ZERO_UUID)
    assert usage.total_bytes == usage.usable_bytes == UNKNOWN_VOLUME_BYTES


def test_the_filesystem_log_dir_is_offline_after_a_failed_write(tmp_path):
    logdir = LogDir.open(str(tmp_path / "data"), 1, uuid.UUID(int=1), uuid.UUID(int=2))
    store = FileLogStore(logdir, crc32c.crc32c, lambda: 0)
    assert not store.log_dir().offline
    store.health.offline = OSError(5, "I/O error")
    assert store.log_dir().offline
    logdir.unlock()


def test_the_memory_log_dir_is_never_offline():
    assert not MemoryLogStore().log_dir().offline
