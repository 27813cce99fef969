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
from .output import OK, USAGE, print_rows
from .topic import DELETE, config_changes

_DESCRIBE_COLUMNS = [
    "group",
    "topic",
    "partition",
    "current_offset",
    "log_end_offset",
    "lag",
    "consumer_id",
    "host",
    "client_id",
]


# KIP-848 consumer groups add the group's epoch and assignor, the member's epoch, and whether the
# partition it holds is still in its target (False: it is being revoked).
_CONSUMER_COLUMNS = ["type", "group_epoch", "assignor", "member_epoch", "in_target"]

# A streams group (KIP-1071): the task that reads the partition (subtopology_partition, as Kafka Streams
# names tasks), the group's epoch and the member's.
_STREAMS_COLUMNS = ["type", "task", "group_epoch", "member_epoch"]

# A share group's share-partitions (kafka-share-groups.sh --describe): the start offset in place of a
# committed offset, and how many members may fetch each.
_SHARE_COLUMNS = ["group", "topic", "partition", "start_offset", "log_end_offset", "lag", "members", "type", "assignor"]


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


def _describe_group(admin: Any, group_id: str) -> tuple[dict[str, Any], dict[Any, Any]]:
    """The group and its committed offsets; for a share group its share-partitions' start offsets."""
    from .admin import Offset
    from .consumer_groups import describe_consumer_group
    from .share_groups import describe_share_group
    from .streams_groups import describe_streams_group

    described = admin.describe_group(group_id)
    if described["error_code"] or described.get("group_state") == "Dead":
        # DescribeGroups knows classic groups only: a KIP-848 consumer group answers ConsumerGroupDescribe,
        # a share group ShareGroupDescribe
        consumer = describe_consumer_group(admin, group_id)
        if consumer is not None:
            return consumer, admin.list_group_offsets(group_id)
        share = describe_share_group(admin, group_id)
        if share is None:
            streams = describe_streams_group(admin, group_id)
            if streams is not None:
                return streams, admin.list_group_offsets(group_id)
            raise CommandError(f"group {group_id} does not exist (GROUP_ID_NOT_FOUND)")
        starts = {tp: Offset(start) for tp, (start, _) in share["share_offsets"].items()}
        return share, starts
    committed = admin.list_group_offsets(group_id)
    return described, committed


def _describe(args: argparse.Namespace) -> int:
    from .admin import LATEST, TopicPartition
    from .streams_groups import streams_fields

    if args.members:
        return _describe_members(args)
    if getattr(args, "topology", False):
        return _describe_topology(args)
    rows: list[dict[str, Any]] = []
    admin = admin_client(args)
    try:
        for group_id in args.groups:
            described, committed = _describe_group(admin, group_id)
            owners = {}
            for member in described.get("members") or []:
                assignment = member.get("member_assignment") or {}
                for assigned in assignment.get("assigned_partitions") or []:
                    for partition in assigned["partitions"]:
                        owners[TopicPartition(assigned["topic"], partition)] = member
            tps = sorted(set(committed) | set(owners))
            ends = admin.list_partition_offsets(dict.fromkeys(tps, LATEST)) if tps else {}
            if not tps:
                rows.append({"group": group_id, "state": described.get("group_state")})
            if described.get("type") == "share":
                rows += _share_rows(group_id, described, tps, ends)
                continue
            for tp in tps:
                member = owners.get(tp, {})
                current = committed[tp].offset if tp in committed else None
                end = ends[tp].offset
                rows.append(
                    {
                        "group": group_id,
                        "topic": tp.topic,
                        "partition": tp.partition,
                        "current_offset": current,
                        "log_end_offset": end,
                        "lag": None if current is None else end - current,
                        "consumer_id": member.get("member_id"),
                        "host": member.get("client_host"),
                        "client_id": member.get("client_id"),
                        "state": described.get("group_state"),
                        **_consumer_fields(described, member, tp),
                        **streams_fields(described, member, tp),
                    }
                )
    finally:
        admin.close()
    columns = list(_DESCRIBE_COLUMNS)
    if rows and all(row.get("type") == "share" for row in rows):
        columns = _SHARE_COLUMNS
    elif any(row.get("type") == "share" for row in rows):
        columns[3:3] = ["start_offset"]
        columns += ["members", "type", "group_epoch", "assignor"]
    if any(row.get("type") == "consumer" for row in rows):
        columns += [c for c in _CONSUMER_COLUMNS if c not in columns]
    if any(row.get("type") == "streams" for row in rows):
        columns += [c for c in _STREAMS_COLUMNS if c not in columns]
    print_rows(rows, columns, args.output)
    return OK


