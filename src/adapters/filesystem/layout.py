"""The log dir's own files, as Kafka writes them in KRaft mode.

- `meta.properties`: version=1, node.id, cluster.id, directory.id (Java properties).
- `recovery-point-offset-checkpoint` and `log-start-offset-checkpoint`: "0", a count, then one
  "<topic> <partition> <offset>" line per partition.
- `.kafka_cleanshutdown`: present only after a clean shutdown; removed at startup.
- `.lock`: held for the life of the broker, as Kafka's LogManager holds it, so a second broker on the
  same dir stops before touching anything: an exclusive `flock`, and on Linux the record lock Kafka's
  own FileLock takes (Java's FileChannel.tryLock is an fcntl lock, which flock does not see), so a Kafka
  broker or tool refuses a dir trafka holds and trafka refuses one Kafka holds. Readers take no lock.

`LogDir.open` checks a directory before writing anything to it: it must be empty, or already hold
a `meta.properties` (a Kafka or trafka log dir), and be readable and writable; then it takes the lock.
"""

from __future__ import annotations

import base64
import errno
import fcntl
import json
import os
import re
import struct
import uuid

import attrs

from trafka.domain.topics import TopicPartition

META_PROPERTIES = "meta.properties"
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_CHECKPOINT = "log-start-offset-checkpoint"
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"
LOCK = ".lock"
_PARTITION_DIR = re.compile(r"^(.+)-(\d+)$")


class DataDirError(Exception):
    """The data dir cannot be used; the message names the path and the problem."""


