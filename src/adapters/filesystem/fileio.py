"""The filesystem store's writes behind one small seam, and the log dir's health.

`FileIO` is every write, fsync and truncate the store makes on the produce and checkpoint paths;
`io()` is the one in use. Tests swap in a `FileIO` that raises ENOSPC or EIO on cue (`injected`), so
disk-full and failing-disk behaviour is tested through the real code, not by breaking a disk.

`LogDirHealth` is what the store does about failed writes, as Kafka's LogDirFailureChannel does:
- disk full (ENOSPC): the request fails with KAFKA_STORAGE_ERROR (the caller's job), and the log gets
  one ERROR line per episode naming the log dir, the partition and the free bytes, then one INFO line
  when a write succeeds again;
- any other I/O error: the log dir goes offline for good (every later write fails) and `on_offline`
  runs once: with its only log dir gone the broker stops and exits non-zero, as Kafka halts, so the
  container's restart policy brings it back through recovery.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
from collections.abc import Callable, Iterator

log = logging.getLogger("trafka.storage")


class FileIO:
    def write(self, fd: int, data: bytes | bytearray | memoryview) -> int:
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def ftruncate(self, fd: int, size: int) -> None:
        os.ftruncate(fd, size)

    def replace(self, source: str, target: str) -> None:
        os.replace(source, target)


_current = FileIO()


def fsync_dir(directory: str) -> None:
    """Make a directory's new entries durable (new segments, new partition dirs)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def io() -> FileIO:
    return _current


@contextlib.contextmanager
def injected(fileio: FileIO) -> Iterator[FileIO]:
    """Use `fileio` for every store write inside the block (tests)."""
    global _current
    saved, _current = _current, fileio
    try:
        yield fileio
    finally:
        _current = saved


class LogDirOffline(OSError):
    """A write to a log dir that an earlier I/O error took offline."""


class LogDirHealth:
    def __init__(self, path: str) -> None:
        self.path = path
        self.full = False
        self.offline: OSError | None = None
        self.on_offline: Callable[[], None] = lambda: None

    def check_online(self) -> None:
        if self.offline is not None:
            raise LogDirOffline(errno.EIO, f"log dir {self.path} is offline after: {self.offline}")

    def write_failed(self, where: str, exc: OSError) -> None:
        if isinstance(exc, LogDirOffline):
            return
        if exc.errno == errno.ENOSPC:
            if not self.full:
                self.full = True
                log.error(
                    "log dir %s is full: cannot write %s (%d bytes free); producers get "
                    "KAFKA_STORAGE_ERROR until space is freed",
                    self.path,
                    where,
                    _free_bytes(self.path),
                )
            return
        if self.offline is None:
            self.offline = exc
            log.error(
                "log dir %s failed: %s while writing %s; it is offline and the broker stops", self.path, exc, where
            )
            self.on_offline()

    def write_succeeded(self) -> None:
        if self.full:
            self.full = False
            log.info("log dir %s has space again (%d bytes free): writes resume", self.path, _free_bytes(self.path))


def _free_bytes(path: str) -> int:
    try:
        stats = os.statvfs(path)
    except OSError:
        return -1
    return stats.f_bavail * stats.f_frsize
