"""A write fault other than a full disk, in a real broker process: the kernel's file size limit
(RLIMIT_FSIZE, with SIGXFSZ ignored) makes a segment write fail with EFBIG on the real append path.
As Kafka with its only log dir failed, the broker logs an ERROR naming the dir and the error and
exits non-zero without a clean shutdown; after a restart every acknowledged record is there."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys

from confluent_kafka import Producer

from .broker import _LISTENING, DATA_DIR_ENV, running
from .clients import create_topic, read_partition

LIMIT = 256 * 1024


def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def test_an_io_error_on_append_halts_the_broker_and_loses_nothing_acknowledged(tmp_path):
    data_dir = str(tmp_path / "data")
    with running(data_dir) as broker:  # the topic first, without the limit
        create_topic(broker.bootstrap, "big", 1)
        assert broker.stop(signal.SIGTERM) == 0, broker.log()

    process = subprocess.Popen(
        [sys.executable, "-m", "trafka", "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", data_dir],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **DATA_DIR_ENV},
        preexec_fn=_limit_file_size,
    )
    try:
        output = []
        port = None
        while port is None:
            line = process.stdout.readline()
            assert line, "".join(output)
            output.append(line)
            match = _LISTENING.search(line)
            port = match and int(match.group(2))
        acked, failed = [], []

        def on_delivery(err, msg) -> None:
            (failed if err is not None else acked).append(msg.value())

        producer = Producer(
            {
                "bootstrap.servers": f"127.0.0.1:{port}",
                "acks": "all",
                "linger.ms": 0,
                "log_level": 0,
                "message.timeout.ms": 5000,
                "retries": 0,
                "compression.type": "none",
            }
        )
        for i in range(60):  # 60 x 10 KB: well past the 256 KB limit
            producer.produce("big", value=b"%03d" % i + b"x" * 10_000, partition=0, on_delivery=on_delivery)
            producer.poll(0)
            producer.flush(10)
            if failed and process.poll() is not None:  # the broker halted: the rest would only time out
                break
        producer.flush(10)
        try:
            status = process.wait(20)
        except subprocess.TimeoutExpired:
            status = None
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        output += process.stdout.readlines()
    log = "".join(output)
    assert status not in (None, 0), log
    assert acked and failed, (len(acked), len(failed))
    assert f"log dir {data_dir} failed" in log and "File too large" in log and "offline" in log, log
    assert not os.path.exists(os.path.join(data_dir, ".kafka_cleanshutdown"))

    with running(data_dir) as again:  # recovery: everything acknowledged, in order, once
        got = [v for _, _, v in read_partition(again.bootstrap, "big", 0, 0, len(acked) + 5)]
        assert got == acked
        assert again.stop(signal.SIGTERM) == 0, again.log()
