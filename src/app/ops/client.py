"""What every operator command shares: the bootstrap address, kafka-python clients, and exit codes.

Operator commands talk Kafka's protocol to any broker (trafka or Kafka) through kafka-python's
`KafkaAdminClient`, `KafkaConsumer` and `KafkaProducer`, so no second client is written here.
`-b/--bootstrap-server` defaults to `TRAFKA_BOOTSTRAP`, then localhost:9092. `run_operator` turns
what can go wrong into one line on stderr and an exit status scripts can rely on (see `output`):
a broker that does not answer is 3, an error the broker returned is 1, bad arguments are 2.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Callable
from typing import Any

from .output import ERROR, UNREACHABLE, USAGE, fail

DEFAULT_BOOTSTRAP = "localhost:9092"


class CommandError(Exception):
    """A one-line failure of an operator command, with its exit status."""

    def __init__(self, message: str, status: int = ERROR) -> None:
        super().__init__(message)
        self.status = status


def add_connection_options(parser: argparse.ArgumentParser, output: bool = True) -> None:
    parser.add_argument(
        "-b",
        "--bootstrap-server",
        metavar="HOST:PORT",
        default=os.environ.get("TRAFKA_BOOTSTRAP", DEFAULT_BOOTSTRAP),
        help="broker to connect to (default: $TRAFKA_BOOTSTRAP, else localhost:9092)",
    )
    parser.add_argument(
        "--timeout", type=float, default=10.0, metavar="S", help="seconds to wait for the broker (default 10)"
    )
    if output:
        parser.add_argument(
            "-o",
            "--output",
            choices=("table", "json"),
            default="table",
            help="table for people (default), json for scripts",
        )


def client_config(args: argparse.Namespace) -> dict[str, Any]:
    timeout_ms = int(args.timeout * 1000)
    return {
        "bootstrap_servers": args.bootstrap_server,
        "bootstrap_timeout_ms": timeout_ms,
        "request_timeout_ms": max(timeout_ms, 1000),
        "client_id": "trafka-cli",
    }


def admin_client(args: argparse.Namespace) -> Any:
    from kafka import KafkaAdminClient

    return KafkaAdminClient(**client_config(args))


def error_text(exc: BaseException) -> str:
    """Kafka's error name and what it means, without the request dump kafka-python appends."""
    from kafka import errors as kafka_errors

    if isinstance(exc, kafka_errors.KafkaError) and getattr(exc, "errno", None) is not None:
        return f"{exc.message}: {exc.description}"
    return str(exc).split("\n")[0]


def run_operator(command: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    # kafka-python logs every refused connection at ERROR; the one-line message below says it once.
    # It is imported here, when a command runs, not when the parsers are built (`trafka --help`).
    from kafka import errors as kafka_errors

    logging.getLogger("kafka").setLevel(logging.CRITICAL)
    try:
        return command(args)
    except CommandError as exc:
        return fail(str(exc), exc.status)
    except (kafka_errors.KafkaTimeoutError, kafka_errors.KafkaConnectionError) as exc:
        return fail(f"no broker answered at {args.bootstrap_server} ({error_text(exc)})", UNREACHABLE)
    except kafka_errors.KafkaError as exc:
        return fail(error_text(exc), ERROR)
    except ValueError as exc:
        return fail(str(exc), USAGE)
    except KeyboardInterrupt:
        return 130
