"""ConsumerGroupDescribe (key 69) from the operator commands: a KIP-848 consumer group's epochs,
assignor and each member's current and target assignment, sent to the group's coordinator (ADR 101)."""

from __future__ import annotations

from typing import Any


def describe_consumer_group(admin: Any, group_id: str) -> dict[str, Any] | None:
    """The group as `describe` prints it (members shaped as DescribeGroups' are), or None if it is none."""

    answer = admin.to_coordinator(
        group_id, "ConsumerGroupDescribe", group_ids=[group_id], include_authorized_operations=False
    )
    (group,) = answer.groups
    if group.error_code:
        return None

    described = modern_group(group, "consumer")
    for member, m in zip(described["members"], group.members, strict=True):
        member["target"] = {(tp.topic_name, p) for tp in m.target_assignment.topic_partitions for p in tp.partitions}
    return described


def modern_group(group: Any, kind: str) -> dict[str, Any]:
    """A ConsumerGroupDescribe or ShareGroupDescribe group, as `trafka group describe` and the console
    read it: its epochs, assignor and members with what each is assigned."""

    def partitions(assignment: Any) -> list[dict[str, Any]]:
        return [{"topic": tp.topic_name, "partitions": list(tp.partitions)} for tp in assignment.topic_partitions]

    return {
        "type": kind,
        "group_state": group.group_state,
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.assignment_epoch,
        "assignor": group.assignor_name,
        "members": [
            {
                "member_id": m.member_id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "member_epoch": m.member_epoch,
                "member_assignment": {"assigned_partitions": partitions(m.assignment)},
            }
            for m in group.members
        ],
    }
