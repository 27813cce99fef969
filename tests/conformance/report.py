"""docs/CONFORMANCE.md from the stored results of each (suite, target) run.

Each run is kept as `<results>/<suite>--<target>.json` (top-level tests with outcome, seconds and
reason; when it ran, with how many records, in how long), so a later run of one target replaces only
its own file and the page always shows the latest result of every run.
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Mapping, Sequence

from .gotest import CaseResult, PackageRun
from .suites import Suite

KAFKA = "kafka"
TRAFKA = "trafka"


def store(path: pathlib.Path, runs: Sequence[PackageRun], meta: Mapping[str, object]) -> None:
    results = [
        {"package": run.package, "ended": run.ended, "tail": run.tail[-2000:], "tests": [_case(c) for c in run.results]}
        for run in runs
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**meta, "packages": results}, indent=1))


def _case(case: CaseResult) -> dict[str, object]:
    return {"name": case.name, "outcome": case.outcome, "seconds": round(case.seconds, 2), "reason": case.reason}


def load(folder: pathlib.Path, suite: str) -> dict[str, dict]:
    """{target: stored run} of one suite."""
    return {
        path.name.split("--", 1)[1].removesuffix(".json"): json.loads(path.read_text())
        for path in sorted(folder.glob(f"{suite}--*.json"))
    }


def _outcomes(stored: dict) -> dict[str, dict]:
    """{package short name + test name: case} of a stored run."""
    cases = {}
    for package in stored["packages"]:
        short = package["package"].rsplit("/", 1)[-1]
        for case in package["tests"]:
            cases[f"{short}.{case['name']}"] = case
    return cases


def _counts(cases: Mapping[str, dict]) -> tuple[int, int, int, int, int]:
    outcomes = [case["outcome"] for case in cases.values()]
    unfinished = len(outcomes) - outcomes.count("pass") - outcomes.count("fail") - outcomes.count("skip")
    return len(outcomes), outcomes.count("pass"), outcomes.count("fail"), outcomes.count("skip"), unfinished


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _target_label(name: str, stored: dict) -> str:
    if name == KAFKA:
        return f"Apache Kafka {stored['kafka_version']}"
    if name == TRAFKA:
        return "trafka (filesystem store, defaults)"
    return f"trafka pinned to {name.removeprefix(TRAFKA + '-')}"


def render_suite(suite: Suite, version: str, runs: Mapping[str, dict], known: Mapping[str, str]) -> list[str]:
    lines = [f"## {suite.name}: `{suite.module}` {version}", ""]
    lines.append(f"Packages: {', '.join(f'`{p}`' for p in suite.packages)}. Broker and environment as in {suite.ci}.")
    lines.append("")
    if not runs:
        return [*lines, "Not run yet.", ""]
    lines += [
        "| broker | tests | passed | failed | skipped | unfinished | records | wall time | load (min/mean/max) | run at |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    order = sorted(runs, key=lambda n: (n != KAFKA, n != TRAFKA, _release_key(n)))
    cases = {name: _outcomes(runs[name]) for name in order}
    for name in order:
        stored = runs[name]
        total, passed, failed, skipped, unfinished = _counts(cases[name])
        records = stored.get("records") or "-"
        filt = f" (`-run {stored['run']}`)" if stored.get("run") else ""
        lines.append(
            f"| {_target_label(name, stored)}{filt} | {total} | {passed} | {failed} | {skipped} | {unfinished} | {records} "
            f"| {stored['wall_seconds'] / 60:.1f} min | {_load(stored)} | {stored['finished']} |"
        )
    lines.append("")
    kafka, trafka = cases.get(KAFKA), cases.get(TRAFKA)
    if kafka is not None and trafka is not None:
        lines += _divergences(kafka, trafka, known)
        lines += _skipped_on_both(kafka, trafka, known)
        failing_on_kafka = sorted(n for n, c in kafka.items() if c["outcome"] == "fail")
        if failing_on_kafka:
            lines += ["### Failing on Apache Kafka itself", ""]
            for name in failing_on_kafka:
                on_trafka = trafka.get(name, {}).get("outcome", "not run")
                lines.append(f"- `{name}` (trafka: {on_trafka}): {_one_line(kafka[name]['reason'])}")
            lines.append("")
    for name in order:
        if name in (KAFKA, TRAFKA) or trafka is None:
            continue
        pinned = cases[name]
        lost = sorted(
            n for n, c in trafka.items() if c["outcome"] == "pass" and pinned.get(n, {}).get("outcome") == "fail"
        )
        lines += [f"### {_target_label(name, runs[name])}: passing unpinned, failing pinned", ""]
        if not lost:
            lines.append("None.")
        for test in lost:
            lines.append(f"- `{test}`:{_note(test, known)} {_one_line(pinned[test]['reason'])}")
        lines.append("")
    return lines


def _load(stored: dict) -> str:
    load = stored.get("load")
    return " / ".join(f"{value:.1f}" for value in load) if load else "-"


def _release_key(name: str) -> tuple[int, ...]:
    release = name.removeprefix(TRAFKA + "-")
    return tuple(int(part) for part in release.split(".") if part.isdigit())


def _divergences(kafka: Mapping[str, dict], trafka: Mapping[str, dict], known: Mapping[str, str]) -> list[str]:
    lines = ["### Passing on Apache Kafka, not on trafka", ""]
    diverging = sorted(
        n for n, c in kafka.items() if c["outcome"] == "pass" and trafka.get(n, {}).get("outcome") != "pass"
    )
    unreached = [n for n in diverging if trafka.get(n, {}).get("outcome", "unfinished") == "unfinished"]
    diverging = [n for n in diverging if n not in unreached]
    if not diverging and not unreached:
        lines.append("None.")
    if unreached:
        lines.append(
            f"- Not finished on trafka because the package's timeout ended its run first ({len(unreached)}: "
            "those running and those waiting for a parallel slot): " + ", ".join(f"`{n}`" for n in unreached)
        )
        lines += [f"- `{n}` (unfinished on trafka):{_note(n, known)}" for n in unreached if n in known]
    for name in diverging:
        case = trafka.get(name, {"outcome": "not run", "reason": ""})
        why = known.get(name, "")
        lines.append(f"- `{name}` ({case['outcome']} on trafka): {why + ' ' if why else ''}{_one_line(case['reason'])}")
    lines.append("")
    return lines


def _skipped_on_both(kafka: Mapping[str, dict], trafka: Mapping[str, dict], known: Mapping[str, str]) -> list[str]:
    both = sorted(n for n, c in kafka.items() if c["outcome"] == "skip" and trafka.get(n, {}).get("outcome") == "skip")
    lines = ["### Skipped on both", ""]
    if not both:
        lines.append("None.")
    for name in both:
        lines.append(f"- `{name}`: {_one_line(kafka[name]['reason'] or trafka[name]['reason'])}{_note(name, known)}")
    return [*lines, ""]


def _note(name: str, known: Mapping[str, str]) -> str:
    return f" {known[name]}" if name in known else ""
