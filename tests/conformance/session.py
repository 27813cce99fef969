"""One suite against one broker: start it, run each package's test binary, stop it.

`python -m tests.conformance.session PLAN.json` is what the conformance command runs per (suite,
target), inside a private network namespace (`unshare --net`) when the suite's tests dial fixed
ports: there 9092 is this broker's whatever else runs on the machine. Each package's test2json events
go to `<events>/<package's last element>.jsonl`.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

from . import gotest, targets
from .suites import SUITES


def network_namespace_prefix() -> list[str]:
    """The command prefix that runs a process in a new network namespace with loopback up: as root
    `unshare --net`, otherwise in a user namespace too (`--map-root-user`)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        raise RuntimeError("the kafka-go suite needs util-linux's unshare (its tests dial localhost:9092)")
    user = [] if os.geteuid() == 0 else ["--map-root-user"]
    return [unshare, "--net", *user, "--"]


def _loopback_up() -> None:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)


def run(plan: dict) -> None:
    suite = SUITES[plan["suite"]]
    target = targets.Target(plan["target"], plan["kafka_version"], plan["pin"])
    work = pathlib.Path(plan["work"])
    if plan["namespace"]:
        _loopback_up()
    with targets.running(target, suite, work / "broker") as endpoints:
        environment = {**gotest.go_env(), **suite.environment(endpoints, target.kafka_version, plan["records"])}
        for package in plan["packages"]:
            events = pathlib.Path(package["events"])
            with open(events, "w") as out:
                subprocess.run(
                    gotest.command(package["name"], pathlib.Path(package["binary"]), plan["run"], suite.timeout),
                    cwd=package["dir"],
                    env=environment,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                )


if __name__ == "__main__":
    run(json.loads(pathlib.Path(sys.argv[1]).read_text()))
