"""Start and stop times of the embeddable broker (`trafka.Broker`), in process.

    python bench/embedded.py [--runs 50] [--data-dir]

Start: from `Broker(...).start()` being called to the first TCP connection the broker accepts
(`start()` returns once it listens; the connect is timed too). Stop: `stop()` until it returns (the
loop drained, the thread joined). The first start in a process also pays for importing the broker
(the Kafka protocol classes): reported apart, as "cold". Prints min/median/p95 of the warm runs.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import tempfile
import time


def once(data_dir: str | None) -> tuple[float, float]:
    import trafka

    began = time.perf_counter()
    broker = trafka.Broker(data_dir=data_dir)
    broker.start()
    with socket.create_connection((broker.host, broker.port)):
        started = time.perf_counter() - began
        began = time.perf_counter()
        broker.stop()
        stopped = time.perf_counter() - began
    return started, stopped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--data-dir", action="store_true", help="the filesystem store in a new temp dir per run")
    args = parser.parse_args()

    def directory() -> str | None:
        return tempfile.mkdtemp(prefix="trafka-bench-") if args.data_dir else None

    cold_start, cold_stop = once(directory())
    starts, stops = [], []
    for _ in range(args.runs):
        start, stop = once(directory())
        starts.append(start)
        stops.append(stop)
    store = "filesystem" if args.data_dir else "memory"
    print(
        f"store: {store}; cold (first in process, imports included): start {cold_start * 1000:.1f} ms, stop {cold_stop * 1000:.1f} ms"
    )
    for name, values in (("start", starts), ("stop", stops)):
        ordered = sorted(values)
        p95 = ordered[int(len(ordered) * 0.95) - 1]
        print(
            f"{name}: min {ordered[0] * 1000:.2f} ms, median {statistics.median(ordered) * 1000:.2f} ms, p95 {p95 * 1000:.2f} ms over {len(values)} runs"
        )


if __name__ == "__main__":
    main()
