"""trafka installs beside its user's Kafka client (issue 39, ADRs 92, 101 and 102), in one fresh venv grown
step by step, each step what a user's project may be:

1. trafka's core alone (no extra, no Kafka client library: none is importable there): `trafka serve
   --memory` and `--data-dir` serve the operator commands (`topic create/list`, `produce`, `consume`,
   alone and in a group) and `dump-log` reads what was written;
2. the newest aiokafka, confluent-kafka and kafka-python added: the installed trafka starts a broker
   (`trafka serve --memory`, and `--data-dir`, under `-W error`) and the in-process fake
   (`trafka.Broker()`), and each client produces to and consumes from each;
3. kafka-python moved back to its newest 2.x: served too.

The oldest release of each client's range is resolved only, all three in one `pip install --dry-run`:
what makes an install fail beside a client is a pin, and the resolver is what finds one. One venv
instead of two and one resolution instead of three (ADR 102): the cost, with pip's cache warm, is
in that ADR.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NEWEST = ["aiokafka==0.14.0", "confluent-kafka==2.16.1", "kafka-python==3.0.12"]
KAFKA_PYTHON_2 = "kafka-python==2.3.3"
# the oldest release of each client's range (the newest are installed above): aiokafka 0.11 and
# confluent-kafka 2.4 are about two years old, kafka-python 2.0.2 is the oldest with the record API used
RESOLVED_ONLY = ["kafka-python==2.0.2", "aiokafka==0.11.0", "confluent-kafka==2.4.0"]


def _run(*args: str | Path, timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, **kwargs)
    assert done.returncode == 0, f"{' '.join(map(str, args))}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _pip(venv: Path, *args: str) -> subprocess.CompletedProcess:
    # the test's own pip, driving the new venv's interpreter (the venv itself is made without pip)
    return _run(sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "--disable-pip-version-check", *args)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", out, ROOT)
    (found,) = out.glob("trafka-*.whl")
    return found


def _venv(tmp_path: Path, name: str) -> Path:
    venv = tmp_path / name
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    return venv


# What the installed trafka runs, with the client beside it: broker processes (`-W error`: a warning on
# import fails the broker here as it would fail a user's suite run with it) and the in-process fake,
# each produced to and consumed from by every client installed. The kinds to run are the arguments.
_SMOKE = textwrap.dedent(
    """
    import json, subprocess, sys, tempfile, time, pathlib, importlib.util
    import trafka

    def clients(bootstrap):
        done = []
        if importlib.util.find_spec("kafka"):
            import kafka
            producer = kafka.KafkaProducer(bootstrap_servers=bootstrap)
            producer.send("kp", b"v").get(timeout=30)
            producer.close()
            consumer = kafka.KafkaConsumer("kp", bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                           consumer_timeout_ms=20000)
            assert [m.value for m in consumer][:1] == [b"v"]
            consumer.close()
            done.append("kafka-python " + kafka.__version__)
        if importlib.util.find_spec("confluent_kafka"):
            import confluent_kafka
            producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
            producer.produce("ck", b"v")
            assert producer.flush(30) == 0
            consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": "g",
                                                 "auto.offset.reset": "earliest"})
            consumer.subscribe(["ck"])
            deadline = time.monotonic() + 30
            while (m := consumer.poll(1)) is None or m.error():
                assert time.monotonic() < deadline
            assert m.value() == b"v"
            consumer.close()
            done.append("confluent-kafka " + confluent_kafka.version()[0])
        if importlib.util.find_spec("aiokafka"):
            import asyncio, aiokafka
            async def main():
                producer = aiokafka.AIOKafkaProducer(bootstrap_servers=bootstrap)
                await producer.start()
                await producer.send_and_wait("ak", b"v")
                await producer.stop()
                consumer = aiokafka.AIOKafkaConsumer("ak", bootstrap_servers=bootstrap, auto_offset_reset="earliest")
                await consumer.start()
                m = await asyncio.wait_for(consumer.getone(), 30)
                await consumer.stop()
                assert m.value == b"v"
            asyncio.run(main())
            done.append("aiokafka " + aiokafka.__version__)
        return done

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in [k for k in sys.argv[1:] if k.startswith("--")]:
            ready = pathlib.Path(tmp) / f"ready{kind}"
            args = [sys.executable, "-W", "error", "-m", "trafka", "serve", "--port", "0", "--ready-file", str(ready)]
            args += [kind] if kind == "--memory" else [kind, str(pathlib.Path(tmp) / "data")]
            server = subprocess.Popen(args)
            try:
                deadline = time.monotonic() + 60
                while not ready.exists() or not ready.read_text().strip():
                    assert server.poll() is None and time.monotonic() < deadline, kind
                    time.sleep(0.05)
                out[kind] = clients(json.loads(ready.read_text())["bootstrap_servers"])
            finally:
                server.terminate()
                server.wait(30)
        if "Broker()" in sys.argv[1:]:
            with trafka.Broker() as broker:
                out["Broker()"] = clients(broker.bootstrap_servers)
    print(json.dumps(out))
    """
)


def _smoke(venv: Path, *kinds: str) -> dict[str, list[str]]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = _run(venv / "bin" / "python", "-c", _SMOKE, *kinds, env=env, cwd=venv, timeout=240)
    return json.loads(done.stdout.strip().splitlines()[-1])


# The core alone: the CLI against `serve --memory` and `serve --data-dir`, then dump-log of that data dir.
_CORE_CLI = textwrap.dedent(
    """
    import importlib.util, json, pathlib, subprocess, sys, tempfile, time
    assert importlib.util.find_spec("kafka") is None, "kafka-python is in the core install"

    def trafka(*args, stdin=""):
        done = subprocess.run([sys.executable, "-W", "error", "-m", "trafka", *args], input=stdin,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done.stdout

    with tempfile.TemporaryDirectory() as tmp:
        data = pathlib.Path(tmp) / "data"
        for kind in (["--memory"], ["--data-dir", str(data)]):
            ready = pathlib.Path(tmp) / "ready"
            ready.unlink(missing_ok=True)
            server = subprocess.Popen([sys.executable, "-W", "error", "-m", "trafka", "serve", "--port", "0",
                                       "--ready-file", str(ready), *kind])
            try:
                deadline = time.monotonic() + 60
                while not ready.exists() or not ready.read_text().strip():
                    assert server.poll() is None and time.monotonic() < deadline, kind
                    time.sleep(0.05)
                b = ["-b", json.loads(ready.read_text())["bootstrap_servers"]]
                trafka("topic", "create", "t", "-p", "2", *b)
                assert "t" in trafka("topic", "list", *b).split()
                assert trafka("produce", "t", "-k", ":", *b, stdin="a:1\\nb:2\\n").startswith("produced 2 records")
                got = trafka("consume", "t", "--from-beginning", "-n", "2", "-f", "{key}={value}", *b)
                assert sorted(got.split()) == ["a=1", "b=2"], got
                got = trafka("consume", "t", "-g", "g", "--from-beginning", "-n", "2", *b)
                assert sorted(got.split()) == ["1", "2"], got
            finally:
                server.terminate()
                server.wait(30)
        dumped = trafka("dump-log", "--print-data-log", *map(str, sorted(data.glob("t-*/*.log"))))
        assert "payload: 1" in dumped and "payload: 2" in dumped, dumped
    print("core CLI ok")
    """
)


@pytest.mark.timeout(900)
def test_the_core_alone_then_beside_the_newest_clients_then_kafka_python_2(wheel, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{tmp_path / 'venv' / 'bin'}:{env.get('PATH', '')}"
    steps = {}
    began = time.monotonic()
    venv = _venv(tmp_path, "venv")
    _pip(venv, "install", "-q", str(wheel))
    _run(venv / "bin" / "python", "-c", _CORE_CLI, env=env, cwd=venv, timeout=240)
    steps["core alone: installed, CLI served"] = time.monotonic() - began

    began = time.monotonic()
    _pip(venv, "install", "-q", *NEWEST)
    ran = _smoke(venv, "--memory", "--data-dir", "Broker()")
    for kind in ("--memory", "--data-dir", "Broker()"):
        assert [c.split()[0] for c in ran[kind]] == ["kafka-python", "confluent-kafka", "aiokafka"], ran
    steps["newest clients: installed and served"] = time.monotonic() - began

    began = time.monotonic()
    _pip(venv, "install", "-q", KAFKA_PYTHON_2)
    ran = _smoke(venv, "--data-dir")
    assert f"kafka-python {KAFKA_PYTHON_2.split('==')[1]}" in ran["--data-dir"], ran
    steps["kafka-python 2.x: installed and served"] = time.monotonic() - began
    print("; ".join(f"{step} in {seconds:.1f} s" for step, seconds in steps.items()))


def test_the_core_resolves_beside_older_client_releases(wheel, tmp_path):
    venv = _venv(tmp_path, "resolve")
    report = tmp_path / "report.json"
    _pip(venv, "install", "--dry-run", "-q", "--report", str(report), str(wheel), *RESOLVED_ONLY)
    chosen = {
        i["metadata"]["name"].lower(): i["metadata"]["version"] for i in json.loads(report.read_text())["install"]
    }
    assert "trafka" in chosen
    for client in RESOLVED_ONLY:
        name, version = client.split("==")
        assert chosen[name] == version, chosen
