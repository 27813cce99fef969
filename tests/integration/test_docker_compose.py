"""docker-compose.yml and the Dockerfile against the current CLI, without a Docker engine.

Every service's command is parsed by `trafka.app.cli.main.build_parser()` (compose's `${VAR:-default}` replaced
by its default); `serve` commands are also loaded through `trafka.app.config.settings`, so a flag or value the broker
would refuse fails here. The Dockerfile's CMD is checked the same way, and its HEALTHCHECK is run
against a real broker. Compose and Dockerfile must agree on the port, the data directory and volumes.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from trafka.app.cli.main import _overrides, build_parser
from trafka.app.config.settings import Settings, config_path, load_settings
from trafka.app.wiring.bootstrap import listeners_from
from trafka.domain.listeners import Listener

from .broker import BrokerProcess
from .wire import WireClient

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}")


# --- A minimal YAML reader: block mappings and sequences, flow sequences, (quoted) scalars. ---------
# PyYAML is not a test dependency; when it is importable, the two readers must agree.


def _scalar(text: str) -> Any:
    text = text.strip()
    if text == "" or text in ("~", "null"):
        return None
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return [] if not inner else [_scalar(item) for item in _split_flow(inner)]
    if text[0] == '"':
        return json.loads(text)
    if text[0] == "'":
        return text[1:-1].replace("''", "'")
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return text


def _split_flow(text: str) -> list[str]:
    items, current, quote = [], "", None
    for char in text:
        if quote:
            current += char
            if char == quote:
                quote = None
        elif char in "\"'":
            quote = char
            current += char
        elif char == ",":
            items.append(current)
            current = ""
        else:
            current += char
    items.append(current)
    return [item.strip() for item in items]


def _strip_comment(line: str) -> str:
    quote = None
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()


def _split_key(text: str) -> tuple[str, str] | None:
    match = re.match(r"""^("[^"]*"|'[^']*'|[^\s:"'][^:]*?)\s*:(?:\s+(.*))?$""", text)
    if not match:
        return None
    return str(_scalar(match.group(1))), match.group(2) or ""


def mini_yaml(source: str) -> Any:
    lines = [
        (len(line) - len(line.lstrip(" ")), line.strip())
        for line in (_strip_comment(raw) for raw in source.splitlines())
        if line.strip()
    ]
    value, end = _block(lines, 0, lines[0][0])
    assert end == len(lines), f"unparsed YAML from line: {lines[end][1]!r}"
    return value


def _block(lines: list[tuple[int, str]], i: int, indent: int) -> tuple[Any, int]:
    if lines[i][1].startswith("- ") or lines[i][1] == "-":
        items: list[Any] = []
        while i < len(lines) and lines[i][0] == indent and (lines[i][1].startswith("- ") or lines[i][1] == "-"):
            rest = lines[i][1][1:].strip()
            assert rest and _split_key(rest) is None, f"only scalar sequence items are supported: {lines[i][1]!r}"
            items.append(_scalar(rest))
            i += 1
        return items, i
    mapping: dict[str, Any] = {}
    while i < len(lines) and lines[i][0] == indent:
        pair = _split_key(lines[i][1])
        assert pair is not None, f"not a mapping entry: {lines[i][1]!r}"
        key, rest = pair
        i += 1
        if rest:
            mapping[key] = _scalar(rest)
        elif i < len(lines) and lines[i][0] > indent:
            mapping[key], i = _block(lines, i, lines[i][0])
        elif i < len(lines) and lines[i][0] == indent and lines[i][1].startswith("- "):
            mapping[key], i = _block(lines, i, indent)  # a sequence may sit at its key's indent
        else:
            mapping[key] = None
    return mapping, i


def load_compose() -> dict[str, Any]:
    source = COMPOSE.read_text()
    parsed = mini_yaml(source)
    try:
        import yaml
    except ImportError:
        return parsed
    assert yaml.safe_load(source) == parsed, "the minimal YAML reader disagrees with PyYAML"
    return parsed


# --- Compose semantics: variable defaults, commands, volumes, ports. ------------------------------


def substitute(value: Any) -> Any:
    """Compose's interpolation with an empty environment: `${VAR:-default}` becomes its default."""
    if isinstance(value, list):
        return [substitute(v) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v) for k, v in value.items()}
    if not isinstance(value, str):
        return value

    def default(match: re.Match[str]) -> str:
        assert match.group(2) is not None, f"${{{match.group(1)}}} has no default: {value!r}"
        return match.group(2)

    return _VARIABLE.sub(default, value.replace("$$", "\0")).replace("\0", "$")


