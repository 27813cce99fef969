"""Kill -9 soak: nothing acknowledged is ever lost.

    python bench/soak.py [--cycles 20] [--partitions 6] [--seconds 3]

Runs `trafka serve` on a fixed port and a data dir of its own, and, for the whole run, an idempotent
producer and a plain one (confluent-kafka, acks=all, each record a unique id) writing to a topic of
`--partitions` partitions, plus a consumer group that commits as it reads. Every cycle the broker is
killed with SIGKILL at a random moment under that load and started again on the same dir. At the end
it reads every partition from the start and checks:

- lost: acknowledged ids missing from the log (must be 0);
- duplicates: ids stored more than once (idempotent: must be 0; plain: retries may store twice, as
  with Kafka);
- every committed offset is at most its partition's log end.

Prints cycles, records sent, acknowledged, lost, duplicates per producer and restart times (spawn to
listening); exits 1 if anything was lost, duplicated by the idempotent producer, or committed past
the end.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

TOPIC = "soak"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_broker(data_dir: str, port: int) -> tuple[subprocess.Popen, float]:
    began = time.monotonic()
    env = {**os.environ, "TRAFKA_GROUPS_INITIAL_REBALANCE_DELAY_MS": "0", "TRAFKA_LOG_LEVEL": "WARNING"}
    process = subprocess.Popen(
        [sys.executable, "-m", "trafka", "serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", data_dir],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    for line in process.stdout:
        if re.search(r"trafka listening on", line):
            threading.Thread(target=process.stdout.read, daemon=True).start()
            return process, time.monotonic() - began
    raise SystemExit(f"the broker did not start (exit {process.wait()})")


class Load:
    """Two producers and a committing consumer, running across broker restarts."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.running = True
        self.sent: collections.Counter[str] = collections.Counter()
        self.acked: dict[str, set[str]] = {"idempotent": set(), "plain": set()}
        self.lock = threading.Lock()
        self.threads = [
            threading.Thread(target=self._produce, args=("idempotent", True), daemon=True),
            threading.Thread(target=self._produce, args=("plain", False), daemon=True),
            threading.Thread(target=self._consume, daemon=True),
        ]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def stop(self) -> None:
        self.running = False
        for thread in self.threads:
            thread.join(120)

    def _produce(self, name: str, idempotent: bool) -> None:
        producer = Producer(
            {
                "bootstrap.servers": self.bootstrap,
                "acks": "all",
                "enable.idempotence": idempotent,
                "linger.ms": 5,
                "message.timeout.ms": 120000,
                "reconnect.backoff.max.ms": 200,
            }
        )

        def report(err, msg) -> None:
            if err is None:
                with self.lock:
                    self.acked[name].add(msg.value().decode())

        n = 0
        while self.running:
            record_id = f"{name}-{n}"
            try:
                producer.produce(TOPIC, record_id.encode(), on_delivery=report)
            except BufferError:
                producer.poll(0.05)
                continue
            self.sent[name] += 1
            n += 1
            producer.poll(0)
            if n % 200 == 0:
                time.sleep(0.01)
        producer.flush(120)

    def _consume(self) -> None:
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": "soak-group",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        consumer.subscribe([TOPIC])
        while self.running:
            messages = consumer.consume(500, 0.2)
            if messages:
                try:
                    consumer.commit(asynchronous=True)
                except Exception:  # the broker may be down for a moment: the next commit covers it
                    pass
        consumer.close()


def read_everything(bootstrap: str, partitions: int) -> tuple[collections.Counter[str], dict[int, int], dict[int, int]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "soak-reader", "enable.auto.commit": False})
    ends = {p: consumer.get_watermark_offsets(TopicPartition(TOPIC, p), timeout=30)[1] for p in range(partitions)}
    consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(partitions)])
    stored: collections.Counter[str] = collections.Counter()
    positions = dict.fromkeys(range(partitions), 0)
    deadline = time.monotonic() + 300
    while any(positions[p] < ends[p] for p in positions) and time.monotonic() < deadline:
        for message in consumer.consume(10000, 1.0):
            if message.error() is None:
                stored[message.value().decode()] += 1
                positions[message.partition()] = message.offset() + 1
    committed_reader = Consumer({"bootstrap.servers": bootstrap, "group.id": "soak-group"})
    committed = {
        tp.partition: tp.offset
        for tp in committed_reader.committed([TopicPartition(TOPIC, p) for p in range(partitions)], timeout=30)
    }
    committed_reader.close()
    consumer.close()
    return stored, ends, committed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=3.0, help="load before each kill, at most")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    data_dir = tempfile.mkdtemp(prefix="trafka-soak-")
    port = free_port()
    bootstrap = f"127.0.0.1:{port}"
    broker, _ = start_broker(data_dir, port)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, args.partitions, 1)])[TOPIC].result(30)
    load = Load(bootstrap)
    load.start()
    restarts = []
    for _ in range(args.cycles):
        time.sleep(rng.uniform(0.5, args.seconds))
        broker.send_signal(signal.SIGKILL)
        broker.wait()
        broker, took = start_broker(data_dir, port)
        restarts.append(took)
    time.sleep(2)
    load.stop()
    stored, ends, committed = read_everything(bootstrap, args.partitions)
    broker.send_signal(signal.SIGTERM)
    broker.wait(60)

    failed = False
    print(
        f"cycles: {args.cycles} kill -9 restarts on {data_dir}; restart (spawn to listening) median "
        f"{statistics.median(restarts):.2f} s, max {max(restarts):.2f} s"
    )
    for name in ("idempotent", "plain"):
        acked = load.acked[name]
        lost = [i for i in acked if stored[i] == 0]
        duplicates = sum(1 for i, c in stored.items() if i.startswith(name + "-") and c > 1)
        print(f"{name}: sent {load.sent[name]}, acknowledged {len(acked)}, lost {len(lost)}, duplicates {duplicates}")
        failed |= bool(lost) or (name == "idempotent" and duplicates > 0)
    past_end = {p: (o, ends[p]) for p, o in committed.items() if o >= 0 and o > ends[p]}
    print(f"committed offsets past the log end: {len(past_end)} {past_end or ''}".rstrip())
    failed |= bool(past_end)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
