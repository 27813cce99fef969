"""Share groups (KIP-932) from the operator commands, as `kafka-share-groups.sh` sees them:
ShareGroupDescribe (members, epochs, assignments), DescribeShareGroupOffsets v1 (each share-partition's
start offset and lag) and AlterShareGroupOffsets (a reset). kafka-python's admin client has no call for
them, so the messages are declared from Kafka's JSON schemas (in `trafka.kafka_schemas`, ADR 35) and sent to
the group's coordinator through the admin client's connection manager, as `consumer_groups.py` does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka.protocol.api_message import ApiMessage

import trafka.kafka_schemas as schemas

from .consumer_groups import modern_group

if TYPE_CHECKING:

    class _Message(ApiMessage):
        def __init_subclass__(cls, *, load_json: Any = None, **kwargs: Any) -> None: ...
else:
    _Message = ApiMessage


class ShareGroupDescribeRequest(_Message, load_json=schemas):
    pass


class ShareGroupDescribeResponse(_Message, load_json=schemas):
    pass


class DescribeShareGroupOffsetsRequest(_Message, load_json=schemas):
    pass


class DescribeShareGroupOffsetsResponse(_Message, load_json=schemas):
    pass


class AlterShareGroupOffsetsRequest(_Message, load_json=schemas):
    pass


class AlterShareGroupOffsetsResponse(_Message, load_json=schemas):
    pass


def _send(admin: Any, group_id: str, request: Any) -> Any:
    async def call() -> Any:
        node = await admin._find_coordinator_id(group_id)
        return await admin._manager.send(request, node_id=node)

    return admin._manager.run(call)


def describe_share_group(admin: Any, group_id: str) -> dict[str, Any] | None:
    """The group as `describe` prints it (members shaped as DescribeGroups' are) with `share_offsets`:
    {TopicPartition: (start offset, lag)} for every share-partition it has state for; None if the id
    is no share group."""
    from kafka import TopicPartition

    request = ShareGroupDescribeRequest(group_ids=[group_id], include_authorized_operations=False)
    (group,) = _send(admin, group_id, request).groups
    if group.error_code:
        return None
    Group = DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup
    offsets = _send(admin, group_id, DescribeShareGroupOffsetsRequest(groups=[Group(group_id=group_id, topics=None)]))
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
    from kafka import TopicPartition

    Topic = AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestTopic
    Partition = Topic.AlterShareGroupOffsetsRequestPartition
    by_topic: dict[str, list[Any]] = {}
    for tp, offset in sorted(offsets.items()):
        by_topic.setdefault(tp.topic, []).append(Partition(partition_index=tp.partition, start_offset=offset))
    request = AlterShareGroupOffsetsRequest(
        group_id=group_id, topics=[Topic(topic_name=t, partitions=ps) for t, ps in by_topic.items()]
    )
    response = _send(admin, group_id, request)
    if response.error_code:
        return dict.fromkeys(offsets, response.error_code)
    return {
        TopicPartition(topic.topic_name, p.partition_index): p.error_code
        for topic in response.responses
        for p in topic.partitions
    }
