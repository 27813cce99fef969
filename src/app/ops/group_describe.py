"""`trafka group describe`: per partition a group committed or was assigned, its committed offset, the
log end offset, the lag and the member holding it; a KIP-848 group's epochs and assignor, a share
group's share-partitions, a streams group's tasks, members (`--members`) and topology (`--topology`)."""

from __future__ import annotations

import argparse
from typing import Any

from .client import CommandError, admin_client
from .output import OK, print_rows

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


def describe_group(admin: Any, group_id: str) -> tuple[dict[str, Any], dict[Any, Any]]:
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


def describe(args: argparse.Namespace) -> int:
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
            described, committed = describe_group(admin, group_id)
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
            described, _ = describe_group(admin, group_id)
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
            described, _ = describe_group(admin, group_id)
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
