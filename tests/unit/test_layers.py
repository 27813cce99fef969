"""The layer rules (ADR 1, ADR 8), checked on the source: the domain imports the standard library
(minus I/O, event loops and clocks) and attrs only; an adapter imports the domain and itself, never
another adapter or the app; the operator commands (`trafka.app.ops`, ADR 15) import nothing of trafka but
themselves; the wheel lists every package; no module imports another's private names. Imports are
resolved, relative ones included, under the `trafka` name."""

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


APP = sorted(p for p in SRC.rglob("*.py") if p.relative_to(SRC).parts[0] == "app")
OPS = [p for p in APP if p.relative_to(SRC).parts[:2] == ("app", "ops")]


@pytest.mark.parametrize("path", OPS, ids=[str(p.relative_to(SRC)) for p in OPS])
def test_the_operator_commands_import_nothing_of_the_broker(path):
    """ADR 15: `trafka.app.ops` is a Kafka client like any other; of trafka it imports only itself and
    Kafka's formats, which the broker shares with it as code without state (ADR 101): the schemas
    (`trafka.kafka_schemas`), the schema and record batch codec (`trafka.schema_codec`), the compression
    codecs (`trafka.adapters.compression`) and Kafka's error names (`trafka.domain.errors`)."""
    shared = (["trafka", "kafka_schemas"], ["trafka", "schema_codec"])
    leaves = (["trafka", "adapters", "compression"], ["trafka", "domain", "errors"], ["trafka", "_version"])
    for line, target in _imports(path):
        if target[0] == "trafka":
            where = f"{path.relative_to(SRC)}:{line} imports {'.'.join(target)}"
            assert (
                target[:3] == ["trafka", "app", "ops"]
                or target[:2] in shared
                or any(target[: len(leaf)] == leaf for leaf in leaves)
            ), f"{where}: the operator commands import nothing of the broker"


def test_the_check_sees_the_operator_commands():
    assert {p.stem for p in OPS} >= {"topic", "group", "produce", "consume", "cluster", "dump_log"}


