"""The layer rules (ADR 1, ADR 8), checked on the source: the domain imports the standard library
(minus I/O, event loops and clocks) and attrs only; an adapter imports the domain and itself, never
another adapter or the app. Imports are resolved, relative ones included, under the `trafka` name."""

from __future__ import annotations

import ast
import pathlib
import sys

import pytest

SRC = pathlib.Path(__file__).parent.parent.parent / "src"
IMPURE = {
    "trio",
    "socket",
    "asyncio",
    "os",
    "pathlib",
    "time",
    "subprocess",
    "shutil",
    "mmap",
    "io",
    "selectors",
    "threading",
    "select",
    "ssl",
    "signal",
    "tempfile",
    "datetime",
    "random",
}  # uuid is allowed: ids are values; new ones come in as functions
MODULES = sorted(p for p in SRC.rglob("*.py") if p.relative_to(SRC).parts[0] in ("domain", "adapters"))


def _imports(path: pathlib.Path) -> list[tuple[int, list[str]]]:
    rel = path.relative_to(SRC).with_suffix("").parts
    package = ["trafka", *rel[:-1]]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module.split(".") if node.module else []
            if node.level:
                base = package[: len(package) - node.level + 1]
                found += (
                    [(node.lineno, base + module)] if module else [(node.lineno, base + [a.name]) for a in node.names]
                )
            else:
                found.append((node.lineno, module))
    return found


def _owner(parts: list[str]) -> str:
    return "/".join(parts[1:3]) if parts[1] == "adapters" else parts[1]


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(SRC)) for p in MODULES])
def test_imports_point_inwards(path):
    here = _owner(["trafka", *path.relative_to(SRC).parts])
    for line, target in _imports(path):
        where = f"{path.relative_to(SRC)}:{line} imports {'.'.join(target)}"
        top = target[0]
        if top in ("domain", "adapters", "app"):
            pytest.fail(f"{where}: import it as trafka.{top}")
        if here == "domain":
            allowed = (
                top == "attrs"
                or top == "__future__"
                or (top in sys.stdlib_module_names and top not in IMPURE)
                or target[:2] == ["trafka", "domain"]
            )
            assert allowed, f"{where}: the domain imports the standard library (no I/O, no clock) and attrs only"
        elif top == "trafka" and len(target) > 1:
            assert target[1] != "app", f"{where}: an adapter never imports the app"
            if target[1] == "adapters" and len(target) > 2:
                assert _owner(target) == here, f"{where}: adapters never import each other"


def test_the_check_sees_every_layer():
    owners = {_owner(["trafka", *p.relative_to(SRC).parts]) for p in MODULES}
    assert {"domain", "adapters/kafka", "adapters/memory", "adapters/filesystem"} <= owners