def kafka_uuid(value: uuid.UUID) -> str:
    """Kafka's text form of a Uuid: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def parse_kafka_uuid(text: str) -> uuid.UUID:
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


def parse_partition_dir(name: str) -> TopicPartition | None:
    match = _PARTITION_DIR.match(name)
    if not match or "." in name.rsplit("-", 1)[1]:
        return None
    return TopicPartition(match.group(1), int(match.group(2)))


@attrs.frozen
class MetaProperties:
    cluster_id: str
    node_id: int
    directory_id: uuid.UUID


_SEGMENT_FILE = re.compile(r"^\d{20}\.(log|index|timeindex|snapshot|txnindex)$")


def _check_partition_dirs(path: str, entries: list[str]) -> None:
    """A file where a partition dir should be, or a directory where a segment file should be, stops
    the broker before it writes anything (Kafka would take the log dir offline at the first write)."""
    for name in entries:
        if parse_partition_dir(name) is None:
            continue
        partition = os.path.join(path, name)
        if not os.path.isdir(partition):
            raise DataDirError(f"data dir {path}: {partition} is not a directory, but names a partition")
        for file in os.listdir(partition):
            if _SEGMENT_FILE.match(file) and not os.path.isfile(os.path.join(partition, file)):
                raise DataDirError(f"data dir {path}: {os.path.join(partition, file)} is not a regular file")


def lock_log_dir(path: str) -> int:
    """Take the log dir's `.lock` (an exclusive, non-blocking flock, and Kafka's record lock); returns
    the fd that holds them."""
    fd = os.open(os.path.join(path, LOCK), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        _lock_as_kafka(fd)
    except BlockingIOError:
        os.close(fd)
        raise DataDirError(
            f"data dir {path} is in use by another process (it holds {os.path.join(path, LOCK)})"
        ) from None
    return fd


def _lock_as_kafka(fd: int) -> None:
    """A write lock on the whole file that conflicts with the POSIX record lock Kafka's FileLock takes
    (Java's FileChannel.tryLock): an open file description lock (F_OFD_SETLK, Linux), owned by this
    descriptor alone, so that no other descriptor the process closes releases it. BlockingIOError when
    another process holds one (a Kafka broker or tool on this dir). Where the platform has none, the
    flock alone guards the dir."""
    command = getattr(fcntl, "F_OFD_SETLK", None)
    if command is None:
        return
    try:
        fcntl.fcntl(fd, command, struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0))
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            raise BlockingIOError(exc.errno, exc.strerror) from None
        raise


class LogDir:
    def __init__(self, path: str, meta: MetaProperties, clean_shutdown: bool, lock_fd: int | None = None) -> None:
        self.path = path
        self.meta = meta
        self.clean_shutdown = clean_shutdown
        self._lock_fd = lock_fd

    def unlock(self) -> None:
        """Release the `.lock` (after the last write, at shutdown)."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    @classmethod
    def open(cls, path: str, node_id: int, new_cluster_id: uuid.UUID, new_directory_id: uuid.UUID) -> LogDir:
        path = os.path.abspath(path)
        if os.path.exists(path) and not os.path.isdir(path):
            raise DataDirError(f"data dir {path} is not a directory")
        if os.path.isdir(path):
            if not os.access(path, os.R_OK | os.W_OK | os.X_OK):
                raise DataDirError(f"data dir {path} cannot be read and written by this user")
            entries = [e for e in os.listdir(path) if e != LOCK]
            if entries and META_PROPERTIES not in entries:
                raise DataDirError(
                    f"data dir {path} is neither empty nor a Kafka or trafka log dir (no {META_PROPERTIES})"
                )
            if entries:
                meta = read_meta_properties(path)
                if meta.node_id != node_id:
                    raise DataDirError(
                        f"data dir {path} belongs to node.id {meta.node_id}, but this broker is node {node_id}"
                    )
                _check_partition_dirs(path, entries)
                clean = os.path.exists(os.path.join(path, CLEAN_SHUTDOWN))
                return cls(path, meta, clean, lock_log_dir(path))
        else:
            parent = os.path.dirname(path) or "."
            if not os.access(parent, os.W_OK):
                raise DataDirError(f"data dir {path} cannot be created: {parent} is not writable")
        os.makedirs(path, exist_ok=True)
        lock_fd = lock_log_dir(path)
        meta = MetaProperties(kafka_uuid(new_cluster_id), node_id, new_directory_id)
        _write_meta(path, meta)
        return cls(path, meta, clean_shutdown=True, lock_fd=lock_fd)

    def partition_path(self, tp: TopicPartition) -> str:
        return os.path.join(self.path, f"{tp.topic}-{tp.partition}")

    def start(self) -> None:
        """The broker is running: a crash from now on is an unclean shutdown."""
        marker = os.path.join(self.path, CLEAN_SHUTDOWN)
        if os.path.exists(marker):
            os.remove(marker)

    def mark_clean_shutdown(self) -> None:
        _atomic_write(os.path.join(self.path, CLEAN_SHUTDOWN), json.dumps({"version": 0, "brokerEpoch": -1}))

    def read_checkpoint(self, name: str) -> dict[TopicPartition, int]:
        try:
            with open(os.path.join(self.path, name)) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return {}
        out = {}
        try:
            for line in lines[2 : 2 + int(lines[1])]:
                topic, partition, offset = line.split(" ")
                out[TopicPartition(topic, int(partition))] = int(offset)
        except (IndexError, ValueError):
            return {}  # a corrupt checkpoint is as good as none: recovery scans everything
        return out

    def write_checkpoint(self, name: str, offsets: dict[TopicPartition, int]) -> None:
        lines = ["0", str(len(offsets))] + [f"{tp.topic} {tp.partition} {o}" for tp, o in sorted(offsets.items())]
        _atomic_write(os.path.join(self.path, name), "\n".join(lines) + "\n")


def read_meta_properties(path: str) -> MetaProperties:
    file = os.path.join(path, META_PROPERTIES)
    try:
        with open(file) as f:
            props = dict(
                line.split("=", 1) for line in f.read().splitlines() if "=" in line and not line.startswith("#")
            )
        if props.get("version") not in ("0", "1"):
            raise DataDirError(f"{file} has unsupported version {props.get('version')!r}")
        directory = props.get("directory.id")
        return MetaProperties(
            props["cluster.id"],
            int(props.get("node.id", props.get("broker.id", "-1"))),
            parse_kafka_uuid(directory) if directory else uuid.UUID(int=0),
        )
    except (OSError, KeyError, ValueError) as exc:
        raise DataDirError(f"{file} cannot be read: {exc}") from exc


def _write_meta(path: str, meta: MetaProperties) -> None:
    text = (
        "#\n#Written by trafka\n"
        f"cluster.id={meta.cluster_id}\n"
        f"directory.id={kafka_uuid(meta.directory_id)}\n"
        f"node.id={meta.node_id}\n"
        "version=1\n"
    )
    _atomic_write(os.path.join(path, META_PROPERTIES), text)


def _atomic_write(path: str, text: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
