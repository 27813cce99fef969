"""The `trafka` command line: `trafka serve` runs the broker; `check`, `export`, `user add` beside it."""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import signal
import sys
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import trio

    from trafka.adapters.kafka.context import BrokerContext
    from trafka.adapters.kafka.request_context import Endpoint
    from trafka.domain.listeners import Listener

    from ..config.settings import Settings
    from ..wiring.bootstrap import Adapters

# Only the parsers are built at import: each command imports what it uses when it runs, so that
# `trafka --help` and the operator commands do not load the broker (ADR 70); `trafka serve` builds its
# own parser alone, so a broker's start does not import and build every other command's (ADR 118).

log = logging.getLogger("trafka")

# Every command, in the order their parsers are added: serve's parser alone names them all in its usage
# line (an error's), as the whole CLI's does (a test checks this list against the parsers; ADR 124).
COMMANDS = (
    "serve",
    "check",
    "export",
    "config",
    "topic",
    "group",
    "produce",
    "consume",
    "cluster",
    "dump-log",
    "quota",
    "user",
)


def build_parser(only_serve: bool = False) -> argparse.ArgumentParser:
    """Every command's parser; with `only_serve` (the command line starts with `serve`), serve's alone,
    its usage naming every command as the whole parser's does."""
    parser = argparse.ArgumentParser(prog="trafka", description="A Kafka-compatible broker on Trio.")
    every_command = "{" + ",".join(COMMANDS) + "}" if only_serve else None
    commands = parser.add_subparsers(dest="command", required=True, metavar=every_command)
    run = commands.add_parser("serve", help="run the broker")
    run.add_argument("--host", help="interface to listen on (default localhost; unused when `listeners` is set)")
    run.add_argument("--port", type=int, help="port to listen on (default 9092; 0 picks a free one)")
    run.add_argument("--advertised-host", help="host clients are told to connect to")
    run.add_argument("--advertised-port", type=int, help="port clients are told to connect to")
    store = run.add_mutually_exclusive_group()
    store.add_argument("--memory", action="store_true", help="keep everything in memory")
    store.add_argument("--data-dir", help="Kafka log dir of the filesystem store (default /tmp/trafka-logs)")
    run.add_argument("--http-port", type=int, help="HTTP port for /metrics, /healthz and the console (default off)")
    run.add_argument("--http-host", help="interface of the HTTP listener (default 127.0.0.1)")
    run.add_argument(
        "config_file", nargs="?", metavar="CONFIG", help="Kafka's server.properties (or a .toml file), as --config"
    )
    run.add_argument(
        "--config", help="configuration file: Kafka's server.properties format, or TOML if it ends in .toml"
    )
    run.add_argument("--log-level", help="DEBUG, INFO, WARNING or ERROR")
    run.add_argument(
        "--ready-file",
        metavar="F",
        help="once listening, write the bound address to F as JSON (for test harnesses with --port 0)",
    )
    testing = run.add_argument_group("test double (for test suites; see docs/COVERAGE.md)")
    testing.add_argument(
        "--brokers", type=_positive, metavar="N", help="simulate a cluster of N brokers in this process"
    )
    testing.add_argument("--kafka-version", metavar="V", help="advertise and accept only what Kafka V does (2.8, 4.0)")
    testing.add_argument(
        "--clock", choices=("wall", "manual"), help="manual: the broker's time moves only by /testing/advance"
    )
    testing.add_argument(
        "--testing", action="store_true", help="serve the /testing/... control endpoints on the HTTP listener"
    )
    if only_serve:
        return parser
    from ..ops.commands import add_operator_parsers
    from .config import add_config_parser
    from .export import add_export_parser
    from .users import add_user_parser

    check = commands.add_parser("check", help="exit 0 if a broker answers an ApiVersions request")
    check.add_argument("--host", help="broker host (default: the configured server host)")
    check.add_argument("--port", type=int, help="broker port (default: the configured server port)")
    check.add_argument("--config", help="TOML configuration file")
    check.add_argument("--timeout", type=float, default=5.0, help="seconds to wait (default 5)")
    add_export_parser(commands)
    add_config_parser(commands)
    add_operator_parsers(commands)
    add_user_parser(commands)
    return parser


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number")
    return value


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    server = {
        key: value
        for key, value in (
            ("host", args.host),
            ("port", args.port),
            ("advertised_host", getattr(args, "advertised_host", None)),
            ("advertised_port", getattr(args, "advertised_port", None)),
        )
        if value is not None
    }
    out: dict[str, Any] = {"server": server}
    if getattr(args, "memory", False):
        out["storage"] = {"kind": "memory"}
    elif getattr(args, "data_dir", None):
        out["storage"] = {"kind": "filesystem", "data_dir": args.data_dir}
    http = {
        key: value
        for key, value in (("host", getattr(args, "http_host", None)), ("port", getattr(args, "http_port", None)))
        if value is not None
    }
    if http:
        out["http"] = http
    if getattr(args, "log_level", None):
        out["log_level"] = args.log_level
    broker = {
        key: value
        for key, value in (
            ("kafka_version", getattr(args, "kafka_version", None)),
            ("clock", getattr(args, "clock", None)),
        )
        if value is not None
    }
    if broker:
        out["broker"] = broker
    if getattr(args, "testing", False):
        out.setdefault("http", {})["testing"] = True
    brokers = getattr(args, "brokers", None)
    if brokers is not None:
        from ..embedded import cluster_listeners

        host = args.host or "127.0.0.1"
        out["server"] = {**server, **cluster_listeners(brokers, host)}
    return out


