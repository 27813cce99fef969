"""Share groups (KIP-932) from the operator commands, as `kafka-share-groups.sh` sees them:
ShareGroupDescribe (members, epochs, assignments), DescribeShareGroupOffsets v1 (each share-partition's
start offset and lag) and AlterShareGroupOffsets (a reset), each sent to the group's coordinator (ADR 101)."""

from __future__ import annotations

from typing import Any

from trafka.schema_codec.messages import compiled

from .consumer_groups import modern_group


def describe_share_group(admin: Any, group_id: str) -> dict[str, Any] | None:
    """The group as `describe` prints it (members shaped as DescribeGroups' are) with `share_offsets`:
    {TopicPartition: (start offset, lag)} for every share-partition it has state for; None if the id
    is no share group."""
    from .admin import TopicPartition

    answer = admin.to_coordinator(
        group_id, "ShareGroupDescribe", group_ids=[group_id], include_authorized_operations=False
    )
    (group,) = answer.groups
    if group.error_code:
        return None
    Group = compiled("DescribeShareGroupOffsetsRequest").DescribeShareGroupOffsetsRequestGroup
    offsets = admin.to_coordinator(
        group_id, "DescribeShareGroupOffsets", groups=[Group(group_id=group_id, topics=None)]
    )
    share_offsets = {}
    for described in offsets.groups:
        for topic in described.topics:
            for p in topic.partitions:
                if not p.error_code:
                    share_offsets[TopicPartition(topic.topic_name, p.partition_index)] = (p.start_offset, p.lag)

    return {**modern_group(group, "share"), "share_offsets": share_offsets}


def alter_share_group_offsets(admin: Any, group_id: str, offsets: dict[Any, int]) -> dict[Any, int]:
    """AlterShareGroupOffsets: the share-partitions start again at `offsets` ({TopicPartition: offset});
    the error code of each (the group's own error for all of them if it has one)."""
    from .admin import TopicPartition

    Topic = compiled("AlterShareGroupOffsetsRequest").AlterShareGroupOffsetsRequestTopic
    Partition = Topic.AlterShareGroupOffsetsRequestPartition
    by_topic: dict[str, list[Any]] = {}
    for tp, offset in sorted(offsets.items()):
        by_topic.setdefault(tp.topic, []).append(Partition(partition_index=tp.partition, start_offset=offset))
    response = admin.to_coordinator(
        group_id,
        "AlterShareGroupOffsets",
        group_id=group_id,
        topics=[Topic(topic_name=t, partitions=ps) for t, ps in by_topic.items()],
    )
    if response.error_code:
        return dict.fromkeys(offsets, response.error_code)
    return {
        TopicPartition(topic.topic_name, p.partition_index): p.error_code
        for topic in response.responses
        for p in topic.partitions
    }
