"""One broker per log dir, as Kafka's LogManager enforces it with `.lock`: a second broker on a dir in
use exits 1 naming the dir and leaves the first untouched; readers take no lock."""

from __future__ import annotations

import os
import subprocess
import sys

import crc32c

from trafka.adapters.filesystem.read_only import ReadOnlyLogDir

from .broker import DATA_DIR_ENV, running
from .clients import confluent_producer, create_topic


def _serve(data_dir) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trafka", "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, **DATA_DIR_ENV},
    )


def test_a_second_broker_on_a_dir_in_use_exits_1_and_the_first_keeps_serving(tmp_path):
    data_dir = tmp_path / "logs"
    with running(data_dir) as first:
        create_topic(first.bootstrap, "kept", 1)
        producer = confluent_producer(first.bootstrap)
        producer.produce("kept", b"before")
        assert producer.flush(15) == 0
        listing = sorted(os.listdir(data_dir))

        second = _serve(data_dir)
        assert second.returncode == 1, second.stdout + second.stderr
        assert "listening" not in second.stdout
        [line] = second.stderr.strip().splitlines()
        assert str(data_dir) in line and "in use by another process" in line
        assert sorted(os.listdir(data_dir)) == listing  # nothing written by the second

        producer.produce("kept", b"after")
        assert producer.flush(15) == 0
        reader = ReadOnlyLogDir(str(data_dir), crc32c.crc32c)  # readers take no lock
        try:
            assert reader.log_end_offset("kept", 0) == 2
        finally:
            reader.close()
        assert first.stop() == 0
    # Once the first broker has gone, the dir is free again.
    with running(data_dir) as again:
        create_topic(again.bootstrap, "after-restart", 1)


def test_a_killed_broker_leaves_no_lock_behind(tmp_path):
    data_dir = tmp_path / "logs"
    with running(data_dir) as broker:
        broker.process.kill()
        broker.process.wait(10)
    with running(data_dir) as again:  # flock dies with its process, as Kafka's FileLock does
        create_topic(again.bootstrap, "t", 1)


_JAVA_STYLE_LOCK = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
try:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a POSIX record lock, as Java's FileChannel.tryLock
except OSError:
    print("refused", flush=True)
    sys.exit(0)
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
"""


def test_kafkas_lock_and_trafkas_see_each_other(tmp_path):
    """Kafka's FileLock is a POSIX record lock (fcntl), which a flock does not see: a Kafka broker or
    `kafka-metadata-shell` on a dir trafka serves would take `.lock` and go on. trafka holds both
    kinds, so each refuses a dir the other holds."""
    data_dir = tmp_path / "logs"
    with running(data_dir):
        java = subprocess.run(
            [sys.executable, "-c", _JAVA_STYLE_LOCK, str(data_dir / ".lock"), "0"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert java.stdout.strip() == "refused", java.stdout + java.stderr
    holder = subprocess.Popen(
        [sys.executable, "-c", _JAVA_STYLE_LOCK, str(data_dir / ".lock"), "60"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        second = _serve(data_dir)
        assert second.returncode == 1, second.stdout + second.stderr
        assert "in use by another process" in second.stderr
    finally:
        holder.kill()
        holder.wait(10)
