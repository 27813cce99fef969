"""No import cycles among the modules of the domain, the adapters and the app.

Three graphs are checked. The runtime one: module-level imports only, as they run when a module is
loaded (those inside functions run later, and those under `if TYPE_CHECKING:` never run). The type
one (issue 40): the same with `if TYPE_CHECKING:` imports counted, since a circle of types is a
circle of ideas even when Python never runs it. The whole one (issue 40): every import anywhere in a
module, inside functions too (a lazy import is still a dependency), over all of `src` with the
`trafka` package and its top-level modules, as the project's before-stop review counts them. `from package import name` depends on the submodule when
`name` is one and on the package otherwise; a module's own parent packages are not counted (Python
loads them first, and a package's `__init__` importing its submodules is no cycle)."""

from __future__ import annotations

import ast
import pathlib

SRC = pathlib.Path(__file__).parent.parent.parent / "src"
CHECKED = ("domain", "adapters")


def _module_name(src: pathlib.Path, path: pathlib.Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["trafka", *parts])


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level_imports(statements: list[ast.stmt], type_only: bool = False) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []
    for node in statements:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If):
            if type_only or not _is_type_checking(node.test):
                found += _module_level_imports(node.body, type_only)
            found += _module_level_imports(node.orelse, type_only)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                found += _module_level_imports(block, type_only)
        elif isinstance(node, ast.With):
            found += _module_level_imports(node.body, type_only)
    return found


def _every_import(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]


def import_graph(
    src: pathlib.Path, top: tuple[str, ...] | None = CHECKED, type_only: bool = False, everywhere: bool = False
) -> dict[str, set[str]]:
    """Each module under src/<top> -> the modules under src/<top> it imports at module level (with
    `type_only`, those under `if TYPE_CHECKING:` too; with `everywhere`, every import in it). `top`
    None: every module under `src`, the package itself included."""
    files = src.rglob("*.py") if top is None else (p for folder in top for p in (src / folder).rglob("*.py"))
    paths = {_module_name(src, p): p for p in files}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        targets: set[str] = set()
        tree = ast.parse(path.read_text())
        for node in _every_import(tree) if everywhere else _module_level_imports(tree.body, type_only):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
                continue
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + (node.module.split(".") if node.module else []))
            else:
                module = node.module or ""
            names = [f"{module}.{alias.name}" for alias in node.names]
            targets.update(n for n in names if n in paths)
            if any(n not in paths for n in names):
                targets.add(module)
        graph[name] = {t for t in targets if t in paths and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles_in_the_domain_and_the_adapters():
    graph = import_graph(SRC)
    assert any(name.startswith("trafka.domain.") for name in graph)
    assert any(name.startswith("trafka.adapters.") for name in graph)
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(
        f"  {' <-> '.join(c)}: " + "; ".join(f"{a} -> {b}" for a in c for b in sorted(graph[a] & set(c))) for c in found
    )


def test_no_import_cycles_anywhere_with_type_only_imports_counted():
    graph = import_graph(SRC, ("domain", "adapters", "app"), type_only=True)
    assert any(name.startswith("trafka.app.") for name in graph)
    found = cycles(graph)
    assert not found, "import cycles (type-only imports counted):\n" + "\n".join(
        f"  {' <-> '.join(c)}: " + "; ".join(f"{a} -> {b}" for a in c for b in sorted(graph[a] & set(c))) for c in found
    )


def test_no_import_cycles_anywhere_with_every_import_counted():
    """Function-level (lazy) imports and the `trafka` package's own modules counted: the embedded broker
    reaching `trafka.testing` through the wiring, or two cleaner modules importing each other lazily,
    are circles too."""
    graph = import_graph(SRC, None, everywhere=True)
    assert "trafka" in graph and "trafka.testing" in graph
    found = cycles(graph)
    assert not found, "import cycles (every import counted):\n" + "\n".join(
        f"  {' <-> '.join(c)}: " + "; ".join(f"{a} -> {b}" for a in c for b in sorted(graph[a] & set(c))) for c in found
    )


def test_the_check_finds_a_cycle_and_skips_type_checking_and_function_imports(tmp_path):
    package = tmp_path / "domain"
    package.mkdir()
    (package / "__init__.py").write_text("from .a import A\n")
    (package / "a.py").write_text("from .b import B\nA = 1\n")
    (package / "b.py").write_text("from . import c\nB = 2\n")
    (package / "c.py").write_text("from .a import A\n")
    (package / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .e import E\ndef f():\n    from .e import E\n"
    )
    (package / "e.py").write_text("from .d import f\nE = 3\n")
    graph = import_graph(tmp_path, ("domain",))
    assert graph["trafka.domain.b"] == {"trafka.domain.c"}  # `from . import c` is the submodule only
    assert graph["trafka.domain.d"] == set()
    assert cycles(graph) == [["trafka.domain.a", "trafka.domain.b", "trafka.domain.c"]]
    typed = import_graph(tmp_path, ("domain",), type_only=True)
    assert typed["trafka.domain.d"] == {"trafka.domain.e"}  # counted: d -> e -> d is a circle of types
    assert ["trafka.domain.d", "trafka.domain.e"] in cycles(typed)
    (package / "f.py").write_text("def lazy():\n    from .g import G\n")
    (package / "g.py").write_text("from .f import lazy\nG = 4\n")
    (tmp_path / "__init__.py").write_text("def __getattr__(name):\n    from .domain import a\n")
    whole = import_graph(tmp_path, None, everywhere=True)
    assert whole["trafka.domain.f"] == {"trafka.domain.g"}  # a function-level import counted
    assert whole["trafka"] == {"trafka.domain.a"}  # the package itself is a module of the graph
    assert ["trafka.domain.f", "trafka.domain.g"] in cycles(whole)
