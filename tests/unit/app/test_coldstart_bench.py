"""`bench/coldstart.py` reports every goal of issue 39 as a ratio to the floor (`python -c "import trio,
attrs"`) with whether the median meets it, and Kafka's start beside (`--kafka`). The figures themselves
come from a quiet machine, never from a test; this checks the report's arithmetic and its cases."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

BENCH = Path(__file__).resolve().parents[3] / "bench" / "coldstart.py"


def _coldstart():
    spec = importlib.util.spec_from_file_location("coldstart", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_goal_is_a_ratio_to_the_floor_with_whether_it_holds():
    coldstart = _coldstart()
    found = {
        r["case"]: r
        for r in coldstart.rows(
            {
                "floor": [0.30, 0.32, 0.28],
                "serve-memory": [0.45, 0.40, 0.50],
                "serve-data-dir": [0.90, 0.95, 0.85],
                "help": [0.40],
                "topic-list": [0.50],
                "broker": [0.44],
                "broker-again": [0.0009],
                "trio": [0.2],
                "kafka": [1.2],
            }
        )
    }
    assert (found["serve-memory"]["x_floor"], found["serve-memory"]["goal"], found["serve-memory"]["meets"]) == (
        1.5,
        "<= 1.5x",
        True,
    )
    assert (found["serve-data-dir"]["x_floor"], found["serve-data-dir"]["meets"]) == (3.0, False)
    assert found["topic-list"]["meets"] is False and found["help"]["meets"] is True
    assert (found["broker-again"]["goal"], found["broker-again"]["meets"]) == ("<= 1 ms", True)
    assert found["kafka"]["goal"] is None and found["kafka"]["median_ms"] == 1200.0
    assert "NO" in coldstart.table(list(found.values()))


def test_each_case_reports_its_cpu_time_as_a_ratio_to_the_floors():
    coldstart = _coldstart()
    times = {"floor": [0.30, 0.32], "broker": [0.60, 0.70]}
    found = {r["case"]: r for r in coldstart.rows(times, {"floor": [0.20, 0.20], "broker": [0.30, 0.32]})}
    assert (found["broker"]["cpu_ms"], found["broker"]["cpu_x_floor"]) == (310.0, 1.55)
    assert "310.0ms" in coldstart.table(list(found.values()))


def test_every_goal_has_a_case_and_kafka_is_timed_beside():
    coldstart = _coldstart()
    source = BENCH.read_text()
    cases = set(re.findall(r'^\s+"([a-z-]+)": ', source[source.index("cases: dict") :], re.M))
    assert set(coldstart.GOALS) <= cases
    assert {"floor", "python", "trio"} <= cases
    assert 'cases["kafka"] = kafka_start' in source
