"""franz-go's transactional consume-transform-produce (a GroupTransactSession, transactions V2) against
the real server, through a kill -9 and restart of the broker: exactly-once counts. The Go test is in
tests/go (franz-go from the Go module proxy); this runs it with the broker's address."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .broker import BrokerProcess

GO_TESTS = Path(__file__).resolve().parent.parent / "go"


def test_franz_go_exactly_once_through_a_broker_restart(tmp_path):
    go = shutil.which("go")
    if go is None:
        pytest.fail("the go toolchain is needed (tests/go): install Go 1.24 or later")
    args = ["--data-dir", str(tmp_path / "logs")]
    env = {"TRAFKA_GROUPS_INITIAL_REBALANCE_DELAY_MS": "0"}
    broker = BrokerProcess(args, env=env).start()
    progress, restarted = tmp_path / "progress", tmp_path / "restarted"
    test = subprocess.Popen(
        [go, "test", "-count=1", "-v", "."],
        cwd=GO_TESTS,
        env={
            **os.environ,
            "TRAFKA_BOOTSTRAP": broker.bootstrap,
            "TRAFKA_PROGRESS": str(progress),
            "TRAFKA_RESTARTED": str(restarted),
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 240  # the first run compiles the test
        while time.monotonic() < deadline and test.poll() is None:
            if progress.exists() and progress.read_text() and int(progress.read_text()) >= 200:
                break
            time.sleep(0.2)
        assert test.poll() is None, test.communicate()[0]
        broker.stop(signal.SIGKILL)  # mid-stream: the Go test holds a transaction open until restarted
        broker = BrokerProcess([*args, "--port", str(broker.port)], env=env).start()
        restarted.write_text("1")
        output, _ = test.communicate(timeout=240)
    finally:
        if test.poll() is None:
            test.kill()
        broker.stop()
    assert test.returncode == 0, output
    assert "committed 600 records exactly once" in output
