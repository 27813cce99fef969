"""`trafka group list|describe|reset-offsets|delete|configs|alter-config`, as `kafka-consumer-groups.sh`,
`kafka-share-groups.sh` and `kafka-configs.sh --entity-type groups`.

`describe` shows, per partition the group has committed or been assigned, the committed offset, the
log end offset, the lag and the member that holds it (consumer id, host, client id); for a KIP-848
consumer group (ConsumerGroupDescribe) also the group epoch, the assignor, the member's epoch and
whether the partition is in its target; for a share group (ShareGroupDescribe and
DescribeShareGroupOffsets, as `kafka-share-groups.sh`) each share-partition's start offset, lag and
how many members may fetch it; for a streams group (StreamsGroupDescribe, as `kafka-streams-groups.sh`)
the task reading each partition and the epochs, with `--members` each member's process and active,
standby and warm-up tasks, with `--topology` its subtopologies. `reset-offsets`
plans new committed offsets (`--to-earliest`, `--to-latest`, `--to-datetime`, `--shift-by`,
`--to-offset`), clamped to each partition's log start and end as Kafka's tool does, prints the plan,
and commits it only with `--execute` (a share group's start offsets with AlterShareGroupOffsets); like
Kafka's tool it refuses a group that has active members.
"""

from __future__ import annotations

import argparse
import datetime
from typing import Any

from .client import CommandError, add_connection_options, admin_client, run_operator
from .group_describe import describe, describe_group
from .output import OK, USAGE, print_rows
from .topic import DELETE, config_changes


def add_group_parser(commands: Any) -> None:
    group = commands.add_parser("group", help="list, describe, reset, delete and configure consumer and share groups")
    verbs = group.add_subparsers(dest="verb", required=True)
    listing = verbs.add_parser("list", help="every group with its state")
    add_connection_options(listing)
    describe = verbs.add_parser("describe", help="members, committed offsets, log end offsets and lag")
    describe.add_argument("groups", nargs="+", metavar="GROUP")
    describe.add_argument(
        "--members", action="store_true", help="one row per member and its partitions (as the Kafka tools' --members)"
    )
    describe.add_argument(
        "--topology", action="store_true", help="a streams group's subtopologies and their topics, one row each"
    )
    add_connection_options(describe)
    reset = verbs.add_parser("reset-offsets", help="move a group's committed offsets (a dry run unless --execute)")
    reset.add_argument("group", metavar="GROUP")
    scope = reset.add_mutually_exclusive_group(required=True)
    scope.add_argument("--topic", action="append", metavar="TOPIC[:P,P...]")
    scope.add_argument("--all-topics", action="store_true", help="every topic the group has offsets for")
    mode = reset.add_mutually_exclusive_group(required=True)
    mode.add_argument("--to-earliest", action="store_true")
    mode.add_argument("--to-latest", action="store_true")
    mode.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss[+HH:MM]")
    mode.add_argument("--shift-by", type=int, metavar="N")
    mode.add_argument("--to-offset", type=int, metavar="N")
    reset.add_argument("--execute", action="store_true", help="commit the plan (default: only print it)")
    add_connection_options(reset)
    delete = verbs.add_parser("delete", help="delete groups (they must have no members)")
    delete.add_argument("groups", nargs="+", metavar="GROUP")
    add_connection_options(delete)
    configs = verbs.add_parser("configs", help="a group's configs, overrides first (the GROUP config resource)")
    configs.add_argument("groups", nargs="+", metavar="GROUP")
    add_connection_options(configs)
    alter = verbs.add_parser("alter-config", help="set or delete a group's configs (share.*, consumer.*)")
    alter.add_argument("group", metavar="GROUP")
    alter.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    alter.add_argument("--delete", action="append", default=[], metavar="KEY")
    add_connection_options(alter)


def run_group(args: argparse.Namespace) -> int:
    return run_operator(_VERBS[args.verb], args)


def _list(args: argparse.Namespace) -> int:
    admin = admin_client(args)
    try:
        groups = admin.list_groups()
    finally:
        admin.close()
    rows = sorted(
        (
            {
                "group": g["group_id"],
                "type": g.get("group_type") or "classic",
                "state": g.get("group_state"),
                "protocol_type": g.get("protocol_type"),
            }
            for g in groups
        ),
        key=lambda row: row["group"],
    )
    print_rows(rows, ["group", "type", "state", "protocol_type"], args.output)
    return OK


def _partitions(admin: Any, args: argparse.Namespace, committed: dict[Any, Any]) -> list[Any]:
    from .admin import TopicPartition

    if args.all_topics:
        return sorted(committed)
    out = []
    for spec in args.topic:
        topic, _, listed = spec.partition(":")
        if listed:
            try:
                out += [TopicPartition(topic, int(p)) for p in listed.split(",")]
            except ValueError:
                raise CommandError(f"--topic {spec!r}: partitions must be numbers (TOPIC:0,1)", USAGE) from None
            continue
        [described] = admin.describe_topics([topic])
        if described["error_code"]:
            raise CommandError(f"topic {topic} does not exist (UNKNOWN_TOPIC_OR_PARTITION)")
        out += [TopicPartition(topic, p["partition_index"]) for p in described["partitions"]]
    return sorted(set(out))


