"""Start and stop a real `trafka serve` process on an ephemeral port, for integration tests."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence

_LISTENING = re.compile(r"trafka listening on (\S+):(\d+)")
_HTTP_LISTENING = re.compile(r"trafka http listening on (\S+):(\d+)")

DATA_DIR_ENV = {"TRAFKA_GROUPS_INITIAL_REBALANCE_DELAY_MS": "0"}


class BrokerProcess:
    def __init__(
        self,
        args: Sequence[str] = (),
        env: dict[str, str] | None = None,
        prefix: Sequence[str] = (),
        listen: bool = True,
    ) -> None:
        # `listen`: bind 127.0.0.1 on a free port (flags win over a config's listeners); False keeps the
        # config's own listeners (an IPv6 one, say)
        self.args = ["serve", *(("--host", "127.0.0.1", "--port", "0") if listen else ()), *args]
        self.prefix = list(prefix)  # a command the broker runs under (e.g. in a mount namespace)
        self.env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen[str] | None = None
        self.port = 0
        self.output: list[str] = []
        self._new_line = threading.Condition()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def http_url(self) -> str:
        """The HTTP listener's base URL (the broker must run with --http-port)."""
        for line in self.output:
            match = _HTTP_LISTENING.search(line)
            if match:
                return f"http://{match.group(1)}:{match.group(2)}"
        raise RuntimeError("the broker has no HTTP listener:\n" + self.log())

    def start(self, timeout: float = 20.0) -> BrokerProcess:
        self.process = subprocess.Popen(
            [*self.prefix, sys.executable, "-m", "trafka", *self.args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=self.env,
        )
        deadline = time.monotonic() + timeout
        assert self.process.stdout is not None
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("trafka exited before listening:\n" + "".join(self.output))
            self.output.append(line)
            match = _LISTENING.search(line)
            if match:
                self.port = int(match.group(2))
                threading.Thread(target=self._drain, daemon=True).start()
                return self
        raise RuntimeError("trafka did not start listening in time:\n" + "".join(self.output))

    def _drain(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            with self._new_line:
                self.output.append(line)
                self._new_line.notify_all()

    def wait_for_lines(self, text: str, since: int = 0, timeout: float = 10.0) -> list[str]:
        """The output lines after `since` that contain `text`, once there is at least one (the broker's
        output is read by a thread, so a line logged before a socket closed may arrive after it)."""
        with self._new_line:
            self._new_line.wait_for(lambda: any(text in line for line in self.output[since:]), timeout)
            return [line for line in self.output[since:] if text in line]

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout)

    def log(self) -> str:
        return "".join(self.output)


@contextlib.contextmanager
def running(data_dir, env: dict[str, str] | None = None) -> Iterator[BrokerProcess]:
    """A broker on the data dir `data_dir` (with DATA_DIR_ENV and `env`); killed on the way out
    unless the test stopped it."""
    broker = BrokerProcess(["--data-dir", str(data_dir)], env={**DATA_DIR_ENV, **(env or {})}).start()
    try:
        yield broker
    finally:
        if broker.process.poll() is None:
            broker.process.kill()
            broker.process.wait(10)