async def _run_cli_broker(settings: Settings, ctx: BrokerContext, adapters: Adapters, ready_file: str | None) -> None:
    import trio

    from ..wiring.runtime import run_broker

    http: list[str] = []

    def http_started(host: str, port: int) -> None:
        http.append(f"{host}:{port}")
        _print_http_address(host, port)

    routes = []
    if settings.http.testing and settings.http.port is not None:
        from ..embedded import RunningBroker
        from ..embedded.testing_http import testing_routes

        routes = testing_routes(RunningBroker(settings, ctx, adapters, 0))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_stop_on_signals, ctx)
        await nursery.start(partial(run_broker, settings, ctx, adapters, http_started=http_started, http_routes=routes))
        if ctx.services.cluster is not None:
            from ..embedded import attach_cluster

            attach_cluster(ctx, ctx.services.cluster)
        if ready_file:
            bootstrap = None
            if ctx.services.cluster is not None:
                bootstrap = ",".join(f"{e.host}:{e.port}" for _, e in sorted(ctx.services.cluster.endpoints.items()))
            write_ready_file(ready_file, ctx.listeners, ctx.advertised, bootstrap, http[0] if http else None)
        # What start-up built (modules, schema classes, settings) lives as long as the process: frozen out
        # of the collector's sight, a full collection no longer walks it (pauses of 35-75 ms, ADR 109)
        gc.freeze()
        gc.enable()
        first, *others = ctx.listeners
        print(f"trafka listening on {first.host or '0.0.0.0'}:{first.port}", flush=True)
        for listener in others:
            print(f"trafka listener {listener.name} on {listener.host or '0.0.0.0'}:{listener.port}", flush=True)
        # Ready without the rooms no request has reached yet (ADR 110); a long-running broker then loads
        # them in a worker thread, so a consumer's first Fetch or group request does not import its room
        # on the event loop (17% of a fan-out's first second, bench/README.md), and freezes them too
        from trafka.adapters.kafka.apis import import_rooms

        await trio.to_thread.run_sync(partial(import_rooms, telemetry=bool(http)))
        gc.freeze()
        await ctx.shutting_down.wait()


def _print_http_address(host: str, port: int) -> None:
    print(f"trafka http listening on {host}:{port}", flush=True)


def write_ready_file(
    path: str,
    listeners: Sequence[Listener],
    advertised: Endpoint,
    bootstrap: str | None = None,
    http: str | None = None,
) -> None:
    """The bound addresses as JSON, written whole (to a temporary name, then renamed) so that a harness
    polling for the file never reads half of it. `host`/`port`/`bootstrap_servers` are the first
    listener's (every broker's, for a simulated cluster); `listeners` has every listener by name;
    `http` the HTTP listener's "host:port" when it runs."""
    ready: dict[str, Any] = {
        "host": listeners[0].host,
        "port": listeners[0].port,
        "bootstrap_servers": bootstrap or f"{advertised.host}:{advertised.port}",
        "listeners": {
            listener.name: {
                "security_protocol": listener.security_protocol.value,
                "host": listener.host,
                "port": listener.port,
                "advertised": f"{listener.advertised_host}:{listener.advertised_port}",
            }
            for listener in listeners
        },
        "pid": os.getpid(),
    }
    if http is not None:
        ready["http"] = http
    partial = f"{path}.{os.getpid()}.tmp"
    with open(partial, "w") as file:
        json.dump(ready, file)
        file.write("\n")
    os.replace(partial, path)


