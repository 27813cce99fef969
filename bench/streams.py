#!/usr/bin/env python3
"""The Kafka Streams phase: a word count (`group.protocol=streams`, KIP-1071) on trafka beside Apache Kafka.

    python bench/streams.py                      # trafka (memory) and Apache Kafka, 3 interleaved rounds
    python bench/streams.py --brokers trafka --rounds 1 --lines 2000

Each round starts each broker in turn (trafka, Kafka, trafka, Kafka, ...: the same machine state for
both), writes `--lines` lines of `--words` words to a 3-partition input topic, and runs
`bench/StreamsBench.java` (Kafka Streams from tests/java/pom.xml's classpath, the version
tests/kafka/pom.xml names) against it: one instance's records/s through those lines (first count to
last), then a second instance joins and, under a line every 2 ms, a third: the longest gap between two
counts on the output topic from the third's start until the group is Stable again plus a second (the
rebalance pause), and the time to Stable. Prints each broker's medians and a machine line. Apache
Kafka runs with `tests/kafka/reference.py`'s configuration (Kafka's shipped server.properties for one
node), so its streams groups wait `group.streams.initial.rebalance.delay.ms` (3 s) on their first
assignment; the pause measured is the third instance's, a later rebalance, which no delay holds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from throughput import KafkaBroker, machine_line, spawn_trafka

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
JAVA_POM = ROOT / "tests" / "java" / "pom.xml"
DRIVER = HERE / "StreamsBench.java"


def streams_classpath() -> str:
    """Kafka Streams' jars (tests/java/pom.xml's test classpath), resolved by Maven once and cached."""
    digest = hashlib.sha256(JAVA_POM.read_bytes() + (ROOT / "tests" / "kafka" / "pom.xml").read_bytes()).hexdigest()
    cached = Path(f"/tmp/bench-streams-classpath-{digest[:16]}.txt")
    if not cached.exists():
        result = subprocess.run(
            ["mvn", "-q", "-B", "-f", str(JAVA_POM), "dependency:build-classpath", f"-Dmdep.outputFile={cached}"],
            capture_output=True,
            text=True,
            timeout=1200,
        )
        if result.returncode != 0 or not cached.exists():
            raise SystemExit(f"mvn could not resolve Kafka Streams:\n{result.stdout}\n{result.stderr}")
    return cached.read_text().strip()


def _lines(bootstrap: str, topic: str, lines: int, words: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for i in range(lines):
        producer.produce(topic, key=b"line%d" % i, value=" ".join(f"w{(i * words + j) % 500}" for j in range(words)))
        if i % 1000 == 0:
            producer.poll(0)
    if producer.flush(60) != 0:
        raise SystemExit("the input lines were not all written")


def _trafka_as_the_reference() -> tuple[str, ...]:
    """trafka with the streams group settings `tests/kafka/reference.py` gives Apache Kafka (ADR 98: 1 s
    heartbeats, 6 s sessions) and, through a properties file, Kafka's 3 s initial delay: both brokers'
    members then learn of a new assignment at the same pace."""
    sys.path.insert(0, str(ROOT))
    from tests.kafka.reference import server_properties

    reference = server_properties(
        Path(tempfile.mkdtemp(prefix="bench-streams-")), {"PLAINTEXT": 0, "CONTROLLER": 0}, False
    )
    wanted = {k: v for k, v in reference.items() if k.startswith("group.") and "streams" in k}
    wanted["group.initial.rebalance.delay.ms"] = reference["group.initial.rebalance.delay.ms"]
    properties = Path(tempfile.mkdtemp(prefix="bench-streams-config-")) / "server.properties"
    properties.write_text("".join(f"{k}={v}\n" for k, v in sorted(wanted.items())))
    return ("--memory", "--config", str(properties))


def run_once(broker_name: str, args: argparse.Namespace, classpath: str) -> dict:
    if broker_name == "kafka":
        broker = KafkaBroker(120)
    else:
        broker = spawn_trafka(None, 60, args.trafka_src, _trafka_as_the_reference())
    try:
        suffix = int(time.time() * 1000)
        source, sink = f"bench-lines-{suffix}", f"bench-counts-{suffix}"
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for future in admin.create_topics([NewTopic(source, 3, 1), NewTopic(sink, 3, 1)]).values():
            future.result(30)
        _lines(broker.bootstrap, source, args.lines, args.words)
        command = ["java", "-Xmx512m", "-cp", classpath, str(DRIVER), broker.bootstrap, source, sink]
        command += [str(args.lines), str(args.words)]
        result = subprocess.run(command, capture_output=True, text=True, timeout=900)
        answer = next((line for line in result.stdout.splitlines() if line.startswith("{")), None)
        if result.returncode != 0 or answer is None:
            raise SystemExit(f"StreamsBench failed against {broker_name}:\n{result.stdout}\n{result.stderr[-4000:]}")
        return {"broker": broker_name, **json.loads(answer)}
    finally:
        broker.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--brokers", default="trafka,kafka", help="comma-separated: trafka, kafka")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--words", type=int, default=5)
    parser.add_argument("--trafka-src", help="run the spawned trafka from another src/ tree")
    parser.add_argument("--json", action="store_true", help="every run as a JSON line")
    args = parser.parse_args()
    brokers = [b.strip() for b in args.brokers.split(",") if b.strip()]
    unknown = set(brokers) - {"trafka", "kafka"}
    if unknown:
        parser.error(f"unknown brokers: {', '.join(sorted(unknown))}")
    classpath = streams_classpath()
    runs: dict[str, list[dict]] = {b: [] for b in brokers}
    for _ in range(args.rounds):
        for name in brokers:
            run = run_once(name, args, classpath)
            runs[name].append(run)
            if args.json:
                print(json.dumps(run), flush=True)
    keys = ["records_per_s", "start_to_first_count_s", "third_join_pause_s", "third_settle_s"]
    print(f"{'broker':<8} " + " ".join(f"{k:>24}" for k in keys) + "   (medians)")
    for name, results in runs.items():
        print(f"{name:<8} " + " ".join(f"{statistics.median(r[k] for r in results):>24,.3f}" for k in keys))
    print(machine_line())


if __name__ == "__main__":
    sys.exit(main())
