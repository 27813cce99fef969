"""Where a record's latency goes between processes: the kernel's scheduler events along the latency bench's
chain, from the producer's thread waking the broker to the consumer's application thread done with it.

    python bench/wake_chain.py --spawn trafka [--trafka-src DIR] [--seconds 2]
    python bench/wake_chain.py --spawn kfake

Runs `throughput.py --spawn BROKER --latency` (one record per millisecond), records `perf sched` on every
CPU for `--seconds` once it is past its warm-up, finds the threads (the broker's; the producer's and the
consumer's librdkafka threads that talk to it, by who wakes whom; the consumer's application thread) and
prints the medians of each link, in µs:

- the broker woken by the producer's thread -> the broker on a CPU (an idle vCPU's wake-up) -> the
  broker waking the consumer's thread (its own work to the answer's `writev`);
- the consumer's thread woken -> on a CPU (ADR 135: it waited there for the broker to sleep) -> it wakes
  the application thread -> the application on a CPU -> done.

Needs `perf` with the sched tracepoints (root). Tracing slows every link a little; compare brokers run
the same way, not with the bench's own figures. A record whose application thread ran without its
switch in being recorded (a vCPU leaving idle can lose the event) is left out.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
_EVENT = re.compile(r"\s*(\S+)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:(\w+):\s+(.*)")


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def _tids(pid: int) -> set[str]:
    return {t.name for t in Path(f"/proc/{pid}/task").iterdir()}


def _cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")


def _events(data: str) -> list[tuple[float, str, str, str]]:
    script = subprocess.run(["perf", "script", "-i", data], capture_output=True, text=True, check=True).stdout
    events = []
    for line in script.splitlines():
        m = _EVENT.match(line)
        if m and m.group(5) in ("sched_waking", "sched_switch"):
            events.append((float(m.group(4)) * 1e6, m.group(2), m.group(5), m.group(6)))
    return events


def _field(rest: str, name: str) -> str:
    m = re.search(rf"\b{name}=(\d+)", rest)
    return m.group(1) if m else ""


def chains(events, broker: set[str], producer: set[str], consumer: set[str], app: str) -> list[dict[str, float]]:
    wakes = collections.Counter((pid, _field(rest, "pid")) for _, pid, kind, rest in events if kind == "sched_waking")
    prdk = max(producer, key=lambda t: sum(n for (w, b), n in wakes.items() if w == t and b in broker))
    crdk = max(consumer - {app}, key=lambda t: sum(n for (w, c), n in wakes.items() if c == t and w in broker))
    done, state = [], None
    for t, pid, kind, rest in events:
        if state is not None and t - state["woken"] > 2000:
            state = None
        if kind == "sched_waking":
            target = _field(rest, "pid")
            if state is None and pid == prdk and target in broker:
                state = {"woken": t}
            elif state is not None and "answered" not in state and pid in broker and target == crdk:
                state["answered"] = t
            elif state is not None and "answered" in state and pid == crdk and target == app:
                state.setdefault("app_woken", t)
            continue
        if state is None:
            continue
        nxt, prev = _field(rest, "next_pid"), _field(rest, "prev_pid")
        if "answered" not in state:
            if nxt in broker:
                state.setdefault("running", t)
        elif nxt == crdk:
            state.setdefault("consumer_running", t)
        elif nxt == app and "app_woken" in state:
            state.setdefault("app_running", t)
        elif prev == app and "app_woken" in state:
            if "app_running" in state:
                state["app_done"] = t
                done.append(state)
            state = None  # else its switch in was not recorded (a vCPU leaving idle can lose it): dropped
    return done


LINKS = (
    ("woken", "running", "broker woken -> on a CPU"),
    ("running", "answered", "broker on a CPU -> wakes the consumer's thread"),
    ("answered", "consumer_running", "consumer's thread woken -> on a CPU"),
    ("consumer_running", "app_woken", "consumer's thread -> wakes the application"),
    ("app_woken", "app_running", "application woken -> on a CPU"),
    ("woken", "app_done", "broker woken -> application done"),
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spawn", choices=("trafka", "kfake"), required=True)
    ap.add_argument("--trafka-src", help="with --spawn trafka: another tree's src/")
    ap.add_argument("--seconds", type=float, default=2.0, help="how long perf records (default 2)")
    ap.add_argument("--after", type=float, default=8.0, help="seconds after the start to record (the warm-up)")
    args = ap.parse_args()
    bench = [sys.executable, str(HERE / "throughput.py"), "--spawn", args.spawn, "--latency"]
    bench += ["--warmup", "6000", "--messages", str(int(1000 * (args.after + args.seconds + 4))), "--json"]
    if args.trafka_src:
        bench += ["--trafka-src", args.trafka_src]
    run = subprocess.Popen(bench, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=HERE)
    try:
        time.sleep(args.after)
        kids = _children(run.pid)
        brokers = [k for k in kids if ("trafka" in _cmdline(k) and "serve" in _cmdline(k)) or "kfake" in _cmdline(k)]
        consumers = [k for k in kids if "spawn_main" in _cmdline(k)]  # the consumer's process (multiprocessing)
        if len(brokers) != 1 or len(consumers) != 1:
            raise SystemExit(f"expected a broker and a consumer under the bench, found {brokers} and {consumers}")
        broker, consumer, producer = _tids(brokers[0]), _tids(consumers[0]), _tids(run.pid)
        with tempfile.TemporaryDirectory(prefix="wake-chain-") as tmp:
            data = os.path.join(tmp, "sched.data")
            subprocess.run(
                ["perf", "sched", "record", "-a", "-o", data, "sleep", str(args.seconds)],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            found = chains(_events(data), broker, producer, consumer, str(consumers[0]))
    finally:
        run.wait(120)
    if not found:
        raise SystemExit("no record's chain found in the trace")
    print(f"{args.spawn}: {len(found)} records")
    for start, end, label in LINKS:
        d = sorted(c[end] - c[start] for c in found if start in c and end in c)
        if d:
            print(
                f"  {label:<48} p10 {d[len(d) // 10]:6.0f}  p50 {statistics.median(d):6.0f}  p90 {d[len(d) * 9 // 10]:6.0f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
