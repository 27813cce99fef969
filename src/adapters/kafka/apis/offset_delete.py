"""OffsetDelete (key 47): v0. A group's committed offsets of partitions it no longer consumes.

Authorization: DELETE on the group, then READ per topic.

Version notes:
- v0 only (KIP-496).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import (
    OffsetDeleteRequest,
    OffsetDeleteResponse,
)

from ..api import KafkaApi, top_level_error
from ..connection.cluster import one_group, refuse_unless_coordinator
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, request_field, topic_names
from ..security.partial import (
    TOPIC_REFUSED,
    TOPICS,
    PartialAnswer,
    Refused,
    merged,
)

if TYPE_CHECKING:
    from ..runtime.group_runtime import GroupRuntime


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    groups: GroupRuntime


def handle_offset_delete(
    ctx: Uses, request: OffsetDeleteRequest, version: int, client: ClientInfo
) -> OffsetDeleteResponse:
    partitions = [TopicPartition(t.name, p.partition_index) for t in request.topics for p in t.partitions]
    error, results = ctx.groups.offsets.delete(request.group_id, partitions)
    Topic = OffsetDeleteResponse.OffsetDeleteResponseTopic
    return OffsetDeleteResponse(
        version=version,
        error_code=error,
        throttle_time_ms=0,
        topics=[]
        if error is not ErrorCode.NONE
        else [
            Topic(
                name=t.name,
                partitions=[
                    Topic.OffsetDeleteResponsePartition(
                        partition_index=p.partition_index,
                        error_code=results[TopicPartition(t.name, p.partition_index)],
                    )
                    for p in t.partitions
                ],
            )
            for t in request.topics
        ],
    )


def _partial(r: Refused) -> Any:
    Topic = r.handler.response.OffsetDeleteResponseTopic
    Partition = Topic.OffsetDeleteResponsePartition
    denied = r.topics()
    kept = [t for t in r.body.topics if t.name not in denied]
    extra = [
        Topic(
            name=t.name,
            partitions=[Partition(partition_index=p.partition_index, error_code=TOPIC_REFUSED) for p in t.partitions],
        )
        for t in r.body.topics
        if t.name in denied
    ]
    if not kept:
        return r.response(error_code=ErrorCode.NONE, topics=extra)
    return merged(r.serve(topics=kept), lambda response: response.topics.extend(extra))


API = KafkaApi(
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    (0, 0),
    handle_offset_delete,
    authorization=Checks(
        (Check(Res.GROUP, Op.DELETE, request_field("group_id")), Check(Res.TOPIC, Op.READ, topic_names())),
        PartialAnswer(TOPICS, _partial),
    ),
    refusal=top_level_error,
    read_only=False,
    cluster=refuse_unless_coordinator(one_group),
)
