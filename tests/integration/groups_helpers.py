"""Shared helpers for the consumer group integration tests (unique names, topic creation and client
logs are in `clients`).

Group tests run against their own broker with a short initial rebalance delay (Kafka's
`group.initial.rebalance.delay.ms`), so a group forms quickly without the 3 s default. Every wait is
a poll loop bounded by a deadline; the helpers here never sleep to synchronise.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator

from confluent_kafka import Producer

from tests.waiting import eventually

from .broker import BrokerProcess

TIMEOUT = 10.0
INITIAL_REBALANCE_DELAY_MS = 200
SESSION_TIMEOUT_MS = 6000  # the broker's default group.min.session.timeout.ms
GROUP_BROKER_ENV = {"TRAFKA_GROUPS_INITIAL_REBALANCE_DELAY_MS": str(INITIAL_REBALANCE_DELAY_MS)}


@contextlib.contextmanager
def group_broker() -> Iterator[BrokerProcess]:
    process = BrokerProcess(["--memory"], env=GROUP_BROKER_ENV).start()
    try:
        yield process
    finally:
        assert process.stop() == 0, process.log()


def wait_until(
    condition: Callable[[], bool],
    what: str,
    timeout: float = TIMEOUT,
    step: Callable[[], None] | None = None,
    state: Callable[[], object] | None = None,
) -> float:
    """Run `step` (a bounded client poll) until `condition()` holds; the seconds it took.

    Fails with `what` and the last `state()` once `timeout` passes (`tests.waiting.eventually`).
    """
    start = time.monotonic()

    def stepped() -> bool:
        if step is not None:
            step()
        return condition()

    eventually(stepped, timeout, what=what, interval=0 if step is not None else 0.05, state=state)
    return time.monotonic() - start


def produce(
    bootstrap: str,
    topic: str,
    partitions: Iterable[int],
    per_partition: int,
    tag: str = "m",
    logger: logging.Logger | None = None,
) -> set[tuple[int, str]]:
    """Produce `per_partition` records to each partition; the (partition, value) pairs sent."""
    conf: dict = {"bootstrap.servers": bootstrap, "linger.ms": 5}
    if logger is not None:
        conf["logger"] = logger
    producer = Producer(conf)
    errors: list = []
    sent: set[tuple[int, str]] = set()

    def delivered(err, msg) -> None:
        if err is not None:
            errors.append(err)

    for partition in partitions:
        for i in range(per_partition):
            value = f"{tag}-p{partition}-{i}"
            producer.produce(topic, value=value.encode(), partition=partition, on_delivery=delivered)
            sent.add((partition, value))
    assert producer.flush(TIMEOUT) == 0, "producer did not deliver every record in time"
    assert errors == [], errors
    return sent


def is_disjoint_cover(assignments: Iterable[set[int]], partitions: int) -> bool:
    seen = [p for parts in assignments for p in parts]
    return sorted(seen) == list(range(partitions))


# -- a confluent-kafka consumer in a child process, to be killed without LeaveGroup ------------------

_CHILD = r"""
import sys
from confluent_kafka import Consumer
bootstrap, topic, group, session_ms = sys.argv[1:5]
consumer = Consumer({
    "bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
    "enable.auto.commit": False, "session.timeout.ms": int(session_ms),
    "heartbeat.interval.ms": 500, "log_level": 0,
})
consumer.subscribe([topic])
last = None
while True:
    consumer.poll(0.1)
    current = sorted(tp.partition for tp in consumer.assignment())
    if current != last:
        last = current
        print("ASSIGNED " + ",".join(map(str, current)), flush=True)
"""


class ChildConsumer:
    """A confluent-kafka group member in its own process; `kill()` stops it with no LeaveGroup."""

    def __init__(self, bootstrap: str, topic: str, group: str, session_timeout_ms: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _CHILD, bootstrap, topic, group, str(session_timeout_ms)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ},
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.assignment: set[int] = set()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.strip())

    def refresh(self) -> set[int]:
        """The child's latest reported assignment."""
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                return self.assignment
            if line.startswith("ASSIGNED"):
                parts = line.removeprefix("ASSIGNED").strip()
                self.assignment = {int(p) for p in parts.split(",")} if parts else set()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(TIMEOUT)
