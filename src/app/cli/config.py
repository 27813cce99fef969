"""`trafka config show`: the effective configuration, each value with where it came from.

The same loader as `trafka serve` (file, `KAFKA_*`, `TRAFKA_*`, flags), so what it prints is what the
broker would run with. A source is `default`, `file PATH (kafka.key)`, `env NAME` or `flag`; a `[log]`
value left unset is shown as Kafka's own default for the topic config it sets. Kafka keys given but
ignored are listed after the table.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

import attrs

from ..ops.output import OK, USAGE, fail, print_json, print_rows

if TYPE_CHECKING:
    from ..config.settings import Settings

_LOG_TOPIC_CONFIG = {
    "retention_ms": "retention.ms",
    "retention_bytes": "retention.bytes",
    "segment_bytes": "segment.bytes",
    "roll_ms": "segment.ms",
    "flush_interval_messages": "flush.messages",
    "flush_interval_ms": "flush.ms",
    "index_interval_bytes": "index.interval.bytes",
}


def add_config_parser(commands: Any) -> None:
    config = commands.add_parser("config", help="the effective configuration")
    verbs = config.add_subparsers(dest="verb", required=True)
    show = verbs.add_parser("show", help="print every setting with its source (default, file, env, flag)")
    show.add_argument("config_file", nargs="?", metavar="CONFIG", help="server.properties or a .toml file")
    show.add_argument("--config", help="as CONFIG")
    show.add_argument("-o", "--output", choices=("table", "json"), default="table")
    # `trafka serve`'s flags, so that `config show` shows what a serve command line would run with.
    show.add_argument("--host")
    show.add_argument("--port", type=int)
    show.add_argument("--advertised-host")
    show.add_argument("--advertised-port", type=int)
    store = show.add_mutually_exclusive_group()
    store.add_argument("--memory", action="store_true")
    store.add_argument("--data-dir")
    show.add_argument("--log-level")


def _leaves(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    out = []
    for field in attrs.fields(type(value)):
        item = getattr(value, field.name)
        if attrs.has(type(item)):
            out += _leaves(item, f"{prefix}{field.name}.")
        else:
            out.append((prefix + field.name, item))
    return out


def config_rows(settings: Settings, sources: dict[str, str]) -> list[dict[str, Any]]:
    from trafka.domain.configs import TOPIC_CONFIG_DEFAULTS

    rows = []
    for path, value in _leaves(settings):
        section, _, name = path.partition(".")
        if section == "log" and value is None and name in _LOG_TOPIC_CONFIG:
            value = TOPIC_CONFIG_DEFAULTS[_LOG_TOPIC_CONFIG[name]][0]
        rows.append({"setting": path, "value": value, "source": sources.get(path, "default")})
    return rows


def run_config(args: argparse.Namespace, overrides: dict[str, Any]) -> int:
    from ..config.settings import ConfigError, config_path, load_configuration  # the broker's, on use

    try:
        loaded = load_configuration(config_path(args), os.environ, overrides, single_node=True)
    except ConfigError as exc:
        return fail(str(exc), USAGE)
    rows = config_rows(loaded.settings, loaded.sources)
    if args.output == "json":
        print_json({"settings": rows, "ignored_kafka_configs": list(loaded.ignored_kafka_keys)})
        return OK
    print_rows(rows, ["setting", "value", "source"], "table")
    if loaded.ignored_kafka_keys:
        print(
            f"\nKafka configs given but not implemented by trafka (ignored): {', '.join(loaded.ignored_kafka_keys)}",
            file=sys.stdout,
        )
    return OK
