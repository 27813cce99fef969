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


def client_problem() -> str | None:
    """Why the operator commands cannot run here, or None. They are a kafka-python 3 client; the broker
    itself runs beside any kafka-python from 2.0 on (ADR 92), so a user's 2.x is not replaced for them."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("kafka-python")
    except PackageNotFoundError:
        found = None
    if found is not None and int(found.split(".")[0]) >= 3:
        return None
    have = f"kafka-python {found} is installed" if found else "kafka-python is not installed"
    return f"the operator commands are a kafka-python 3 client and {have}: pip install 'kafka-python>=3.0.12'"


def add_operator_parsers(commands: Any) -> None:
    add_topic_parser(commands)
    add_group_parser(commands)
    add_produce_parser(commands)
    add_consume_parser(commands)
    add_cluster_parser(commands)
    add_dump_log_parser(commands)
    add_quota_parser(commands)
