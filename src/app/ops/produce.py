"""`trafka produce TOPIC`: one record per line of standard input, as `kafka-console-producer.sh`.

`--key-separator SEP` splits each line at its first SEP into key and value (Kafka's
`parse.key=true key.separator=SEP`; a line without it is an error naming its number), `--header K=V`
adds headers to every record, `--partition` pins the partition. Records are sent with acks=all and
flushed before exit; a record the broker refused makes the exit status 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .client import CommandError, add_connection_options, client_config, run_operator
from .output import ERROR, OK, USAGE
from .topic import key_values


def add_produce_parser(commands: Any) -> None:
    produce = commands.add_parser("produce", help="send the lines of standard input as records")
    produce.add_argument("topic", metavar="TOPIC")
    produce.add_argument("-k", "--key-separator", metavar="SEP", help="each line is KEY<SEP>VALUE")
    produce.add_argument(
        "-H", "--header", action="append", default=[], metavar="KEY=VALUE", help="a header on every record (repeatable)"
    )
    produce.add_argument("-p", "--partition", type=int)
    add_connection_options(produce)


def run_produce(args: argparse.Namespace) -> int:
    return run_operator(_produce, args)


def _records(args: argparse.Namespace) -> Any:
    for number, line in enumerate(sys.stdin, 1):
        line = line.rstrip("\n").rstrip("\r")
        if args.key_separator is None:
            yield None, line.encode()
            continue
        key, sep, value = line.partition(args.key_separator)
        if not sep:
            raise CommandError(f"line {number}: no key separator {args.key_separator!r}", USAGE)
        yield key.encode(), value.encode()


def _produce(args: argparse.Namespace) -> int:
    from kafka import KafkaProducer
    from kafka.errors import KafkaTimeoutError

    headers = [(k, v.encode()) for k, v in key_values(args.header, "--header").items()]
    producer = KafkaProducer(**client_config(args), acks="all", linger_ms=5, max_block_ms=int(args.timeout * 1000))
    sent, failures = [], []
    offsets: dict[int, list[int]] = {}  # partition -> offsets written, for the summary line
    try:
        try:  # as Kafka's producer: the broker may create the topic (auto.create.topics.enable)
            producer.partitions_for(args.topic)
        except KafkaTimeoutError:
            raise CommandError(f"topic {args.topic} does not exist (UNKNOWN_TOPIC_OR_PARTITION)") from None
        for key, value in _records(args):
            sent.append(
                producer.send(args.topic, value=value, key=key, headers=headers or None, partition=args.partition)
            )
        producer.flush(timeout=args.timeout)
        for future in sent:
            try:
                metadata = future.get(timeout=args.timeout)
            except Exception as exc:
                failures.append(str(exc).split("\n")[0])
                continue
            offsets.setdefault(metadata.partition, []).append(metadata.offset)
            if args.output == "json":
                print(json.dumps({"topic": metadata.topic, "partition": metadata.partition, "offset": metadata.offset}))
    finally:
        producer.close(timeout=args.timeout)
    if args.output != "json":
        print(summary(args.topic, len(sent) - len(failures), offsets))
    if failures:
        raise CommandError(f"{len(failures)} of {len(sent)} records were not produced: {failures[0]}", ERROR)
    return OK


def summary(topic: str, produced: int, offsets: dict[int, list[int]]) -> str:
    """What was written, for a person: "produced 3 records to orders (partition 0 at offsets 4-6)"."""
    noun = "record" if produced == 1 else "records"
    where = ", ".join(
        f"partition {p} at offset{'s' if len(o) > 1 else ''} {_span(o)}" for p, o in sorted(offsets.items())
    )
    return f"produced {produced} {noun} to {topic}" + (f" ({where})" if where else "")


def _span(offsets: list[int]) -> str:
    low, high = min(offsets), max(offsets)
    return str(low) if low == high else f"{low}-{high}"