async def _stop_on_signals(ctx: BrokerContext) -> None:
    """The first SIGINT or SIGTERM stops the broker gracefully. Watching ends when the broker stops
    for another reason too (a failed log dir), so that the process exits instead of waiting."""
    import trio

    from ..wiring.runtime import request_shutdown

    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as watching:
            watching.start_soon(_cancel_on_shutdown, ctx, watching.cancel_scope)
            async for signum in signals:
                log.info("received %s", signal.Signals(signum).name)
                request_shutdown(ctx)
                break
            watching.cancel_scope.cancel()


async def _cancel_on_shutdown(ctx: BrokerContext, scope: trio.CancelScope) -> None:
    await ctx.shutting_down.wait()
    scope.cancel()


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(only_serve=argv[:1] == ["serve"]).parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    from ..ops.commands import OPERATOR_COMMANDS

    if args.command == "export":
        from .export import run_export

        return run_export(args)
    if args.command == "config":
        from .config import run_config

        return run_config(args, _overrides(args))
    if args.command in OPERATOR_COMMANDS:
        return OPERATOR_COMMANDS[args.command](args)
    if args.command == "user":
        from .users import run_user

        return run_user(args)
    from ..config.settings import ConfigError, load_settings  # `check`, the one command left
    from .check import run_check

    try:
        settings = load_settings(args.config, os.environ, _overrides(args))
    except ConfigError as exc:
        print(f"trafka: {exc}", file=sys.stderr)
        return 2
    return run_check(settings.server.host, settings.server.port, args.timeout)


def _serve(args: argparse.Namespace) -> int:
    gc.disable()  # start-up allocates what lives as long as the process: no collection walks it (ADR 109)
    from trafka._attrs_code import install

    install()  # attrs' code for trafka's classes from the cache (ADR 128)
    import attrs
    import trio

    from ..config.settings import ConfigError, config_path, load_configuration, log_ignored_kafka_keys
    from ..wiring.bootstrap import LogDirUnusable, bootstrap, default_adapters
    from ..wiring.runtime import close_broker

    try:
        loaded = load_configuration(config_path(args), os.environ, _overrides(args), single_node=True)
        settings = loaded.settings
        logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        log_ignored_kafka_keys(loaded)
        adapters = default_adapters(settings)
        ctx = bootstrap(settings, adapters)
        if settings.http.testing and ctx.services.authorization is not None:
            # The controls have no login of their own: on a broker with ACLs they would hand every topic's
            # records, and the power to fail every request, to whoever reaches the HTTP port (issue 42 #8).
            raise ConfigError("--testing serves unauthenticated test controls: not on a broker with an authorizer")
        if args.brokers is not None:
            from trafka.adapters.kafka.cluster import ClusterMap

            node = settings.broker.node_id
            ctx = attrs.evolve(
                ctx, services=attrs.evolve(ctx.services, cluster=ClusterMap(range(node, node + args.brokers)))
            )
    except LogDirUnusable as exc:
        print(f"trafka: {exc}", file=sys.stderr)
        return 1
    except (ConfigError, ValueError) as exc:
        print(f"trafka: {exc}", file=sys.stderr)
        return 2
    status = 0
    try:
        trio.run(_run_cli_broker, settings, ctx, adapters, args.ready_file)
    except* OSError as group:  # Trio's nurseries raise exception groups
        error = group.exceptions[0]
        while isinstance(error, BaseExceptionGroup):
            error = error.exceptions[0]
        where = (
            f"{settings.http.host}:{settings.http.port} (HTTP)"
            if settings.http.port is not None and _is_http_bind_error(error)
            else settings.server.listeners or f"{settings.server.host}:{settings.server.port}"
        )
        print(f"trafka: cannot listen on {where}: {error}", file=sys.stderr)
        status = 1
    finally:
        close_broker(ctx, adapters)
    if adapters.health is not None and adapters.health.offline is not None:
        print(
            f"trafka: stopped because log dir {adapters.health.path} failed: {adapters.health.offline}", file=sys.stderr
        )
        status = 1
    return status


def _is_http_bind_error(error: BaseException) -> bool:
    from trafka.adapters.http.server import HttpBindError  # loaded only by a broker with an HTTP listener

    return isinstance(error, HttpBindError)
