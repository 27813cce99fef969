"""Broker memory with many connections and partitions under the fan-in load.

    python bench/memory.py [--connections 1000] [--topics 50] [--partitions 100] [--store filesystem]

Spawns trafka, creates `--topics` x `--partitions` partitions (5,000 by default), opens
`--connections` idle client connections (each completes one ApiVersions round trip and stays open),
then runs `bench/fanin.py`'s producers (4 processes, one record per request, acks=all) on one of the
topics while sampling the broker's resident memory (VmRSS from /proc/PID/status) every 50 ms. Prints
RSS after start, after the partitions, after the connections, and the peak under load.
"""

from __future__ import annotations

import argparse
import socket
import struct
import tempfile
import threading
import time
from pathlib import Path

from confluent_kafka.admin import AdminClient, NewTopic
from fanin import _phase, _produce
from throughput import machine_line, spawn_trafka


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def api_versions_connection(host: str, port: int) -> socket.socket:
    sock = socket.create_connection((host, port))
    body = struct.pack(">hhih", 18, 0, 1, 5) + b"bench"
    sock.sendall(struct.pack(">i", len(body)) + body)
    size = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
    sock.recv(size, socket.MSG_WAITALL)
    return sock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--records", type=int, default=10000, help="per producer, 4 producers")
    parser.add_argument("--store", choices=["memory", "filesystem"], default="filesystem")
    parser.add_argument("--trafka-src", help="run the spawned trafka from another src/ tree")
    args = parser.parse_args()
    store = ("--memory",) if args.store == "memory" else ("--data-dir", tempfile.mkdtemp(prefix="bench-memory-"))
    broker = spawn_trafka(None, 60, args.trafka_src, store)
    pid = broker.proc.pid
    host, port = broker.bootstrap.rsplit(":", 1)
    peak = 0.0
    sampling = True

    def sample() -> None:
        nonlocal peak
        while sampling:
            peak = max(peak, rss_mib(pid))
            time.sleep(0.05)

    try:
        started = rss_mib(pid)
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        names = [f"mem-{n}" for n in range(args.topics)]
        for _name, future in admin.create_topics(
            [NewTopic(n, args.partitions, 1) for n in names], operation_timeout=120
        ).items():
            future.result(120)
        with_partitions = rss_mib(pid)
        sockets = [api_versions_connection(host, int(port)) for _ in range(args.connections)]
        with_connections = rss_mib(pid)
        thread = threading.Thread(target=sample, daemon=True)
        thread.start()
        _phase(
            _produce, [(broker.bootstrap, names[0], args.partitions, args.records, 100, i) for i in range(4)], broker
        )
        sampling = False
        thread.join()
        for sock in sockets:
            sock.close()
    finally:
        broker.stop()
    print(f"# {machine_line()}")
    print(
        f"trafka ({args.store}): RSS {started:.0f} MiB at start, {with_partitions:.0f} MiB with "
        f"{args.topics * args.partitions} partitions, {with_connections:.0f} MiB with {args.connections} "
        f"connections, peak {peak:.0f} MiB under 4 producers x {args.records} records"
    )


if __name__ == "__main__":
    main()
