"""The `trafka` command line: `trafka serve` runs the broker."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections.abc import Sequence
from typing import Any

import trio

from adapters.kafka.context import BrokerContext
from adapters.kafka.server import serve

from .bootstrap import Adapters, advertised_endpoint, bootstrap, default_adapters, limits_from
from .check import run_check
from .export import add_export_parser, run_export
from .config import ConfigError, Settings, load_settings

log = logging.getLogger("trafka")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trafka", description="A Kafka-compatible broker on Trio.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("serve", help="run the broker")
    run.add_argument("--host", help="interface to listen on (default localhost)")
    run.add_argument("--port", type=int, help="port to listen on (default 9092; 0 picks a free one)")
    run.add_argument("--advertised-host", help="host clients are told to connect to")
    run.add_argument("--advertised-port", type=int, help="port clients are told to connect to")
    store = run.add_mutually_exclusive_group()
    store.add_argument("--memory", action="store_true", help="keep everything in memory")
    store.add_argument("--data-dir", help="Kafka log dir of the filesystem store (default /tmp/trafka-logs)")
    run.add_argument("--config", help="TOML configuration file")
    run.add_argument("--log-level", help="DEBUG, INFO, WARNING or ERROR")
    check = commands.add_parser("check", help="exit 0 if a broker answers an ApiVersions request")
    check.add_argument("--host", help="broker host (default: the configured server host)")
    check.add_argument("--port", type=int, help="broker port (default: the configured server port)")
    check.add_argument("--config", help="TOML configuration file")
    check.add_argument("--timeout", type=float, default=5.0, help="seconds to wait (default 5)")
    add_export_parser(commands)
    return parser


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
    if getattr(args, "log_level", None):
        out["log_level"] = args.log_level
    return out


async def run_broker(settings: Settings, ctx: BrokerContext, adapters: Adapters) -> None:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_stop_on_signals, ctx)
        nursery.start_soon(_maintain, settings, ctx, adapters)
        _, port = await nursery.start(serve, ctx, settings.server.host, settings.server.port, limits_from(settings))
        ctx.advertised = advertised_endpoint(settings, port)
        print(f"trafka listening on {settings.server.host}:{port}", flush=True)
        await ctx.shutting_down.wait()
        log.info("shutting down")


async def _maintain(settings: Settings, ctx: BrokerContext, adapters: Adapters) -> None:
    """Background storage work: flush.ms, recovery-point checkpoints, retention."""
    storage = settings.storage
    next_checkpoint = adapters.clock_ms()
    next_retention = next_checkpoint + storage.retention_initial_delay_ms
    while not ctx.shutting_down.is_set():
        now = adapters.clock_ms()
        adapters.maintain(now)
        for transactional_id in ctx.transactions.expire(now):
            log.info("transaction %s timed out and was aborted", transactional_id)
            ctx.appends.notify_all()
        if now >= next_checkpoint:
            ctx.replicas.snapshot_producers()
            adapters.checkpoint()
            next_checkpoint = now + storage.checkpoint_interval_ms
        if now >= next_retention:
            for tp, start in ctx.replicas.enforce_retention(now).items():
                log.info("retention: %s now starts at offset %d", tp, start)
            next_retention = now + storage.retention_check_interval_ms
        with trio.move_on_after(1):
            await ctx.shutting_down.wait()


async def _stop_on_signals(ctx: BrokerContext) -> None:
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            log.info("received %s", signal.Signals(signum).name)
            ctx.shutting_down.set()
            ctx.appends.notify_all()
            return


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "export":
        return run_export(args)
    if args.command == "check":
        try:
            settings = load_settings(args.config, os.environ, _overrides(args))
        except ConfigError as exc:
            print(f"trafka: {exc}", file=sys.stderr)
            return 2
        return run_check(settings.server.host, settings.server.port, args.timeout)
    try:
        settings = load_settings(args.config, os.environ, _overrides(args))
        logging.basicConfig(
            level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
        adapters = default_adapters(settings)
        ctx = bootstrap(settings, adapters)
    except (ConfigError, ValueError) as exc:
        print(f"trafka: {exc}", file=sys.stderr)
        return 2
    status = 0
    try:
        trio.run(run_broker, settings, ctx, adapters)
    except* OSError as group:  # Trio's nurseries raise exception groups
        print(f"trafka: cannot listen on {settings.server.host}:{settings.server.port}: {group.exceptions[0]}",
              file=sys.stderr)
        status = 1
    finally:
        ctx.replicas.snapshot_producers()
        adapters.stop()
    return status
