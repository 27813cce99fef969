"""`trafka produce TOPIC`: one record per line of standard input, as `kafka-console-producer.sh`.

`--key-separator SEP` splits each line at its first SEP into key and value (Kafka's
`parse.key=true key.separator=SEP`; a line without it is an error naming its number), `--header K=V`
adds headers to every record, `--partition` pins the partition. Records are sent with acks=all and
flushed before exit, through the operator commands' own client (ADR 101); a record the broker refused makes the exit status 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .client import CommandError, add_connection_options, run_operator
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


def murmur2(data: bytes) -> int:
    """Kafka's `Utils.murmur2` (the default partitioner's hash of a record key), as a signed int32."""
    seed, m, r = 0x9747B28C, 0x5BD1E995, 24
    length = len(data)
    h = (seed ^ length) & 0xFFFFFFFF
    for i in range(0, length - length % 4, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    tail = length % 4
    if tail:
        rest = data[length - tail :]
        if tail == 3:
            h ^= rest[2] << 16
        if tail >= 2:
            h ^= rest[1] << 8
        h ^= rest[0]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h - (1 << 32) if h >= 1 << 31 else h


def partition_for(key: bytes | None, partitions: int, sticky: int) -> int:
    """Kafka's default partitioner: a keyed record by murmur2 of its key, the others to one partition."""
    if key is None:
        return sticky
    return (murmur2(key) & 0x7FFFFFFF) % partitions


def _leaders(client: Any, topic: str, deadline: float) -> dict[int, int]:
    """{partition: leader} once the topic has a leader for each (the broker may create it on this
    Metadata, with auto.create.topics.enable, as Kafka's producer lets it)."""
    import time

    while True:
        (found,) = client.metadata([topic], auto_create=True).topics
        if not found.error_code and found.partitions and all(p.leader_id >= 0 for p in found.partitions):
            return {p.partition_index: p.leader_id for p in found.partitions}
        if found.error_code not in (0, 3, 5) or time.monotonic() >= deadline:  # not yet: unknown, no leader
            if found.error_code in (0, 3, 5):
                raise CommandError(f"topic {topic} does not exist (UNKNOWN_TOPIC_OR_PARTITION)")
            from .wire import raise_for

            raise_for(found.error_code, f"topic {topic}")
        time.sleep(0.1)


def _produce(args: argparse.Namespace) -> int:
    """Every line to its partition's leader in one Produce per leader, acks=all, as one batch per
    partition built by trafka's record batch codec (ADR 101); the offsets come from the answers."""
    import random
    import time

    import crc32c

    from trafka.schema_codec.messages import ProduceRequest
    from trafka.schema_codec.records import NewRecord, build_batch

    from .wire import Client, error_name

    headers = [(k, v.encode()) for k, v in key_values(args.header, "--header").items()]
    offsets: dict[int, list[int]] = {}  # partition -> offsets written, for the summary line
    failures: list[str] = []
    sent = 0
    with Client(args.bootstrap_server, args.timeout) as client:
        leaders = _leaders(client, args.topic, time.monotonic() + args.timeout)
        if args.partition is not None and args.partition not in leaders:
            raise CommandError(f"topic {args.topic} has no partition {args.partition} (UNKNOWN_TOPIC_OR_PARTITION)")
        sticky = random.choice(sorted(leaders))
        for chunk in _chunks(_records(args)):
            by_partition: dict[int, list[NewRecord]] = {}
            now = int(time.time() * 1000)
            for key, value in chunk:
                partition = args.partition if args.partition is not None else partition_for(key, len(leaders), sticky)
                by_partition.setdefault(partition, []).append(NewRecord(now, key, value, headers))
            sent += len(chunk)
            Topic = ProduceRequest.TopicProduceData
            for leader in sorted({leaders[p] for p in by_partition}):
                data = [
                    Topic.PartitionProduceData(index=p, records=build_batch(rs, crc32c.crc32c))
                    for p, rs in sorted(by_partition.items())
                    if leaders[p] == leader
                ]
                answer = client.send(
                    "Produce",
                    to=leader,
                    cap=12,  # v13 names topics by id
                    transactional_id=None,
                    acks=-1,
                    timeout_ms=int(args.timeout * 1000),
                    topic_data=[Topic(name=args.topic, partition_data=data)],
                )
                for topic in answer.responses:
                    for p in topic.partition_responses:
                        count = len(by_partition[p.index])
                        if p.error_code:
                            failures += [f"{error_name(p.error_code)}: {p.error_message or ''}".rstrip(": ")] * count
                            continue
                        written = list(range(p.base_offset, p.base_offset + count))
                        offsets.setdefault(p.index, []).extend(written)
                        if args.output == "json":
                            for offset in written:
                                print(json.dumps({"topic": args.topic, "partition": p.index, "offset": offset}))
    if args.output != "json":
        print(summary(args.topic, sent - len(failures), offsets))
    if failures:
        raise CommandError(f"{len(failures)} of {sent} records were not produced: {failures[0]}", ERROR)
    return OK


def _chunks(records: Any, size: int = 500) -> Any:
    """Records in groups of `size`; from a terminal, each line as it is typed."""
    interactive = sys.stdin.isatty()
    chunk: list[tuple[bytes | None, bytes]] = []
    for record in records:
        chunk.append(record)
        if interactive or len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


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
