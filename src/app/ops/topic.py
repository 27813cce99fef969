"""`trafka topic list|describe|create|delete|alter-config|add-partitions`, as `kafka-topics.sh` and
`kafka-configs.sh --entity-type topics`, through trafka's own admin calls (`admin`, ADR 101).

`describe` prints one row per partition (leader, replicas, in-sync replicas, log start and end
offsets) after a line per topic with its id and the configs set on it; `--output json` gives the same
as objects. `create --if-not-exists` and `delete --if-exists` make scripts idempotent.
"""

from __future__ import annotations

import argparse
from typing import Any

from .client import CommandError, add_connection_options, admin_client, run_operator
from .output import OK, USAGE, print_json, print_rows


def add_topic_parser(commands: Any) -> None:
    topic = commands.add_parser("topic", help="list, describe, create, delete and configure topics")
    verbs = topic.add_subparsers(dest="verb", required=True)
    listing = verbs.add_parser("list", help="every topic with its partition count")
    add_connection_options(listing)
    describe = verbs.add_parser("describe", help="partitions, leaders, offsets and configs of topics")
    describe.add_argument("topics", nargs="*", metavar="TOPIC", help="default: every topic")
    add_connection_options(describe)
    create = verbs.add_parser("create", help="create a topic")
    create.add_argument("topic", metavar="TOPIC")
    create.add_argument("-p", "--partitions", type=int, default=-1, help="default: the broker's num.partitions")
    create.add_argument("-r", "--replication-factor", type=int, default=-1)
    create.add_argument("-c", "--config", action="append", default=[], metavar="KEY=VALUE")
    create.add_argument("--if-not-exists", action="store_true")
    add_connection_options(create)
    delete = verbs.add_parser("delete", help="delete topics")
    delete.add_argument("topics", nargs="+", metavar="TOPIC")
    delete.add_argument("--if-exists", action="store_true")
    add_connection_options(delete)
    alter = verbs.add_parser("alter-config", help="set or delete configs of a topic")
    alter.add_argument("topic", metavar="TOPIC")
    alter.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    alter.add_argument("--delete", action="append", default=[], metavar="KEY")
    add_connection_options(alter)
    grow = verbs.add_parser("add-partitions", help="grow a topic to a number of partitions")
    grow.add_argument("topic", metavar="TOPIC")
    grow.add_argument("-p", "--partitions", type=int, required=True, help="the new total")
    add_connection_options(grow)


def key_values(pairs: list[str], flag: str) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CommandError(f"{flag} {pair!r}: expected KEY=VALUE", USAGE)
        out[key] = value
    return out


def run_topic(args: argparse.Namespace) -> int:
    return run_operator(_VERBS[args.verb], args)


def _list(args: argparse.Namespace) -> int:
    admin = admin_client(args)
    try:
        topics = admin.describe_topics()
    finally:
        admin.close()
    rows = sorted(
        ({"topic": t["name"], "partitions": len(t["partitions"]), "internal": t["is_internal"]} for t in topics),
        key=lambda row: row["topic"],
    )
    print_rows(rows, ["topic", "partitions"], args.output)
    return OK


def _describe(args: argparse.Namespace) -> int:
    from .admin import EARLIEST, LATEST, TOPIC_RESOURCE, TopicPartition

    admin = admin_client(args)
    try:
        described = admin.describe_topics(args.topics or None)
        for topic in described:
            if topic["error_code"]:
                raise CommandError(f"topic {topic['name']}: {_error_name(topic['error_code'])}")
        tps = [TopicPartition(t["name"], p["partition_index"]) for t in described for p in t["partitions"]]
        earliest = admin.list_partition_offsets(dict.fromkeys(tps, EARLIEST)) if tps else {}
        latest = admin.list_partition_offsets(dict.fromkeys(tps, LATEST)) if tps else {}
        configs = admin.describe_configs(TOPIC_RESOURCE, [t["name"] for t in described]) if described else {}
    finally:
        admin.close()
    out = []
    for topic in sorted(described, key=lambda t: t["name"]):
        name = topic["name"]
        partitions = [
            {
                "partition": p["partition_index"],
                "leader": p["leader_id"],
                "replicas": p["replica_nodes"],
                "isr": p["isr_nodes"],
                "log_start_offset": earliest[TopicPartition(name, p["partition_index"])].offset,
                "log_end_offset": latest[TopicPartition(name, p["partition_index"])].offset,
            }
            for p in sorted(topic["partitions"], key=lambda p: p["partition_index"])
        ]
        set_configs = {
            k: v["value"] for k, v in configs.get(name, {}).items() if v["config_source"] == "DYNAMIC_TOPIC_CONFIG"
        }
        out.append({"topic": name, "topic_id": topic["topic_id"], "partitions": partitions, "configs": set_configs})
    if args.output == "json":
        print_json(out)
        return OK
    for index, topic in enumerate(out):
        configs_text = ",".join(f"{k}={v}" for k, v in sorted(topic["configs"].items())) or "-"
        print(
            ("\n" if index else "") + f"Topic: {topic['topic']}  TopicId: {topic['topic_id']}  "
            f"PartitionCount: {len(topic['partitions'])}  Configs: {configs_text}"
        )
        print_rows(
            topic["partitions"],
            ["partition", "leader", "replicas", "isr", "log_start_offset", "log_end_offset"],
            "table",
        )
    return OK