def parse_datetime_ms(text: str) -> int:
    """Kafka's `--to-datetime` format, `YYYY-MM-DDTHH:mm:SS.sss` with an optional zone (default UTC)."""
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise CommandError(f"--to-datetime {text!r}: expected YYYY-MM-DDTHH:mm:SS.sss[+HH:MM]", USAGE) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return int(moment.timestamp() * 1000)


def _reset(args: argparse.Namespace) -> int:
    from .admin import EARLIEST, LATEST

    timestamp = parse_datetime_ms(args.to_datetime) if args.to_datetime else None
    admin = admin_client(args)
    try:
        described, committed = describe_group(admin, args.group) if _exists(admin, args.group) else ({}, {})
        if described.get("members"):
            raise CommandError(
                f"group {args.group} is {described.get('group_state')} with {len(described['members'])} member(s): "
                "offsets can only be reset while it is inactive (stop its consumers)"
            )
        tps = _partitions(admin, args, committed)
        if not tps:
            raise CommandError(f"group {args.group} has no offsets to reset", USAGE)
        earliest = {tp: o.offset for tp, o in admin.list_partition_offsets(dict.fromkeys(tps, EARLIEST)).items()}
        latest = {tp: o.offset for tp, o in admin.list_partition_offsets(dict.fromkeys(tps, LATEST)).items()}
        by_time = admin.list_partition_offsets(dict.fromkeys(tps, timestamp)) if timestamp is not None else {}
        plan = {}
        for tp in tps:
            if args.to_earliest:
                target = earliest[tp]
            elif args.to_latest:
                target = latest[tp]
            elif timestamp is not None:
                target = by_time[tp].offset if by_time[tp].offset >= 0 else latest[tp]
            elif args.shift_by is not None:
                if tp not in committed:
                    raise CommandError(
                        f"--shift-by: group {args.group} has no committed offset for {tp.topic}-{tp.partition}", USAGE
                    )
                target = committed[tp].offset + args.shift_by
            else:
                target = args.to_offset
            plan[tp] = min(max(target, earliest[tp]), latest[tp])
        if args.execute and described.get("type") == "share":
            from .share_groups import alter_share_group_offsets

            errors = alter_share_group_offsets(admin, args.group, plan)
            failed = {f"{tp.topic}-{tp.partition}": code for tp, code in sorted(errors.items()) if code}
            if failed:
                raise CommandError(f"group {args.group}: share-partitions not reset (error codes {failed})")
        elif args.execute:
            admin.commit_offsets(args.group, plan)
    finally:
        admin.close()
    rows = [
        {
            "group": args.group,
            "topic": tp.topic,
            "partition": tp.partition,
            "new_offset": offset,
            "executed": args.execute,
        }
        for tp, offset in sorted(plan.items())
    ]
    print_rows(rows, ["group", "topic", "partition", "new_offset"], args.output)
    return OK


def _exists(admin: Any, group_id: str) -> bool:
    return any(g["group_id"] == group_id for g in admin.list_groups())


def _delete(args: argparse.Namespace) -> int:
    admin = admin_client(args)
    try:
        results = admin.delete_groups(args.groups)
    finally:
        admin.close()
    failed = {g: e for g, e in results.items() if e is not None}
    if failed:
        raise CommandError("; ".join(f"group {g}: {e}" for g, e in sorted(failed.items())))
    print_rows([{"group": g, "deleted": True} for g in args.groups], ["group", "deleted"], args.output)
    return OK


def _configs(args: argparse.Namespace) -> int:
    """`kafka-configs.sh --entity-type groups --describe --all`: every config, overrides first."""
    from .admin import GROUP_RESOURCE

    admin = admin_client(args)
    try:
        described = admin.describe_configs(GROUP_RESOURCE, args.groups)
    finally:
        admin.close()
    rows = []
    for group_id in args.groups:
        entries = described.get(group_id) or {}
        for name, entry in entries.items():
            override = entry["config_source"] == "DYNAMIC_GROUP_CONFIG"
            rows.append({"group": group_id, "config": name, "value": entry["value"], "override": override})
    rows.sort(key=lambda row: (row["group"], not row["override"], row["config"]))
    print_rows(rows, ["group", "config", "value", "override"], args.output)
    return OK


def _alter_config(args: argparse.Namespace) -> int:
    """`kafka-configs.sh --entity-type groups --alter`: IncrementalAlterConfigs of the GROUP resource
    (a group's configs may be set before the group exists, as Kafka allows)."""
    from .admin import GROUP_RESOURCE

    changes = config_changes(args)
    admin = admin_client(args)
    try:
        admin.alter_configs(GROUP_RESOURCE, args.group, changes)
    finally:
        admin.close()
    rows = [{"config": k, "change": "delete" if op == DELETE else f"set {v}"} for k, (op, v) in sorted(changes.items())]
    print_rows(rows, ["config", "change"], args.output)
    return OK


_VERBS = {
    "list": _list,
    "describe": describe,
    "reset-offsets": _reset,
    "delete": _delete,
    "configs": _configs,
    "alter-config": _alter_config,
}
