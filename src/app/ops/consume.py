"""`trafka consume TOPIC`: print records, as `kafka-console-consumer.sh`.

Without `--group` the consumer assigns itself every partition (or `--partition P`) and starts at the
end, at the beginning with `--from-beginning`, or at `--offset earliest|latest|N`; with `--group G`
it joins that group and commits as it goes. `--format` is a Python format string over `key`, `value`,
`headers`, `offset`, `timestamp`, `partition` and `topic` (bytes printed as UTF-8); `-o json` prints
one JSON object per record. It follows the topic until Ctrl-C (or SIGTERM: a flag the poll loop reads), `--max-messages N` or `--timeout-ms`
without a record, then says on stderr how many it printed, as Kafka's tool does.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from typing import Any

from .client import CommandError, add_connection_options, admin_client, run_operator
from .output import OK, USAGE


def add_consume_parser(commands: Any) -> None:
    consume = commands.add_parser("consume", help="print the records of a topic")
    consume.add_argument("topic", metavar="TOPIC")
    consume.add_argument("--from-beginning", action="store_true")
    consume.add_argument("-g", "--group", help="join this consumer group and commit offsets")
    consume.add_argument("-p", "--partition", type=int)
    consume.add_argument("--offset", help="earliest, latest or a number (with --partition)")
    consume.add_argument(
        "-f",
        "--format",
        default="{value}",
        help="e.g. '{offset} {key}={value} {headers}' (fields: key value headers offset timestamp partition topic)",
    )
    consume.add_argument("-n", "--max-messages", type=int)
    consume.add_argument("--timeout-ms", type=int, help="stop after this long without a record")
    add_connection_options(consume)


def run_consume(args: argparse.Namespace) -> int:
    return run_operator(_consume, args)


def _text(value: bytes | None) -> str:
    return "null" if value is None else value.decode("utf-8", errors="replace")


def _start(consumer: Any, args: argparse.Namespace, partitions: list[int]) -> None:
    if args.offset is not None and args.partition is None:
        raise CommandError("--offset needs --partition", USAGE)
    if args.partition is not None and args.partition not in partitions:
        raise CommandError(f"topic {args.topic} has no partition {args.partition} (UNKNOWN_TOPIC_OR_PARTITION)")
    if args.group and args.partition is None:
        consumer.join()
        return
    chosen = [args.partition] if args.partition is not None else partitions
    offset = args.offset or ("earliest" if args.from_beginning else "latest")
    if offset in ("earliest", "latest"):
        consumer.assign(chosen, None)
        return
    try:
        number = int(offset)
    except ValueError:
        raise CommandError(f"--offset {offset!r}: expected earliest, latest or a number", USAGE) from None
    if number < 0:
        raise CommandError(f"--offset {offset!r}: must not be negative", USAGE)
    consumer.assign(chosen, number)


class _StopSignal:
    """SIGINT and SIGTERM set a flag the poll loop reads between polls, instead of raising
    KeyboardInterrupt wherever the client happens to be (mid-request, an interrupt would leave the
    group without the commit and LeaveGroup that closing sends). The previous handlers come back
    on exit."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.received: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _StopSignal:
        for signum in self.SIGNALS:
            self._previous[signum] = signal.signal(signum, self._received)
        return self

    def _received(self, signum: int, frame: Any) -> None:
        self.received = signum

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)


def _consume(args: argparse.Namespace) -> int:
    with _StopSignal() as stop:
        return _consume_until(args, stop)


def _consume_until(args: argparse.Namespace, stop: _StopSignal) -> int:
    from .admin import EARLIEST, LATEST
    from .consumer import Consumer

    admin = admin_client(args)
    reset = EARLIEST if args.from_beginning or args.offset == "earliest" else LATEST
    consumer = Consumer(admin, args.topic, args.group, reset)
    printed = 0
    try:
        (found,) = admin.client.metadata([args.topic]).topics
        if found.error_code or not found.partitions:
            raise CommandError(f"topic {args.topic} does not exist (UNKNOWN_TOPIC_OR_PARTITION)")
        _start(consumer, args, sorted(p.partition_index for p in found.partitions))
        last_record = time.monotonic()
        while (args.max_messages is None or printed < args.max_messages) and stop.received is None:
            limit = (args.max_messages - printed) if args.max_messages else 500
            records = sorted(consumer.poll(200, limit), key=lambda r: (r.partition, r.offset))
            for record in records:
                _print(record, args)
                printed += 1
            if records:
                last_record = time.monotonic()
            elif args.timeout_ms is not None and (time.monotonic() - last_record) * 1000 >= args.timeout_ms:
                break
    finally:
        try:
            consumer.close()
        finally:
            admin.close()
        print(f"Processed a total of {printed} messages", file=sys.stderr)
    return OK


def _print(record: Any, args: argparse.Namespace) -> None:
    headers = {k: _text(v) for k, v in (record.headers or [])}
    fields = {
        "key": _text(record.key),
        "value": _text(record.value),
        "headers": headers,
        "offset": record.offset,
        "timestamp": record.timestamp,
        "partition": record.partition,
        "topic": record.topic,
    }
    if args.output == "json":
        print(json.dumps(fields), flush=True)
        return
    try:
        print(args.format.format(**fields), flush=True)
    except (KeyError, IndexError, ValueError) as exc:
        raise CommandError(f"--format {args.format!r}: {exc!r} is not a record field", USAGE) from None
