"""StreamsGroupDescribe (key 89) from the operator commands: a streams group's (KIP-1071) epochs, its
topology and each member's process and tasks, sent to the group's coordinator (ADR 101).

A task is a subtopology's partition: task `1_2` reads partition 2 of each of subtopology 1's source
topics (user and repartition topics). So a member "owns", for `trafka group describe`, the partitions
of the source topics of its active tasks, and the lag of a group is read per source partition from its
committed offsets, as `kafka-streams-groups.sh --describe --offsets` shows it."""

from __future__ import annotations

from typing import Any


def describe_streams_group(admin: Any, group_id: str) -> dict[str, Any] | None:
    """The group as `describe` prints it (members shaped as DescribeGroups' are, with their tasks), or
    None if it is no streams group (or the broker, before Kafka 4.2, serves no streams groups)."""
    from .wire import UNSUPPORTED_VERSION, BrokerError

    try:
        answer = admin.to_coordinator(
            group_id, "StreamsGroupDescribe", group_ids=[group_id], include_authorized_operations=False
        )
    except BrokerError as error:
        if error.code != UNSUPPORTED_VERSION:
            raise
        return None
    (group,) = answer.groups
    if group.error_code:
        return None
    sources: dict[str, list[str]] = {}
    subtopologies = []
    for s in group.topology.subtopologies if group.topology is not None else []:
        sources[s.subtopology_id] = list(s.source_topics) + [t.name for t in s.repartition_source_topics]
        subtopologies.append(
            {
                "subtopology": s.subtopology_id,
                "source_topics": list(s.source_topics),
                "repartition_source_topics": [t.name for t in s.repartition_source_topics],
                "repartition_sink_topics": list(s.repartition_sink_topics),
                "changelog_topics": [t.name for t in s.state_changelog_topics],
            }
        )
    members = []
    for m in group.members:
        active = _tasks(m.assignment.active_tasks)
        members.append(
            {
                "member_id": m.member_id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "process_id": m.process_id,
                "member_epoch": m.member_epoch,
                "tasks": {
                    "active": active,
                    "standby": _tasks(m.assignment.standby_tasks),
                    "warmup": _tasks(m.assignment.warmup_tasks),
                },
                "member_assignment": {"assigned_partitions": _source_partitions(active, sources)},
            }
        )
    return {
        "type": "streams",
        "group_state": group.group_state,
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.assignment_epoch,
        "topology_epoch": group.topology.epoch if group.topology is not None else None,
        "subtopologies": subtopologies,
        "sources": sources,
        "members": members,
    }


def _tasks(task_ids: Any) -> list[tuple[str, int]]:
    return sorted((t.subtopology_id, p) for t in task_ids for p in t.partitions)


def _source_partitions(active: list[tuple[str, int]], sources: dict[str, list[str]]) -> list[dict[str, Any]]:
    by_topic: dict[str, set[int]] = {}
    for sid, p in active:
        for topic in sources.get(sid, []):
            by_topic.setdefault(topic, set()).add(p)
    return [{"topic": t, "partitions": sorted(ps)} for t, ps in sorted(by_topic.items())]


def task_names(tasks: list[tuple[str, int]]) -> str:
    """Kafka Streams' task ids: `1_2` is subtopology 1, partition 2."""
    return ",".join(f"{sid}_{p}" for sid, p in tasks)


# `trafka group describe --topology`: a row per subtopology.
TOPOLOGY_COLUMNS = ["group", "subtopology", "source_topics", "repartition_sink_topics", "changelog_topics"]


def topology_rows(group_id: str, described: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "group": group_id,
            "subtopology": s["subtopology"],
            "source_topics": ",".join(s["source_topics"] + s["repartition_source_topics"]),
            "repartition_sink_topics": ",".join(s["repartition_sink_topics"]),
            "changelog_topics": ",".join(s["changelog_topics"]),
            "topology_epoch": described["topology_epoch"],
        }
        for s in described["subtopologies"]
    ]


def member_tasks(member: dict[str, Any]) -> dict[str, Any]:
    """`describe --members`: a streams group member's process and its tasks by role."""
    tasks = member["tasks"]
    return {
        "process": member["process_id"],
        **{role: task_names(tasks[role]) for role in ("active", "standby", "warmup")},
    }


def streams_fields(described: dict[str, Any], member: dict[str, Any], tp: Any) -> dict[str, Any]:
    """`describe`: for a streams group's partition, the task reading it (None if no subtopology reads
    the topic), the group's and the member's epochs; {} for another kind of group."""
    if described.get("type") != "streams":
        return {}
    reading = [sid for sid, topics in described["sources"].items() if tp.topic in topics]
    return {
        "type": "streams",
        "task": task_names([(sid, tp.partition) for sid in sorted(reading)]) or None,
        "group_epoch": described.get("group_epoch"),
        "member_epoch": member.get("member_epoch"),
    }
