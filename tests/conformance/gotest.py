"""Build a Go package's test binary from the pinned module and read its results.

The suites are ordinary Go modules: `go test -c <package>` inside `tests/conformance/` (whose go.mod
pins their versions) builds a package's test binary from the module cache, fetching it through the Go
module proxy the first time. The binary runs in its package's source directory (as `go test` runs
it: some tests read files beside them), under `go tool test2json`, whose JSON events say per test
whether it ran, passed, failed or was skipped, and what it printed.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
from collections.abc import Iterable

import attrs

MODULE_DIR = pathlib.Path(__file__).parent
_FILE_LINE = re.compile(r"^\s+\S+\.go:\d+: ")
_CLEAN_UP = re.compile(r"NOT DELETING|deleting (topic|group)|completed in")


def go_env() -> dict[str, str]:
    """The environment Go commands run in: the module's own go.mod decides, never a workspace."""
    return {**os.environ, "GOWORK": "off", "GOFLAGS": "-mod=mod"}


def pinned_versions() -> dict[str, str]:
    """{module path: version} of go.mod's direct requirements: the suites and their versions."""
    versions: dict[str, str] = {}
    in_block = False
    for line in (MODULE_DIR / "go.mod").read_text().splitlines():
        text = line.split("//")[0].strip()
        if text == "require (":
            in_block = True
        elif in_block and text == ")":
            in_block = False
        elif in_block and text and "// indirect" not in line:
            module, version = text.split()
            versions[module] = version
    return versions


def package_dir(package: str) -> pathlib.Path:
    """The package's source directory in the module cache (where its tests expect to run)."""
    out = subprocess.run(
        ["go", "list", "-f", "{{.Dir}}", package],
        cwd=MODULE_DIR,
        env=go_env(),
        check=True,
        capture_output=True,
        text=True,
    )
    return pathlib.Path(out.stdout.strip())


def build(package: str, binary: pathlib.Path) -> None:
    """`go test -c` of the package into `binary`; a build failure raises with Go's message."""
    done = subprocess.run(
        ["go", "test", "-c", "-o", str(binary), package],
        cwd=MODULE_DIR,
        env=go_env(),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"go test -c {package} failed:\n{done.stdout}{done.stderr}")


def command(package: str, binary: pathlib.Path, run: str | None, timeout: str) -> list[str]:
    """The test binary under test2json, verbose (every test's start and end are events)."""
    args = ["go", "tool", "test2json", "-t", "-p", package, str(binary), "-test.v=test2json"]
    args += [f"-test.timeout={timeout}", "-test.count=1"]
    if run:
        args.append(f"-test.run={run}")
    return args


@attrs.frozen
class CaseResult:
    """One top-level test's outcome: pass, fail or skip (`reason`: its skip or failure lines)."""

    name: str
    outcome: str
    seconds: float
    reason: str


@attrs.frozen
class PackageRun:
    """A package's tests against one broker; `ended` is False when the binary died (a timeout, a
    panic) before reporting every test: the tests it had started are then `outcome="unfinished"`."""

    package: str
    results: tuple[CaseResult, ...]
    ended: bool
    tail: str

    def by_name(self) -> dict[str, CaseResult]:
        return {result.name: result for result in self.results}


def _telling(lines: list[str]) -> list[str]:
    """A failed or skipped test's lines that say why (not the suites' clean-up chatter): its first two
    and its last eight, since a long test logs its progress first and its errors last."""
    said = [line for line in lines if not _CLEAN_UP.search(line)]
    return said if len(said) <= 10 else [*said[:2], "...", *said[-8:]]


def parse_events(package: str, lines: Iterable[str]) -> PackageRun:
    """test2json events of one package into its top-level tests' results.

    A test's reason is what it logged at a `file.go:N:` position (t.Skip's and t.Error's lines),
    subtests' included, the last few lines kept; a test that started but never ended (the binary
    timed out or panicked) is "unfinished", the binary's last output lines in the run's `tail`."""
    outcome: dict[str, str] = {}
    seconds: dict[str, float] = {}
    said: dict[str, list[str]] = {}
    order: list[str] = []
    tail: list[str] = []
    ended = False
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            tail.append(line)
            continue
        test = event.get("Test")
        action = event.get("Action")
        if not test:
            if action in ("pass", "fail", "skip"):
                ended = True
            if action == "output":
                tail.append(event.get("Output", ""))
                del tail[:-40]
            continue
        top = test.split("/")[0]
        if action == "run" and top == test:
            order.append(top)
            said[top] = []
        elif action == "output":
            text = event.get("Output", "")
            if _FILE_LINE.match(text):
                said.setdefault(top, []).append(text.strip())
            tail.append(text)
            del tail[:-40]
        elif action in ("pass", "fail", "skip") and top == test:
            outcome[top] = action
            seconds[top] = float(event.get("Elapsed", 0.0))
    last_words = "".join(tail[-15:]).strip()
    results = []
    for name in order:
        result = outcome.get(name)
        lines_said = said.get(name, [])
        if result is None:  # the binary died first (its timeout): running, or paused waiting for a slot
            results.append(CaseResult(name, "unfinished", 0.0, ""))
        else:
            reason = "\n".join(_telling(lines_said)) if result != "pass" else ""
            results.append(CaseResult(name, result, seconds[name], reason))
    return PackageRun(package, tuple(results), ended, last_words)
