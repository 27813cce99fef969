"""`trafka serve` takes what its start-up built out of the cyclic collector's sight (ADR 109).

A full collection walking the start-up's objects (modules, schema classes, settings: some 70,000)
paused the broker 35-75 ms in the middle of serving (`bench/throughput.py --latency` on the filesystem
store: p99 30 ms against 4 ms once frozen). The broker is run here in a Python that reports, once the
ready file is written, whether the collector is on and how many objects it froze.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

PROBE = textwrap.dedent(
    """
    import gc, os, runpy, signal, sys, threading, time

    ready = sys.argv[sys.argv.index("--ready-file") + 1]

    def report():
        while not os.path.exists(ready) or not os.path.getsize(ready):
            time.sleep(0.01)
        time.sleep(0.2)  # the broker goes on past the ready file to its first line of output
        print("PROBE", gc.isenabled(), gc.get_freeze_count(), file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=report, daemon=True).start()
    sys.argv = ["trafka", *sys.argv[1:]]
    runpy.run_module("trafka", run_name="__main__")
    """
)


def test_serve_freezes_what_start_up_built_and_collects_afterwards(tmp_path: Path) -> None:
    ready = tmp_path / "ready.json"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "serve", "--memory", "--port", "0", "--ready-file", str(ready)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert json.loads(ready.read_text())["port"] > 0
    probe = [line.split() for line in done.stderr.splitlines() if line.startswith("PROBE")]
    assert probe, done.stderr[-2000:]
    _, enabled, frozen = probe[0]
    assert enabled == "True"  # collecting again once serving: cycles made while serving are freed
    assert int(frozen) > 10_000  # the start-up's objects, out of every collection's walk


ROOMS_PROBE = textwrap.dedent(
    """
    import os, runpy, signal, sys, threading, time

    ready = sys.argv[sys.argv.index("--ready-file") + 1]

    def report():
        while not os.path.exists(ready) or not os.path.getsize(ready):
            time.sleep(0.01)
        from trafka.adapters.kafka.apis import ROOMS

        at_ready = sum(f"trafka.adapters.kafka.apis.{room.module}" in sys.modules for room in ROOMS.values())
        names = {f"trafka.adapters.kafka.apis.{room.module}" for room in ROOMS.values()}
        for _ in range(3000):  # the probe's own bound: 30 s
            if names <= sys.modules.keys():
                break
            time.sleep(0.01)
        loaded = len(names & sys.modules.keys())
        print("PROBE", at_ready, loaded, len(names), file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=report, daemon=True).start()
    sys.argv = ["trafka", *sys.argv[1:]]
    runpy.run_module("trafka", run_name="__main__")
    """
)


def test_serve_is_ready_before_its_rooms_and_loads_them_afterwards(tmp_path: Path) -> None:
    """ADR 110: ready with the rooms its start-up needs only, then every room imported off the event loop,
    so a consumer's first Fetch or group request finds its room loaded."""
    ready = tmp_path / "ready.json"
    done = subprocess.run(
        [sys.executable, "-c", ROOMS_PROBE, "serve", "--memory", "--port", "0", "--ready-file", str(ready)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    probe = [line.split() for line in done.stderr.splitlines() if line.startswith("PROBE")]
    assert probe, done.stderr[-2000:]
    _, at_ready, loaded, total = probe[0]
    assert int(at_ready) < int(total) // 2  # ready before most rooms are imported
    assert int(loaded) == int(total)  # then all of them
