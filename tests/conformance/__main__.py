"""`python -m tests.conformance`: client libraries' own test suites against Kafka and trafka (issue 41).

    python -m tests.conformance                       # every suite: Kafka 4.2, trafka, trafka's pins
    python -m tests.conformance --suites kgo --targets trafka --records 2000 --run 'TestGroupETL'

Builds each suite's test binaries from the module versions pinned in tests/conformance/go.mod, runs
them against each target in turn (one broker per suite and target, fresh data), keeps each run's
results under --results, and writes the page (docs/CONFORMANCE.md) from every stored result.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from . import gotest, report, session, targets
from .suites import SUITES

ROOT = pathlib.Path(__file__).resolve().parents[2]
KNOWN = ROOT / "tests" / "conformance" / "known.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance", description=__doc__.split("\n")[0])
    parser.add_argument("--suites", default=",".join(SUITES), help="comma-separated: kgo, kafka-go")
    everything = ["kafka", "trafka", *(f"trafka-{pin}" for pin in targets.KFAKE_PINS)]
    parser.add_argument("--targets", default=",".join(everything), help="kafka, trafka, trafka-<release>")
    parser.add_argument("--records", type=int, default=0, help="kgo's KGO_TEST_RECORDS (default: its CI's)")
    parser.add_argument("--run", default="", help="only the tests matching this `go test -run` pattern")
    parser.add_argument("--results", type=pathlib.Path, default=ROOT / "build" / "conformance")
    parser.add_argument("--report", type=pathlib.Path, default=ROOT / "docs" / "CONFORMANCE.md")
    args = parser.parse_args(argv)
    suites = [SUITES[name] for name in args.suites.split(",") if name]
    wanted = [targets.target(name) for name in args.targets.split(",") if name]
    with tempfile.TemporaryDirectory(prefix="trafka-conformance-") as scratch:
        work = pathlib.Path(scratch)
        built = {suite.name: _build(suite, work) for suite in suites}
        broken = []
        for target in wanted:
            for suite in suites:
                if not _run(suite, target, built[suite.name], args, work / f"{suite.name}--{target.name}"):
                    broken.append(f"{suite.name} against {target.name}")
    write_report(args.results, args.report)
    print(f"wrote {args.report}")
    if broken:
        print(f"no results (the broker or the session failed): {', '.join(broken)}", file=sys.stderr)
    return 1 if broken else 0


def _build(suite, work: pathlib.Path) -> list[dict[str, str]]:
    packages = []
    for package in suite.packages:
        short = package.rsplit("/", 1)[-1]
        binary = work / f"{suite.name}-{short}.test"
        began = time.monotonic()
        gotest.build(package, binary)
        print(f"built {package} in {time.monotonic() - began:.0f}s", flush=True)
        packages.append({"name": package, "binary": str(binary), "dir": str(gotest.package_dir(package))})
    return packages


def _run(suite, target: targets.Target, packages: list[dict[str, str]], args, work: pathlib.Path) -> bool:
    """One suite against one broker; False (and the broker's log tail printed) if no results came."""
    work.mkdir(parents=True)
    records = args.records or suite.default_records
    plan = {
        "suite": suite.name,
        "target": target.name,
        "kafka_version": target.kafka_version,
        "pin": target.pin,
        "work": str(work),
        "records": records,
        "run": args.run,
        "namespace": suite.fixed_ports is not None,
        "packages": [{**p, "events": str(work / f"{p['name'].rsplit('/', 1)[-1]}.jsonl")} for p in packages],
    }
    (work / "plan.json").write_text(json.dumps(plan))
    prefix = session.network_namespace_prefix() if plan["namespace"] else []
    print(f"{suite.name} against {target.name} ...", flush=True)
    began = time.monotonic()
    process = subprocess.Popen(
        [*prefix, sys.executable, "-m", "tests.conformance.session", str(work / "plan.json")], cwd=ROOT
    )
    loads = [os.getloadavg()[0]]  # the machine's 1-minute load average, every 10 s of the run
    while process.poll() is None:
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            loads.append(os.getloadavg()[0])
    wall = time.monotonic() - began
    if process.returncode != 0:
        broker_log = next((work / "broker").glob("*.log"), None)
        detail = broker_log.read_text()[-3000:] if broker_log else ""
        print(f"{suite.name} against {target.name}: the session failed ({process.returncode})\n{detail}", flush=True)
        return False
    runs = []
    for package in plan["packages"]:
        with open(package["events"], errors="replace") as events:
            runs.append(gotest.parse_events(package["name"], events))
    meta = {
        "suite": suite.name,
        "target": target.name,
        "kafka_version": target.kafka_version,
        "records": records if suite.name == "kgo" else None,
        "run": args.run,
        "wall_seconds": round(wall, 1),
        "load": [round(min(loads), 1), round(sum(loads) / len(loads), 1), round(max(loads), 1)],
        "finished": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
    report.store(args.results / f"{suite.name}--{target.name}.json", runs, meta)
    counts = [c.outcome for run in runs for c in run.results]
    print(
        f"{suite.name} against {target.name}: {len(counts)} tests, {counts.count('pass')} passed, "
        f"{counts.count('fail')} failed, {counts.count('skip')} skipped in {wall / 60:.1f} min",
        flush=True,
    )
    return True


def write_report(results: pathlib.Path, page: pathlib.Path) -> None:
    versions = gotest.pinned_versions()
    known = json.loads(KNOWN.read_text()) if KNOWN.exists() else {}
    lines = [
        "# Conformance: client libraries' own test suites",
        "",
        "Generated by `python -m tests.conformance` (issue 41, ADR 77) from its last run of each suite",
        "against each broker; the suites' versions are pinned in `tests/conformance/go.mod`. Each suite",
        "runs as its own CI runs it (their brokers' settings, their environment variables), first against",
        "Apache Kafka (`tests/kafka`), then against trafka with the filesystem store and its defaults, then",
        "against trafka pinned (`--kafka-version`) to the releases franz-go's CI pins its kfake to.",
        "`.ci/run` runs a subset (`tests/integration/test_conformance.py`); this page is the full run's.",
        "",
        "```sh",
        "python -m tests.conformance                  # both suites; Kafka, trafka, the five pins; kgo's own record count",
        "python -m tests.conformance --suites kgo --targets kafka,trafka --records 2000 --run 'TestGroupETL|TestTxnEtl'",
        "```",
        "",
        "It needs Go 1.26 (the suites come from the Go module proxy), Java 17 and Maven (Apache Kafka, ADR",
        "63) and util-linux's `unshare` (kafka-go's tests dial `localhost:9092`, so that suite and its broker",
        "run in a network namespace of their own). A run's record count (kgo's `KGO_TEST_RECORDS`; 500,000",
        "by default, as in franz-go's CI) is in each table: the runs below were made with fewer on a shared",
        "2-core machine. kgo's tests run in parallel against one broker, so a slow broker turns into",
        "timeouts inside the tests (10 s contexts, 45 s group sessions) before it turns into wrong answers.",
        "Each table gives the machine's 1-minute load average during each run (min / mean / max, sampled",
        "every 10 s): the machine has 2 cores, and other work shared it.",
        "",
    ]
    for suite in SUITES.values():
        runs = report.load(results, suite.name)
        lines += report.render_suite(suite, versions.get(suite.module, "?"), runs, known)
    page.write_text("\n".join(lines).rstrip() + "\n")


if __name__ == "__main__":
    sys.exit(main())