def argv(command: Any) -> list[str]:
    command = substitute(command)
    return [str(part) for part in command] if isinstance(command, list) else shlex.split(command)


def parse_trafka(command: list[str], where: str) -> argparse.Namespace:
    assert command and command[0] == "trafka", f"{where}: not a trafka command: {command}"
    try:
        return build_parser().parse_args(command[1:])
    except SystemExit as exit_:
        if exit_.code == 0 and "--help" in command:
            return argparse.Namespace(command=command[1], help=True)
        raise AssertionError(f"{where}: `{shlex.join(command)}` is not a valid trafka command line") from None


def serve_settings(args: argparse.Namespace, environment: dict[str, str], where: str) -> Settings:
    try:
        return load_settings(config_path(args), environment, _overrides(args))
    except Exception as exc:  # ConfigError, or anything else the broker would stop on
        raise AssertionError(f"{where}: the broker would refuse its configuration: {exc}") from exc


def environment_of(service: dict[str, Any]) -> dict[str, str]:
    env = substitute(service.get("environment") or {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {str(k): "" if v is None else str(v) for k, v in env.items()}


def mounts(service: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(source, target, read_only) of each short-syntax volume."""
    out = []
    for entry in substitute(service.get("volumes") or []):
        parts = str(entry).split(":")
        assert len(parts) in (2, 3), f"volume {entry!r}: expected SOURCE:TARGET[:MODE]"
        mode = parts[2] if len(parts) == 3 else "rw"
        out.append((parts[0], parts[1], "ro" in mode.split(",")))
    return out


def is_named_volume(source: str) -> bool:
    return not source.startswith((".", "/", "~"))


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load_compose()


@pytest.fixture(scope="module")
def services(compose) -> dict[str, dict[str, Any]]:
    assert isinstance(compose.get("services"), dict) and compose["services"]
    return compose["services"]


def test_the_minimal_yaml_reader_reads_the_shapes_compose_uses() -> None:
    text = """
a:
  b: "x: y"   # a comment
  c: ['p', "q"]
  d:
    - one
    - "${V:-9092}:9092"
  e:
  f: 3
list:
- k
"""
    assert mini_yaml(text) == {
        "a": {"b": "x: y", "c": ["p", "q"], "d": ["one", "${V:-9092}:9092"], "e": None, "f": 3},
        "list": ["k"],
    }


def test_every_service_runs_a_valid_trafka_command(services) -> None:
    assert set(services) >= {"broker", "spark-export"}
    for name, service in services.items():
        command = argv(service["command"])
        args = parse_trafka(command, f"service {name}")
        if args.command == "serve":
            settings = serve_settings(args, environment_of(service), f"service {name}")
            assert settings.storage.kind == "filesystem", f"service {name}: a broker in a container keeps its data"


def _broker_listeners(services) -> dict[str, Listener]:
    broker = services["broker"]
    settings = serve_settings(parse_trafka(argv(broker["command"]), "broker"), environment_of(broker), "broker")
    return {listener.name: listener for listener in listeners_from(settings)}


def test_the_broker_has_a_listener_for_the_host_and_one_for_the_compose_network(services) -> None:
    broker = services["broker"]
    assert "profiles" not in broker, "the broker starts with a plain `docker compose up`"
    raw = " ".join(f"{k}={v}" for k, v in broker["environment"].items())
    assert "${TRAFKA_ADVERTISED_HOST:-localhost}" in raw
    assert "${TRAFKA_ADVERTISED_PORT:-9092}" in raw
    listeners = _broker_listeners(services)
    assert set(listeners) == {"PLAINTEXT", "INTERNAL"}
    for listener in listeners.values():
        assert listener.host == "0.0.0.0", f"{listener.name} listens on every interface of the container"
    settings = serve_settings(parse_trafka(argv(broker["command"]), "broker"), environment_of(broker), "broker")
    assert settings.storage.data_dir == "/var/lib/trafka"


def test_the_host_s_view_gets_a_published_address(services) -> None:
    """A client on the host bootstraps from localhost:9092 and is told an address the host can reach:
    the advertised port is published and maps onto that listener's port in the container."""
    host_view = _broker_listeners(services)["PLAINTEXT"]
    assert (host_view.advertised_host, host_view.advertised_port) == ("localhost", 9092)
    raw_ports = [str(p) for p in services["broker"]["ports"]]
    assert raw_ports == ["${TRAFKA_ADVERTISED_PORT:-9092}:9092", "127.0.0.1:8080:8080"]
    kafka_port = str(substitute(services["broker"]["ports"])[0])
    assert dict([kafka_port.rsplit(":", 1)]) == {str(host_view.advertised_port): str(host_view.port)}


def test_the_console_is_published_on_the_host_s_loopback_only(services) -> None:
    """The console has no login yet: it listens on every interface in the container, but the host
    publishes it on its loopback only."""
    broker = services["broker"]
    settings = serve_settings(parse_trafka(argv(broker["command"]), "broker"), environment_of(broker), "broker")
    assert settings.http.host == "0.0.0.0" and settings.http.port == 8080
    assert str(broker["ports"][1]) == "127.0.0.1:8080:8080"


def test_a_client_container_s_view_gets_an_address_on_the_compose_network(services) -> None:
    """A client in a container bootstraps from broker:29092 and is told broker:29092: the broker's
    service name on the shared network and the INTERNAL listener's own port (no publishing needed)."""
    network_view = _broker_listeners(services)["INTERNAL"]
    assert network_view.advertised_host in {"broker", services["broker"].get("hostname")}
    assert network_view.advertised_port == network_view.port == 29092
    client = services["client"]
    args = parse_trafka(argv(client["command"]), "client")
    assert (args.host, args.port) == (network_view.advertised_host, network_view.advertised_port)
    assert client.get("networks") == services["broker"].get("networks"), "client and broker share a network"


def test_each_view_is_answered_with_its_own_address_by_a_running_broker(services, tmp_path) -> None:
    """The compose listeners on a real broker (ports made ephemeral, names kept): a client coming in on
    each listener is told that listener's advertised address, never the other's."""
    environment = environment_of(services["broker"])
    environment["TRAFKA_SERVER_LISTENERS"] = "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0"
    ready = tmp_path / "ready.json"
    broker = BrokerProcess(["--memory", "--ready-file", str(ready)], env=environment).start()
    try:
        bound = json.loads(ready.read_text())["listeners"]
        expected = {
            name: f"{lst.advertised_host}:{lst.advertised_port}" for name, lst in _broker_listeners(services).items()
        }
        for name, listener in bound.items():
            with WireClient(f"127.0.0.1:{listener['port']}") as client:
                metadata = client.request(MetadataRequest[1](topics=[]), MetadataResponse, 1)
            assert [f"{b.host}:{b.port}" for b in metadata.brokers] == [expected[name]]
    finally:
        assert broker.stop() == 0, broker.log()


def test_named_volumes_are_declared_and_the_data_volume_is_shared_read_only(compose, services) -> None:
    declared = set((compose.get("volumes") or {}).keys())
    for name, service in services.items():
        for source, _, _ in mounts(service):
            if is_named_volume(source):
                assert source in declared, f"service {name} mounts volume {source!r}, not declared at top level"

    broker = services["broker"]
    broker_args = parse_trafka(argv(broker["command"]), "broker")
    data_dir = serve_settings(broker_args, environment_of(broker), "broker").storage.data_dir
    [(data_volume, _, broker_ro)] = [(s, t, ro) for s, t, ro in mounts(broker) if t == data_dir]
    assert is_named_volume(data_volume) and not broker_ro

    export = services["spark-export"]
    assert export.get("profiles") == ["spark"]
    export_args = parse_trafka(argv(export["command"]), "spark-export")
    assert export_args.command == "export"
    [(source, read_only)] = [(s, ro) for s, t, ro in mounts(export) if t == export_args.data_dir]
    assert source == data_volume, "spark-export reads the broker's data volume"
    assert read_only, "spark-export mounts the broker's data read-only"
    outputs = [t for _, t, ro in mounts(export) if not ro and export_args.output.startswith(t.rstrip("/") + "/")]
    assert outputs, f"the export's output {export_args.output} is on a writable volume"


def test_the_export_service_uses_the_export_cli_shape(services) -> None:
    command = argv(services["spark-export"]["command"])
    assert command == [
        "trafka",
        "export",
        "--topic",
        "events",
        "--data-dir",
        "/var/lib/trafka",
        "--output",
        "/exports/events",
        "--format",
        "parquet",
    ]
    raw = [str(part) for part in services["spark-export"]["command"]]
    assert "${TOPIC:-events}" in raw and "/exports/${TOPIC:-events}" in raw
    assert "export" in _subcommands(), "`trafka export` does not exist in trafka.app.cli.main yet"


def _subcommands() -> set[str]:
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


# --- The Dockerfile. -------------------------------------------------------------------------------


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for line in DOCKERFILE.read_text().splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        full = (pending + stripped).strip()
        pending = ""
        keyword, _, rest = full.partition(" ")
        instructions.append((keyword.upper(), rest.strip()))
    assert not pending, "the Dockerfile ends in a line continuation"
    return instructions


def stages() -> dict[str, list[tuple[str, str]]]:
    """Instructions per stage, by stage name; the last stage (the default build) also as ''."""
    out: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] = []
    for keyword, rest in dockerfile():
        if keyword == "FROM":
            current = []
            parts = rest.split()
            name = parts[2] if len(parts) >= 3 and parts[1].upper() == "AS" else str(len(out))
            out[name] = current
        current.append((keyword, rest))
    out[""] = current
    return out


def exec_form(text: str, where: str) -> list[str]:
    assert text.startswith("["), f"{where} should use the exec form (JSON array): {text}"
    value = json.loads(text)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value)
    return value


def last(stage: list[tuple[str, str]], keyword: str) -> str | None:
    found = [rest for k, rest in stage if k == keyword]
    return found[-1] if found else None


def image_environment() -> dict[str, str]:
    """The ENV of the broker image (its stage and the base), as a container starts with it."""
    env: dict[str, str] = {}
    for name in ("base", "broker"):
        for keyword, rest in stages()[name]:
            if keyword == "ENV":
                env.update(dict(shlex.split(pair)[0].split("=", 1) for pair in shlex.split(rest)))
    return env


def broker_cmd_settings(service_environment: dict[str, str] | None = None) -> Settings:
    """The settings `docker run` of the image gives, with a compose service's `environment` on top."""
    cmd = exec_form(last(stages()[""], "CMD") or "", "CMD")
    args = parse_trafka(cmd, "Dockerfile CMD")
    assert args.command == "serve"
    return serve_settings(args, {**image_environment(), **(service_environment or {})}, "Dockerfile CMD")


def healthcheck() -> list[str]:
    text = last(stages()[""], "HEALTHCHECK")
    assert text, "the broker image has a HEALTHCHECK"
    options, _, command = text.partition("CMD")
    assert all(opt.startswith("--") for opt in options.split()), options
    return exec_form(command.strip(), "HEALTHCHECK CMD")


def test_the_image_is_python_3_11_slim_and_runs_as_a_non_root_user() -> None:
    instructions = dockerfile()
    assert instructions[0] == ("FROM", "python:3.11-slim AS base")
    for name, stage in stages().items():
        if name in ("", "base"):
            continue
        user = last(stage, "USER")
        assert user and user.split(":")[0] not in ("root", "0"), f"stage {name} runs as root"
    # The image serves what compose publishes (the console on 8080, the registry on it): every extra.
    assert any(k == "RUN" and 'pip install "/tmp/trafka-src[all]"' in rest for k, rest in stages()["broker"])


def test_the_default_image_is_the_broker_and_compose_targets_real_stages(services) -> None:
    names = stages()
    assert names[""] is names["broker"], "`docker build .` builds the broker"
    for name, service in services.items():
        target = (service.get("build") or {}).get("target")
        assert target in names, f"service {name} builds target {target!r}, not a stage of the Dockerfile"
    assert services["broker"]["build"]["target"] == "broker"
    assert services["spark-export"]["build"]["target"] == "spark"


def test_dockerfile_cmds_are_valid_trafka_commands() -> None:
    for name, stage in stages().items():
        cmd = last(stage, "CMD")
        if cmd is not None and name != "":
            parse_trafka(exec_form(cmd, f"stage {name} CMD"), f"stage {name} CMD")
    settings = broker_cmd_settings()
    assert settings.server.host == "0.0.0.0"
    assert settings.storage.data_dir == "/var/lib/trafka"


def test_the_dockerfile_exposes_the_port_compose_maps_and_declares_the_data_volume(services) -> None:
    broker = stages()[""]
    exposed = {p.split("/")[0] for k, rest in broker if k == "EXPOSE" for p in rest.split()}
    settings = broker_cmd_settings()
    assert str(settings.server.port) in exposed
    assert {str(listener.port) for listener in _broker_listeners(services).values()} <= exposed
    published = {str(p).rsplit(":", 1)[1] for p in substitute(services["broker"]["ports"])}
    assert published <= exposed, f"compose maps {published}, the image exposes {exposed}"
    volumes = {
        v for k, rest in broker if k == "VOLUME" for v in (json.loads(rest) if rest.startswith("[") else rest.split())
    }
    assert settings.storage.data_dir in volumes
    compose_dir = serve_settings(
        parse_trafka(argv(services["broker"]["command"]), "broker"), environment_of(services["broker"]), "broker"
    ).storage.data_dir
    assert compose_dir in volumes


def _healthcheck_against(port: int) -> subprocess.CompletedProcess[str]:
    command = healthcheck()
    settings = broker_cmd_settings()
    if command[0] == "trafka":  # a future `trafka check`: run it with the port pointed at the test broker
        args = parse_trafka(command, "HEALTHCHECK")
        run = [sys.executable, "-m", "trafka", *command[1:], "--port", str(port)]
        assert args.command != "serve"
    else:
        assert command[:2] == ["python", "-c"], command
        code = command[2]
        ast.parse(code)
        assert f"{settings.server.port}" in code, "the health check asks the port the broker listens on"
        run = [sys.executable, "-c", code.replace(str(settings.server.port), str(port))]
    return subprocess.run(run, capture_output=True, text=True, timeout=20)


def test_the_healthcheck_speaks_the_protocol_to_a_live_broker(broker) -> None:
    healthy = _healthcheck_against(broker.port)
    assert healthy.returncode == 0, healthy.stderr


def test_the_healthcheck_fails_when_nothing_listens() -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free_port = probe.getsockname()[1]
    unhealthy = _healthcheck_against(free_port)
    assert unhealthy.returncode != 0


def test_extras_the_image_installs_exist() -> None:
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get("optional-dependencies", {})
    wanted = {
        extra.strip()
        for k, rest in dockerfile()
        if k == "RUN"
        for match in re.finditer(r"/tmp/trafka-src\[([^\]]+)\]", rest)
        for extra in match.group(1).split(",")
    }
    assert wanted == {"spark", "all"}, wanted
    missing = wanted - set(extras)
    assert not missing, f"the Dockerfile installs extras pyproject.toml does not declare: {sorted(missing)}"


def test_dockerignore_keeps_what_the_image_copies() -> None:
    rules = [
        line.strip() for line in DOCKERIGNORE.read_text().splitlines() if line.strip() and not line.startswith("#")
    ]
    assert rules[0] == "*", "an allow-list: everything else (.venv, .git, node_modules, data) stays out"
    for needed in ("!pyproject.toml", "!README.md", "!src/"):
        assert needed in rules
    copied = [rest.split()[:-1] for k, rest in dockerfile() if k == "COPY"]
    assert sorted(p for paths in copied for p in paths) == ["README.md", "pyproject.toml", "src"]


# Kafka's docker quickstart: the apache/kafka image's documented single-broker service (KRaft, one
# PLAINTEXT listener and a controller listener), its environment exactly as compose passes it.
KAFKA_QUICKSTART_SERVICE = """
services:
  broker:
    image: apache/kafka:latest
    container_name: broker
    environment:
      KAFKA_NODE_ID: 1
      KAFKA_PROCESS_ROLES: broker,controller
      KAFKA_LISTENERS: PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093
      KAFKA_ADVERTISED_LISTENERS: PLAINTEXT://localhost:9092
      KAFKA_CONTROLLER_LISTENER_NAMES: CONTROLLER
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
      KAFKA_CONTROLLER_QUORUM_VOTERS: 1@localhost:9093
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: 1
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: 1
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: 1
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: 0
      KAFKA_NUM_PARTITIONS: 3
"""


def test_an_apache_kafka_compose_service_configures_the_image_unchanged() -> None:
    service = mini_yaml(KAFKA_QUICKSTART_SERVICE)["services"]["broker"]
    settings = broker_cmd_settings(environment_of(service))
    [listener] = listeners_from(settings)  # the CONTROLLER listener is the quorum's, not served
    assert (listener.port, listener.advertised_host, listener.advertised_port) == (9092, "localhost", 9092)
    assert settings.broker.num_partitions == 3
    assert settings.groups.initial_rebalance_delay_ms == 0
    assert (settings.storage.kind, settings.storage.data_dir) == ("filesystem", "/var/lib/trafka")
    logs = broker_cmd_settings({**environment_of(service), "KAFKA_LOG_DIRS": "/var/lib/kafka/data"})
    assert logs.storage.data_dir == "/var/lib/kafka/data"


def test_the_image_without_variables_serves_on_all_interfaces_into_its_volume() -> None:
    settings = broker_cmd_settings()
    assert (settings.server.host, settings.server.port) == ("0.0.0.0", 9092)
    assert settings.storage.data_dir == "/var/lib/trafka"