def _error_name(code: int) -> str:
    from .wire import BrokerError

    return str(BrokerError(code))


def _create(args: argparse.Namespace) -> int:
    from .wire import BrokerError

    configs = key_values(args.config, "--config")
    admin = admin_client(args)
    try:
        admin.create_topic(args.topic, args.partitions, args.replication_factor, configs)
    except BrokerError as exc:
        if exc.name != "TOPIC_ALREADY_EXISTS":
            raise
        if not args.if_not_exists:
            raise CommandError(f"topic {args.topic} already exists (TOPIC_ALREADY_EXISTS)") from None
    finally:
        admin.close()
    print(f"Created topic {args.topic}.") if args.output == "table" else print_json({"topic": args.topic})
    return OK


def _delete(args: argparse.Namespace) -> int:
    from .wire import BrokerError

    admin = admin_client(args)
    try:
        existing = set(admin.list_topics())
        missing = [t for t in args.topics if t not in existing]
        if missing and not args.if_exists:
            raise CommandError(f"topic {', '.join(missing)} does not exist (UNKNOWN_TOPIC_OR_PARTITION)")
        wanted = [t for t in args.topics if t in existing]
        if wanted:
            try:
                admin.delete_topics(wanted)
            except BrokerError as exc:
                if exc.name != "UNKNOWN_TOPIC_OR_PARTITION" or not args.if_exists:
                    raise
    finally:
        admin.close()
    print_rows([{"topic": t, "deleted": t in wanted} for t in args.topics], ["topic", "deleted"], args.output)
    return OK


def _alter_config(args: argparse.Namespace) -> int:
    from .admin import TOPIC_RESOURCE

    changes = config_changes(args)
    admin = admin_client(args)
    try:
        if args.topic not in admin.list_topics():
            raise CommandError(f"topic {args.topic} does not exist (UNKNOWN_TOPIC_OR_PARTITION)")
        admin.alter_configs(TOPIC_RESOURCE, args.topic, changes)
    finally:
        admin.close()
    rows = [{"config": k, "change": "delete" if op == DELETE else f"set {v}"} for k, (op, v) in sorted(changes.items())]
    print_rows(rows, ["config", "change"], args.output)
    return OK


SET, DELETE = 0, 1  # IncrementalAlterConfigs' operations (Kafka's AlterConfigOp.OpType)


def config_changes(args: argparse.Namespace) -> dict[str, tuple[int, str | None]]:
    """`--set K=V` and `--delete K` as IncrementalAlterConfigs' {config: (operation, value)}."""
    changes: dict[str, tuple[int, str | None]] = {k: (SET, v) for k, v in key_values(args.set, "--set").items()}
    changes.update(dict.fromkeys(args.delete, (DELETE, None)))
    if not changes:
        raise CommandError("nothing to change: give --set KEY=VALUE or --delete KEY", USAGE)
    return changes


def _add_partitions(args: argparse.Namespace) -> int:
    admin = admin_client(args)
    try:
        admin.create_partitions(args.topic, args.partitions)
    finally:
        admin.close()
    print_rows([{"topic": args.topic, "partitions": args.partitions}], ["topic", "partitions"], args.output)
    return OK


_VERBS = {
    "list": _list,
    "describe": _describe,
    "create": _create,
    "delete": _delete,
    "alter-config": _alter_config,
    "add-partitions": _add_partitions,
}
