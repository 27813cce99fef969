#!/usr/bin/env python3
"""Median table (Markdown) of `throughput.py --json` outputs.

    python bench/summarize.py results/*.json

Runs are grouped by broker, message count, size, acks and linger.ms.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict


def main(paths: list[str]) -> int:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    machines = set()
    for path in paths:
        with open(path) as f:
            r = json.load(f)
        if not r.get("ok"):
            print(f"# skipping failed run {path}", file=sys.stderr)
            continue
        machines.add(r["machine"])
        groups[(r["linger_ms"], r["acks"], r["broker"], r["messages"], r["size"])].append(r)
    for m in sorted(machines):
        print(f"Machine: {m}\n")
    print("| broker | linger.ms | acks | messages | runs | produce msgs/s (min–max) | produce MB/s "
          "| produce broker CPU s | consume msgs/s (min–max) | consume MB/s | consume broker CPU s |")  # fmt: skip
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (linger, acks, broker, messages, _size), runs in sorted(groups.items(), key=lambda kv: (-kv[0][0], kv[0])):

        def med(phase: str, key: str) -> float | None:
            values = [r[phase][key] for r in runs if r[phase][key] is not None]
            return statistics.median(values) if values else None

        def fmt(v: float | None, spec: str) -> str:
            return "–" if v is None else format(v, spec)

        def rate(phase: str) -> str:
            values = [r[phase]["msgs_per_s"] for r in runs]
            k = 1000
            return f"{med(phase, 'msgs_per_s'):,.0f} ({min(values) / k:,.0f}k–{max(values) / k:,.0f}k)"

        print(
            f"| {broker} | {linger} | {acks} | {messages:,} | {len(runs)} "
            f"| {rate('produce')} | {fmt(med('produce', 'mb_per_s'), '.1f')} "
            f"| {fmt(med('produce', 'broker_cpu_s'), '.2f')} "
            f"| {rate('consume')} | {fmt(med('consume', 'mb_per_s'), '.1f')} "
            f"| {fmt(med('consume', 'broker_cpu_s'), '.2f')} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