def _describe_members(args: argparse.Namespace) -> int:
    """`describe --members`: each member of each group (classic, consumer or share) with its partitions."""
    rows: list[dict[str, Any]] = []
    admin = admin_client(args)
    try:
        for group_id in args.groups:
            described, _ = _describe_group(admin, group_id)
            for member in described.get("members") or []:
                assigned = (member.get("member_assignment") or {}).get("assigned_partitions") or []
                partitions = sorted((a["topic"], p) for a in assigned for p in a["partitions"])
                row = {
                    "group": group_id,
                    "consumer_id": member.get("member_id"),
                    "host": member.get("client_host"),
                    "client_id": member.get("client_id"),
                    "member_epoch": member.get("member_epoch"),
                    "partitions": len(partitions),
                    "assignment": ",".join(f"{t}-{p}" for t, p in partitions),
                    "type": described.get("type") or "classic",
                }
                if "tasks" in member:  # a streams group's member: its process and its tasks by role
                    from .streams_groups import member_tasks

                    row.update(member_tasks(member))
                rows.append(row)
    finally:
        admin.close()
    columns = ["group", "consumer_id", "host", "client_id", "partitions", "assignment", "type"]
    if any(row["member_epoch"] is not None for row in rows):
        columns.insert(5, "member_epoch")
    if any("process" in row for row in rows):
        columns += ["process", "active", "standby", "warmup"]
    print_rows(rows, columns, args.output)
    return OK


def _describe_topology(args: argparse.Namespace) -> int:
    """`describe --topology`: a streams group's subtopologies, the topics each reads, writes and keeps state in."""
    from .streams_groups import TOPOLOGY_COLUMNS, topology_rows

    rows: list[dict[str, Any]] = []
    admin = admin_client(args)
    try:
        for group_id in args.groups:
            described, _ = _describe_group(admin, group_id)
            if described.get("type") != "streams":
                raise CommandError(f"group {group_id} is not a streams group: it has no topology")
            rows += topology_rows(group_id, described)
    finally:
        admin.close()
    print_rows(rows, TOPOLOGY_COLUMNS, args.output)
    return OK


def _share_rows(group_id: str, described: dict[str, Any], tps: list[Any], ends: dict[Any, Any]) -> list[dict[str, Any]]:
    """A share group's share-partitions, as `kafka-share-groups.sh --describe` shows them: the start offset
    (every record below it accepted or archived), the lag (records from it to the log end not yet
    accepted or archived) and how many members may fetch the partition."""
    holders: dict[Any, int] = {}
    for member in described.get("members") or []:
        for assigned in member["member_assignment"]["assigned_partitions"]:
            for partition in assigned["partitions"]:
                key = (assigned["topic"], partition)
                holders[key] = holders.get(key, 0) + 1
    rows = []
    for tp in tps:
        start, lag = described["share_offsets"].get(tp, (None, None))
        rows.append(
            {
                "group": group_id,
                "topic": tp.topic,
                "partition": tp.partition,
                "start_offset": start,
                "log_end_offset": ends[tp].offset,
                "lag": lag,
                "members": holders.get((tp.topic, tp.partition), 0),
                "state": described.get("group_state"),
                "type": "share",
                "group_epoch": described.get("group_epoch"),
                "assignor": described.get("assignor"),
            }
        )
    return rows


def _consumer_fields(described: dict[str, Any], member: dict[str, Any], tp: Any) -> dict[str, Any]:
    """A KIP-848 group's type, epochs and assignor, and whether the partition is in the member's target."""
    if described.get("type") != "consumer":
        return {}
    target = member.get("target") or set()
    return {
        "type": "consumer",
        "group_epoch": described.get("group_epoch"),
        "assignment_epoch": described.get("assignment_epoch"),
        "assignor": described.get("assignor"),
        "member_epoch": member.get("member_epoch"),
        "in_target": (tp.topic, tp.partition) in target if member else None,
    }


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
        described, committed = _describe_group(admin, args.group) if _exists(admin, args.group) else ({}, {})
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
    "describe": _describe,
    "reset-offsets": _reset,
    "delete": _delete,
    "configs": _configs,
    "alter-config": _alter_config,
}
