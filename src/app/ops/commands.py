"""The operator commands (`topic`, `group`, `produce`, `consume`, `cluster`, `dump-log`, `quota`), one module each,
registered here so that `trafka.app.cli.main` stays the broker's own entry point."""

from __future__ import annotations

from typing import Any

from .cluster import add_cluster_parser, run_cluster
from .consume import add_consume_parser, run_consume
from .dump_log import add_dump_log_parser, run_dump_log
from .group import add_group_parser, run_group
from .produce import add_produce_parser, run_produce
from .quota import add_quota_parser, run_quota
from .topic import add_topic_parser, run_topic

OPERATOR_COMMANDS = {
    "topic": run_topic,
    "group": run_group,
    "produce": run_produce,
    "consume": run_consume,
    "cluster": run_cluster,
    "dump-log": run_dump_log,
    "quota": run_quota,
}


def add_operator_parsers(commands: Any) -> None:
    add_topic_parser(commands)
    add_group_parser(commands)
    add_produce_parser(commands)
    add_consume_parser(commands)
    add_cluster_parser(commands)
    add_dump_log_parser(commands)
    add_quota_parser(commands)
