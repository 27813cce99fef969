"""Many small producers, then several consumer groups: the broker's cost per request.

    python bench/fanin.py --spawn trafka [--store filesystem] [--producers 4] [--records 20000]
    python bench/fanin.py --spawn tansu
    python bench/fanin.py --spawn kfake                 # franz-go's kfake (bench/kfake, built with Go)
    python bench/fanin.py --spawn kafka                 # Apache Kafka, the yardstick (tests/kafka/pom.xml)
    python bench/fanin.py --spawn trafka --profile /tmp/fanin.svg      # py-spy flame graph of the broker
    python bench/fanin.py --spawn trafka --profile /tmp/out.txt --profile-phase fan-out --profile-rate 1000

1. creates a topic of `--partitions` (8) partitions;
2. **fan-in**: `--producers` (4) processes each send `--records` (20,000) records of `--size` (100)
   bytes, one record per request (confluent-kafka, `batch.num.messages=1`, `linger.ms=0`, acks=all),
   round robin over the partitions. The clock runs from a common start to the last acknowledgement;
3. **fan-out**: `--groups` (4) processes, each one consumer in a group of its own, read everything.
   Each group first joins (classic protocol): Kafka's `group.initial.rebalance.delay.ms` (3 s by
   default) holds the first JoinGroup of an empty group, so the phase's wall time is mostly that
   delay. The phase also reports when the first record arrived and the rate once reading (all the
   records the groups read over the longest time one group took from its first record to its last);
   `--rebalance-delay-ms 0` starts trafka as Kafka's own `config/server.properties` does.

Per phase it prints records/s and the broker's CPU seconds per record (user + system, from
`/proc/PID/stat`, only for a broker it spawned), and a machine line. `--runs K` repeats the whole
thing against a fresh broker each time and prints the median; `--json` for `summarize`-style output.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import tempfile
import time
from typing import Any

from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from throughput import KafkaBroker, find_tansu, machine_line, spawn_kfake, spawn_tansu, spawn_trafka

TIMEOUT = 120.0


def _produce(bootstrap: str, topic: str, partitions: int, records: int, size: int, index: int, start: float) -> None:
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "linger.ms": 0,
            "batch.num.messages": 1,
            "enable.idempotence": False,
            "delivery.report.only.error": True,
            "queue.buffering.max.messages": records + 10,
        }
    )
    producer.list_topics(topic, timeout=30)  # metadata before the clock
    payload = bytes([65 + index]) * size
    failures = []
    while time.time() < start:
        time.sleep(0.001)
    for n in range(records):
        while True:
            try:
                producer.produce(
                    topic,
                    payload,
                    partition=n % partitions,
                    on_delivery=lambda err, _: failures.append(err) if err else None,
                )
                break
            except BufferError:
                producer.poll(0.01)
        producer.poll(0)
    if producer.flush(TIMEOUT) or failures:
        raise SystemExit(f"producer {index}: {len(failures)} failed deliveries")


def _consume(bootstrap: str, topic: str, expected: int, group: str, times, start: float) -> None:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "fetch.queue.backoff.ms": 0,
        }
    )
    while time.time() < start:
        time.sleep(0.001)
    consumer.subscribe([topic])
    seen = 0
    first = None
    deadline = time.monotonic() + TIMEOUT
    while seen < expected and time.monotonic() < deadline:
        for message in consumer.consume(10000, 0.5):
            if message.error() is None:
                seen += 1
        if first is None and seen:
            first = time.time()
    times.put((None if first is None else first - start, time.time() - start))  # seconds after the common start
    consumer.close()
    if seen < expected:
        raise SystemExit(f"group {group}: {seen} of {expected} records")


def _phase(target, argsets: list[tuple], broker) -> tuple[float, float | None]:
    """Run one process per argument tuple from a common start; (seconds, broker CPU seconds)."""
    start = time.time() + 2.0  # every process connected and waiting before the clock starts
    ctx = multiprocessing.get_context("spawn")
    processes = [ctx.Process(target=target, args=(*a, start)) for a in argsets]
    for p in processes:
        p.start()
    while time.time() < start:
        time.sleep(0.001)
    cpu_before = broker.cpu_seconds() if broker else None
    began = time.perf_counter()
    for p in processes:
        p.join()
        if p.exitcode:
            raise SystemExit(f"a bench process failed ({p.exitcode})")
    elapsed = time.perf_counter() - began
    cpu_after = broker.cpu_seconds() if broker else None
    return elapsed, (cpu_after - cpu_before) if cpu_before is not None and cpu_after is not None else None


def run_once(args: argparse.Namespace) -> dict:
    broker: Any
    if args.spawn == "tansu":
        broker = spawn_tansu(find_tansu(args.tansu_bin), 30)
        label = "tansu (memory)"
    elif args.spawn == "kfake":
        broker = spawn_kfake(30)
        label = "kfake (memory)"
    elif args.spawn == "kafka":  # its shipped server.properties: group.initial.rebalance.delay.ms=0
        broker = KafkaBroker(120)
        label = f"kafka {broker.version}"
    else:
        store = ("--memory",) if args.store == "memory" else ("--data-dir", tempfile.mkdtemp(prefix="bench-fanin-"))
        if args.rebalance_delay_ms is not None:  # as Kafka's own config/server.properties sets it (0)
            properties = os.path.join(tempfile.mkdtemp(prefix="bench-fanin-config-"), "server.properties")
            with open(properties, "w") as f:
                f.write(f"group.initial.rebalance.delay.ms={args.rebalance_delay_ms}\n")
            store = (*store, "--config", properties)
        broker = spawn_trafka(None, 30, args.trafka_src, store)
        label = f"trafka ({args.store})"
    profiler = None
    try:
        topic = f"fanin-{int(time.time() * 1000)}"
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        try:
            admin.create_topics([NewTopic(topic, args.partitions, 1)])[topic].result(30)
        except KafkaException as exc:
            raise SystemExit(f"cannot create {topic}: {exc}") from None

        def profile() -> subprocess.Popen:
            fmt = ["--format", "raw"] if args.profile.endswith(".txt") else []  # collapsed stacks, or a flame graph
            rate = str(args.profile_rate)
            started = subprocess.Popen(
                ["py-spy", "record", "--nonblocking", "-o", args.profile, *fmt, "-p", str(broker.proc.pid), "-r", rate],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(1)
            return started

        if args.profile and args.profile_phase != "fan-out":
            profiler = profile()
        total = args.producers * args.records
        produce_s, produce_cpu = _phase(
            _produce,
            [(broker.bootstrap, topic, args.partitions, args.records, args.size, i) for i in range(args.producers)],
            broker,
        )
        if profiler is not None and args.profile_phase == "fan-in":
            profiler.send_signal(2)
            profiler.wait(60)
            profiler = None
        elif args.profile and args.profile_phase == "fan-out":
            profiler = profile()
        times = multiprocessing.get_context("spawn").Queue()
        consume_s, consume_cpu = _phase(
            _consume, [(broker.bootstrap, topic, total, f"fanout-{g}", times) for g in range(args.groups)], broker
        )
        spans = [times.get(timeout=10) for _ in range(args.groups)]
        # the reading without the group joins: the longest time a group took from its first record to its
        # last (groups that joined apart would otherwise count the gap between them)
        read_s = max(done - first for first, done in spans if first is not None)
    finally:
        if profiler is not None:
            profiler.send_signal(2)
            profiler.wait(60)
        broker.stop()
    result = {
        "broker": label,
        "records": total,
        "produce_records_per_s": total / produce_s,
        "produce_cpu_us_per_record": None if produce_cpu is None else produce_cpu / total * 1e6,
        "consume_records_per_s": total * args.groups / consume_s,
        "consume_cpu_us_per_record": None if consume_cpu is None else consume_cpu / (total * args.groups) * 1e6,
        "consume_first_record_s": min(first for first, _ in spans if first is not None),
        "consume_read_records_per_s": total * args.groups / read_s,
    }
    return result


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spawn", choices=["trafka", "tansu", "kfake", "kafka"], required=True)
    parser.add_argument("--store", choices=["memory", "filesystem"], default="memory", help="trafka's store")
    parser.add_argument("--producers", type=int, default=4)
    parser.add_argument("--records", type=int, default=20000, help="records per producer")
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--groups", type=int, default=4)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--profile",
        help="with --spawn trafka: py-spy samples of the broker: a flame graph (.svg) or collapsed stacks (.txt)",
    )
    parser.add_argument(
        "--profile-phase", choices=["all", "fan-in", "fan-out"], default="all", help="the phase --profile samples"
    )
    parser.add_argument("--profile-rate", type=int, default=200, help="py-spy's samples per second")
    parser.add_argument("--trafka-src", help="run the spawned trafka from another src/ tree")
    parser.add_argument(
        "--rebalance-delay-ms",
        type=int,
        help="trafka's group.initial.rebalance.delay.ms (default: the broker's, Kafka's 3000; "
        "Kafka's shipped config/server.properties sets 0)",
    )
    parser.add_argument("--tansu-bin")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    runs = [run_once(args) for _ in range(args.runs)]
    keys = [
        "produce_records_per_s",
        "produce_cpu_us_per_record",
        "consume_records_per_s",
        "consume_cpu_us_per_record",
        "consume_first_record_s",
        "consume_read_records_per_s",
    ]
    median = {k: (statistics.median(r[k] for r in runs) if runs[0][k] is not None else None) for k in keys}
    if args.json:
        print(json.dumps({"broker": runs[0]["broker"], "runs": runs, "median": median, "machine": machine_line()}))
        return
    print(f"# {machine_line()}")
    print(
        f"{runs[0]['broker']}: {args.producers} producers x {args.records} records (1 per request, acks=all), "
        f"{args.partitions} partitions, {args.groups} groups; median of {len(runs)}"
    )
    print(
        f"  fan-in : {_fmt(median['produce_records_per_s'], 0)} records/s, broker CPU {_fmt(median['produce_cpu_us_per_record'])} us/record"
    )
    print(
        f"  fan-out: {_fmt(median['consume_records_per_s'], 0)} records/s, broker CPU {_fmt(median['consume_cpu_us_per_record'])} us/record"
    )
    print(
        f"  fan-out, first record after {_fmt(median['consume_first_record_s'], 2)} s (the group joins); "
        f"once reading {_fmt(median['consume_read_records_per_s'], 0)} records/s"
    )


if __name__ == "__main__":
    main()
