"""Kafka's Java clients against trafka and against Apache Kafka: the JUnit 5 suite in tests/java (ADR 65).

The suite is one Maven project (`tests/java/pom.xml`, Kafka's version from tests/kafka/pom.xml). Run
here twice: once as a Java user runs it, the suite starting `python -m trafka serve --memory --port 0
--ready-file F` itself (with this interpreter), and once with `-Dkafka.bootstrap` naming the session's
Apache Kafka (the `apache_kafka` fixture). A failing JUnit test fails here with Surefire's report of it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

# Each run is a Maven start plus the whole JUnit suite (KIP-848 and classic rebalances at Kafka's
# default heartbeat interval): minutes on a loaded machine.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]

HERE = Path(__file__).resolve().parent
POM = HERE / "pom.xml"


def _maven(reports: Path, *properties: str) -> subprocess.CompletedProcess[str]:
    """`mvn -q test`, offline when everything is already in ~/.m2 (after the first resolve), else online."""
    command = ["mvn", "-q", "-B", "-f", str(POM), "test", f"-Dsurefire.reports={reports}", *properties]
    offline = subprocess.run([*command[:4], "-o", *command[4:]], capture_output=True, text=True, timeout=1200)
    if offline.returncode != 0 and "offline" in offline.stdout + offline.stderr and not reports.exists():
        return subprocess.run(command, capture_output=True, text=True, timeout=1200)
    return offline


def _junit_results(reports: Path) -> tuple[int, int, list[str]]:
    """Tests run, tests skipped, and each failure or error as `Class.method: message`."""
    run, skipped, failures = 0, 0, []
    for report in sorted(reports.glob("TEST-*.xml")):
        for case in ET.parse(report).getroot().iter("testcase"):
            run += 1
            name = f"{case.get('classname', '').rsplit('.', 1)[-1]}.{case.get('name')}"
            if case.find("skipped") is not None:
                skipped += 1
            for kind in ("failure", "error"):
                for problem in case.findall(kind):
                    detail = (problem.get("message") or problem.text or "").strip().splitlines()
                    failures.append(f"{name}: {kind}: {detail[0] if detail else problem.get('type')}")
    return run, skipped, failures


@pytest.mark.parametrize("broker", ["trafka", "apache_kafka"])
def test_the_java_clients_suite_passes(broker: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    properties = [f"-Dtrafka.python={sys.executable}"]
    if broker == "apache_kafka":
        properties.append(f"-Dkafka.bootstrap={request.getfixturevalue('apache_kafka').bootstrap}")
    reports = tmp_path / "surefire-reports"
    began = time.monotonic()
    result = _maven(reports, *properties)
    print(f"JUnit suite against {broker}: {time.monotonic() - began:.1f}s")
    run, skipped, failures = _junit_results(reports)
    assert not failures, f"JUnit failures against {broker}:\n" + "\n".join(failures)
    assert result.returncode == 0, f"mvn failed against {broker}:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    assert run >= 25 and skipped == 0, (run, skipped)
    shutil.rmtree(reports)


def test_a_kafka_streams_application_outlives_a_trafka_restart(tmp_path: Path) -> None:
    """tests/java's StreamsBrokerRestartScenario: trafka only (its own broker, restarted on its data dir),
    so it is not one of the suite's `*Test` classes that run against both brokers."""
    reports = tmp_path / "surefire-reports"
    began = time.monotonic()
    result = _maven(reports, f"-Dtrafka.python={sys.executable}", "-Dtest=StreamsBrokerRestartScenario")
    print(f"StreamsBrokerRestartScenario: {time.monotonic() - began:.1f}s")
    run, skipped, failures = _junit_results(reports)
    assert not failures, "JUnit failures:\n" + "\n".join(failures)
    assert result.returncode == 0, f"mvn failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    assert (run, skipped) == (1, 0)