def test_the_wheel_lists_every_package_under_src():
    """`[tool.setuptools] packages` names each folder of src/ that holds an `__init__.py`, and no other."""
    import tomllib

    listed = tomllib.loads((SRC.parent / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    found = {".".join(["trafka", *init.parent.relative_to(SRC).parts]) for init in SRC.rglob("__init__.py")}
    assert sorted(listed) == sorted(found)
    # a folder of modules without an `__init__.py` is a namespace package the wheel leaves out silently
    folders = {module.parent for module in SRC.rglob("*.py")}
    assert [str(f.relative_to(SRC)) for f in sorted(folders) if not (f / "__init__.py").exists()] == []


def _module(path: pathlib.Path) -> list[str]:
    rel = path.relative_to(SRC).with_suffix("").parts
    return ["trafka", *(rel[:-1] if rel[-1] == "__init__" else rel)]


def _private_imports(path: pathlib.Path) -> list[str]:
    """`from X import _name` where X is a trafka module other than the importing one."""
    package = ["trafka", *path.relative_to(SRC).parts[:-1]]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        module = node.module.split(".") if node.module else []
        target = package[: len(package) - node.level + 1] + module if node.level else module
        if target[:1] != ["trafka"] or target == _module(path):
            continue
        private = [a.name for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
        found += [f"{path.relative_to(SRC)}:{node.lineno} imports {name} from {'.'.join(target)}" for name in private]
    return found


ALL_MODULES = sorted(SRC.rglob("*.py"))


@pytest.mark.parametrize("path", ALL_MODULES, ids=[str(p.relative_to(SRC)) for p in ALL_MODULES])
def test_no_module_imports_another_modules_private_names(path):
    assert _private_imports(path) == []


def test_the_private_name_check_sees_relative_and_absolute_imports(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path)
    (tmp_path / "app").mkdir()
    module = tmp_path / "app" / "x.py"
    module.write_text("from .y import _a, b\nfrom trafka.app.z import _c\nfrom . import _d\nfrom .x import _own\n")
    assert _private_imports(module) == [
        "app/x.py:1 imports _a from trafka.app.y",
        "app/x.py:2 imports _c from trafka.app.z",
        "app/x.py:3 imports _d from trafka.app",
    ]


# -- one room per API (ADR 30, issue 40): nothing outside `adapters/kafka/apis/` names an API ---------
KAFKA = SRC / "adapters" / "kafka"
NAMING_AN_API_ALLOWED = {
    # The SASL exchange runs before any room, on the connection (SaslHandshake, SaslAuthenticate, and
    # ApiVersions, which Kafka serves mid-exchange): a step of the connection, not a room's handler.
    "security/authentication.py",
    # The rooms' measured codecs (ADRs 9, 31): they build kafka-python's own response for a fast-path
    # answer that must become one (`as_kafka_python`), for the layers that change answers.
    "wire/fast_produce_answer.py",
    "wire/fast_fetch.py",
    "wire/fast_fetch_request.py",  # the request's fast decoder builds the schema codec's objects (ADR 116)
    # The GROUP config resource's store takes IncrementalAlterConfigs' resource shape, to share the
    # config rooms' code for what it replays from the metadata log.
    "runtime/group_configs.py",
}
OUTSIDE_THE_ROOMS = sorted(
    p
    for p in KAFKA.rglob("*.py")
    if p.relative_to(KAFKA).parts[0] != "apis" and p.relative_to(KAFKA).parts[:2] != ("wire", "messages")
)


def _api_names() -> tuple[set[str], set[str]]:
    from trafka.adapters.kafka.apis import build_registry

    apis = build_registry(telemetry=True).apis()
    return {a.name for a in apis}, {a.request.__name__ for a in apis} | {a.response.__name__ for a in apis}


def _named_apis(path: pathlib.Path, names: set[str], classes: set[str]) -> set[str]:
    """The APIs a module names: an API's name as a string, or its request or response class."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
            found.add(repr(node.value))
        elif isinstance(node, ast.Name) and node.id in classes:
            found.add(node.id)
        elif isinstance(node, ast.alias) and node.name in classes:
            found.add(node.name)
        elif isinstance(node, ast.Attribute) and node.attr in classes:
            found.add(node.attr)
    return found


@pytest.mark.parametrize("path", OUTSIDE_THE_ROOMS, ids=[str(p.relative_to(KAFKA)) for p in OUTSIDE_THE_ROOMS])
def test_no_api_is_named_outside_its_room(path):
    """Everything about an API is declared in its room (`KafkaApi`: cluster checks, quota, fast decoder,
    lane, refusal...); the layers and the server read the declarations and name no API."""
    if str(path.relative_to(KAFKA)) in NAMING_AN_API_ALLOWED:
        return
    names, classes = _api_names()
    assert _named_apis(path, names, classes) == set(), f"{path.relative_to(SRC)} names an API outside apis/"


def test_the_room_check_sees_a_named_api(tmp_path):
    names, classes = _api_names()
    module = tmp_path / "m.py"
    module.write_text('from kafka.protocol.producer import ProduceRequest\nif api.name == "Fetch":\n    pass\n')
    assert _named_apis(module, names, classes) == {"ProduceRequest", "'Fetch'"}
    assert all((KAFKA / allowed).exists() for allowed in NAMING_AN_API_ALLOWED)


# -- rooms wait through the purgatory (ADR 80, issue 40): a room imports no event loop ----------------

ROOMS = sorted((SRC / "adapters" / "kafka" / "apis").glob("*.py"))


def _event_loops(path: pathlib.Path) -> list[str]:
    return [
        f"{path.relative_to(SRC)}:{line} imports {'.'.join(target)}"
        for line, target in _imports(path)
        if target[0] in ("trio", "asyncio", "anyio", "outcome")
    ]


@pytest.mark.parametrize("path", ROOMS, ids=[p.name for p in ROOMS])
def test_a_room_imports_no_event_loop(path):
    """A request that must wait returns `Parked` (or a `Deferred` for off-loop work) and the purgatory
    and the connection do the waiting: hypercorn's `protocol/` never imports its event loop either."""
    assert _event_loops(path) == []


def test_the_connection_core_imports_no_event_loop_and_no_socket():
    """The connection's rules are a sans-I/O core (issue 40, item 5; h11's `Connection`): the Trio loop
    around it (`server.py`) does every wait and every read and write."""
    core = SRC / "adapters" / "kafka" / "connection" / "core.py"
    assert _event_loops(core) == []
    assert [target for _, target in _imports(core) if target[0] in ("socket", "ssl", "select", "time")] == []


def test_the_event_loop_check_sees_a_function_level_import(tmp_path, monkeypatch):
    module = tmp_path / "adapters" / "kafka" / "apis" / "room.py"
    module.parent.mkdir(parents=True)
    module.write_text("def handle():\n    import trio\n    from trio import sleep\n")
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path)
    assert len(_event_loops(module)) == 2
    assert len(ROOMS) > 50


# -- handlers name what they use (ADR 103, issue 40): a room cannot reach the whole context ----------

WHOLE_CONTEXT = (["trafka", "adapters", "kafka", "context"], ["trafka", "adapters", "kafka", "services"])


def _whole_context_imports(path: pathlib.Path) -> list[str]:
    return [
        f"{path.relative_to(SRC)}:{line} imports {'.'.join(target)}"
        for line, target in _imports(path)
        if any(target[: len(whole)] == whole for whole in WHOLE_CONTEXT)
    ]


@pytest.mark.parametrize("path", ROOMS, ids=[p.name for p in ROOMS])
def test_a_room_imports_neither_the_context_nor_the_services(path):
    """A room names the services it uses in its `Uses` class and is given those; it imports neither the
    broker's `BrokerContext` nor its `BrokerServices`, even for a type (cosmicpython's handlers receive
    their dependencies; Tansu narrows the state per route)."""
    assert _whole_context_imports(path) == []


def test_the_context_check_sees_a_type_only_import(tmp_path, monkeypatch):
    module = tmp_path / "adapters" / "kafka" / "apis" / "room.py"
    module.parent.mkdir(parents=True)
    module.write_text("if TYPE_CHECKING:\n    from ..context import BrokerContext\nfrom .. import services\n")
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path)
    assert len(_whole_context_imports(module)) == 2


def test_every_room_declares_the_services_it_uses():
    """Every served API's handler declares a `Uses` class naming only broker services (or the three bits
    of plumbing a room may use), and is given a view holding those and nothing more."""
    import attrs

    from trafka.adapters.kafka.api import declared_uses
    from trafka.adapters.kafka.apis import build_registry
    from trafka.adapters.kafka.context import ROOM_PLUMBING
    from trafka.adapters.kafka.services import BrokerServices
    from trafka.app.config.settings import load_settings
    from trafka.app.wiring.bootstrap import bootstrap, default_adapters

    built_on_first_use = {name for name, value in vars(BrokerServices).items() if isinstance(value, property)}
    services = {f.name for f in attrs.fields(BrokerServices)} | built_on_first_use | ROOM_PLUMBING  # ADR 118
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    ctx = bootstrap(settings, default_adapters(settings))
    for api in build_registry(telemetry=True).apis():
        uses = api.handle.uses  # what `committing` found on the room's handler
        assert uses is not None, f"{api.name}'s handler declares no Uses class"
        assert uses is declared_uses(api.handle.__wrapped__.__wrapped__)
        declared = {f.name for f in attrs.fields(uses)}
        assert declared <= services, f"{api.name} declares {declared - services}, not a broker service"
        view = api.uses(ctx)
        assert type(view) is uses and not hasattr(view, "services") and not hasattr(view, "faults")
        if api.lane is not None:
            assert api.lane.answer.uses is not None, f"{api.name}'s lane declares no Uses class"


# The shared leaves (issue 40, item 7; ADR 112): what the broker and the operator commands both use is
# code without state that imports nothing of the broker: the schema codec imports Kafka's schemas, itself
# and two leaves of the domain (Kafka's errors and the record batch header), which import nothing more.
SHARED_LEAVES = (["trafka", "domain", "errors"], ["trafka", "domain", "batch_header"])
SCHEMA_CODEC = sorted((SRC / "schema_codec").rglob("*.py"))


@pytest.mark.parametrize("path", SCHEMA_CODEC, ids=[str(p.relative_to(SRC)) for p in SCHEMA_CODEC])
def test_the_schema_codec_imports_nothing_of_the_broker_but_the_shared_leaves(path):
    for line, target in _imports(path):
        if target[0] == "trafka":
            assert (
                target[:2] in (["trafka", "schema_codec"], ["trafka", "kafka_schemas"]) or target[:3] in SHARED_LEAVES
            ), (
                f"{path.relative_to(SRC)}:{line} imports {'.'.join(target)}: the codec is a leaf the operator commands share"
            )


@pytest.mark.parametrize("leaf", SHARED_LEAVES, ids=["/".join(leaf[1:]) for leaf in SHARED_LEAVES])
def test_the_shared_leaves_of_the_domain_import_only_each_other(leaf):
    path = SRC.joinpath(*leaf[1:]).with_suffix(".py")
    for line, target in _imports(path):
        if target[0] == "trafka":
            assert target[:3] in SHARED_LEAVES, f"{path.relative_to(SRC)}:{line} imports {'.'.join(target)}"


def test_the_leaf_check_sees_the_codec_and_the_header():
    assert {p.name for p in SCHEMA_CODEC} >= {"records.py", "messages.py", "internal_records.py"}
    assert any(
        target[:3] == ["trafka", "domain", "batch_header"]
        for _, target in _imports(SRC / "schema_codec" / "records.py")
    )


# -- only rooms in `apis/` (ADR 110, issue 40 item 8): what rooms share lives in `apis/common/` ----------


@pytest.mark.parametrize("path", ROOMS, ids=[p.name for p in ROOMS])
def test_every_module_in_apis_is_a_room(path):
    """The lazy rooms' table is derived from the modules in `apis/` (`apis.declared_rooms`): each is one
    API's room (or a tight family's) and declares `API` or `APIS`; a helper goes in `apis/common/`."""
    if path.name == "__init__.py":
        return
    declared = {
        target.id
        for node in ast.parse(path.read_text()).body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }
    assert declared & {"API", "APIS"}, f"{path.relative_to(SRC)} declares no API: a helper goes in apis/common/"


# -- folders that say what they hold (issue 40, item 8): few loose modules in `adapters/kafka` ----------
LOOSE_MODULES_LIMIT = 8


def test_adapters_kafka_keeps_at_most_eight_loose_modules():
    """The re-layout's rule: the Kafka adapter's top level holds the API and its registry, the contexts
    and a few leaves; the rest lives in folders named for what they hold (`apis/`, `connection/`,
    `wire/`, `security/`, `runtime/`)."""
    loose = sorted(p.name for p in (SRC / "adapters" / "kafka").glob("*.py") if p.name != "__init__.py")
    assert 0 < len(loose) <= LOOSE_MODULES_LIMIT, f"{len(loose)} loose modules in adapters/kafka: {loose}"
