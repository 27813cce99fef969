"""Cold start of several commits side by side, by CPU time: `bench/coldstart.py`'s own cases run for each
variant in turn, run by run, so every variant sees the same minutes of a shared machine.

    python bench/coldstart_trees.py RUNS VARIANT,VARIANT,... [CASE,CASE,...]

A VARIANT names an executable `/tmp/coldstart-py-VARIANT` that runs Python with that variant's trafka:
for a commit, `git archive COMMIT src | tar -x -C /tmp/coldstart-tree-V/trafka --strip-components=1`
and a two-line script `PYTHONPATH=/tmp/coldstart-tree-V exec VENV/bin/python "$@"`, where VENV is a
venv with trafka's dependencies and no trafka installed (an editable install's finder would win over
`PYTHONPATH`). One venv for every variant: they pay the same interpreter and site-packages. The cases
are `floor` (timed with the first variant), `broker`, `broker-again`, `serve-memory`, `serve-data-dir`
(default: floor, broker, serve-memory). The table gives, per case and variant, the wall-clock median,
its ratio to the floor's, the CPU time's median and minimum, and the CPU ratio to the floor's.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path


def main() -> None:
    spec = importlib.util.spec_from_file_location("coldstart", Path(__file__).with_name("coldstart.py"))
    assert spec is not None and spec.loader is not None
    coldstart = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(coldstart)
    runs, variants = int(sys.argv[1]), sys.argv[2].split(",")
    wanted = sys.argv[3].split(",") if len(sys.argv) > 3 else ["floor", "broker", "serve-memory"]
    data_dirs = tempfile.mkdtemp()
    cases: dict[str, Callable[[], float]] = {
        "floor": lambda: coldstart.run_to_exit("-c", "import trio, attrs"),
        "broker": coldstart.first_broker,
        "broker-again": coldstart.broker_again,
        "serve-memory": lambda: coldstart.serve_until_ready("--memory"),
        "serve-data-dir": lambda: coldstart.serve_until_ready("--data-dir", f"{data_dirs}/{os.urandom(6).hex()}"),
    }
    for variant in variants:
        coldstart.compile_bytecode(f"/tmp/coldstart-py-{variant}")
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for run in range(runs):
        for variant in variants:
            coldstart.PYTHON = f"/tmp/coldstart-py-{variant}"
            for case in wanted:
                if case == "floor" and variant != variants[0]:
                    continue
                wall = cases[case]()
                samples.setdefault((case, variant), []).append((wall, coldstart.LAST_CPU[0]))
        print(f"run {run + 1}/{runs}", file=sys.stderr, flush=True)
    floor = samples[("floor", variants[0])]
    floor_wall = statistics.median(s[0] for s in floor)
    floor_cpu = statistics.median(s[1] for s in floor)
    print(f"{'case':<16}{'variant':<12}{'wall':>9}{'x floor':>8}{'cpu':>9}{'cpu min':>9}{'x floor':>8}")
    for (case, variant), found in samples.items():
        wall = statistics.median(s[0] for s in found)
        cpu = statistics.median(s[1] for s in found)
        least = min(s[1] for s in found)
        print(
            f"{case:<16}{variant:<12}{wall * 1000:>7.0f}ms{wall / floor_wall:>8.2f}"
            f"{cpu * 1000:>7.1f}ms{least * 1000:>7.1f}ms{cpu / floor_cpu:>8.2f}"
        )


if __name__ == "__main__":
    main()
