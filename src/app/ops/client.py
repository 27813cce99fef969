"""What every operator command shares: the bootstrap address, the Kafka client, and exit codes.

Operator commands talk Kafka's protocol to any broker (trafka or Kafka) through `wire.Client`, a small
blocking client on trafka's schema codec (ADR 101): the CLI installs and runs without a Kafka client
library.
`-b/--bootstrap-server` defaults to `TRAFKA_BOOTSTRAP`, then localhost:9092. `run_operator` turns
what can go wrong into one line on stderr and an exit status scripts can rely on (see `output`):
a broker that does not answer is 3, an error the broker returned is 1, bad arguments are 2.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from .output import ERROR, UNREACHABLE, USAGE, fail

if TYPE_CHECKING:
    from .admin import Admin

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


def admin_client(args: argparse.Namespace) -> Admin:
    """The admin calls to the cluster `-b` names (connections are opened on first use)."""
    from .admin import Admin
    from .wire import Client

    return Admin(Client(args.bootstrap_server, args.timeout))


def run_operator(command: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    from .wire import BrokerError, Unreachable

    try:
        return command(args)
    except CommandError as exc:
        return fail(str(exc), exc.status)
    except Unreachable as exc:
        return fail(f"no broker answered at {args.bootstrap_server} ({exc})", UNREACHABLE)
    except BrokerError as exc:
        return fail(str(exc), ERROR)
    except ValueError as exc:
        return fail(str(exc), USAGE)
    except KeyboardInterrupt:
        return 130
