"""The two stores of a `__cluster_metadata` contract test, opened and reopened alike: the file store on a
log dir's metadata log (reopened as after a restart) and the memory store (the same object again)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import crc32c

from trafka.adapters.filesystem import FileLogStore, LogDir
from trafka.adapters.filesystem.internal_log import InternalLog
from trafka.domain.topics import TopicPartition

METADATA = TopicPartition("__cluster_metadata", 0)


class FileStores:
    """`make(log)` builds the store on the metadata log each time it is opened."""

    def __init__(self, path: str, make: Callable[[InternalLog], Any]) -> None:
        self.path = path
        self.make = make
        self.logdir: LogDir | None = None

    def open(self) -> Any:
        self.close()
        self.logdir = LogDir.open(self.path, 1, uuid.UUID(int=1), uuid.UUID(int=2))
        self.logs = FileLogStore(self.logdir, crc32c.crc32c, lambda: 1_000)
        self.log = InternalLog(self.logs, METADATA, uuid.UUID(int=3), crc32c.crc32c, lambda: 1_000)
        return self.make(self.log)

    def close(self) -> None:
        if self.logdir is not None:
            self.logs.close()
            self.logdir.unlock()
            self.logdir = None


class MemoryStores:
    def __init__(self, store: Any) -> None:
        self.store = store

    def open(self) -> Any:
        return self.store

    def close(self) -> None:
        pass
