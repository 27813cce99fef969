"""OffsetCommit (key 8): v2-10. A group's offsets, durable in `__consumer_offsets`. v10 names topics by
id (KIP-848): each is resolved to its name first, as Kafka's KafkaApis does, and an unknown id answers
its partitions UNKNOWN_TOPIC_ID; the response names them by id.

Authorization: READ on the group (a refusal answers every partition), then READ per topic.

Version notes:
(v0-1 are not served)
- v2: RetentionTimeMs; v3: throttle time; v4: the response is sent before the client is throttled.
- v5: no RetentionTimeMs (the broker's offsets.retention.minutes); v6: CommittedLeaderEpoch.
- v7: GroupInstanceId; v8: flexible versions.
- v9: consumer groups' members (KIP-848): STALE_MEMBER_EPOCH, GROUP_ID_NOT_FOUND.
- v10: topics by id (UNKNOWN_TOPIC_ID, KIP-848).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.groups import CommitRequest, CommittedOffset
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import (
    OffsetCommitRequest,
    OffsetCommitResponse,
)

from ..api import KafkaApi
from ..connection.cluster import one_group, refuse_unless_coordinator
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, request_field
from ..security.partial import (
    TOPIC_REFUSED,
    TOPICS,
    PartialAnswer,
    topic_lists,
)

if TYPE_CHECKING:
    from trafka.domain.catalog import TopicCatalog

    from ..internal_topics import InternalTopics
    from ..runtime.group_runtime import GroupRuntime


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    groups: GroupRuntime
    internal_topics: InternalTopics


CommitTopic = OffsetCommitResponse.OffsetCommitResponseTopic


CommitPartition = CommitTopic.OffsetCommitResponsePartition


TOPIC_IDS_FROM = 10


def resolve_topic_ids(ctx: Uses, topics: Any, version: int) -> None:
    """From v10, set each request topic's name from its id (left empty for an unknown id), as Kafka's
    KafkaApis does before anything else reads the request."""
    if version < TOPIC_IDS_FROM:
        return
    for topic in topics or ():
        if not topic.name:
            found = ctx.catalog.by_id(topic.topic_id) or ctx.internal_topics.by_id(topic.topic_id)
            topic.name = found.name if found is not None else ""


def _topic_names(request: Any, version: int, ctx: Any) -> list[str]:
    resolve_topic_ids(ctx, request.topics, version)
    return [topic.name for topic in request.topics if topic.name]


def _entry_name(entry: Any, version: int, ctx: Any) -> str | None:
    return str(entry.name) if entry.name else None


def handle_offset_commit(
    ctx: Uses, request: OffsetCommitRequest, version: int, client: ClientInfo
) -> OffsetCommitResponse:
    resolve_topic_ids(ctx, request.topics, version)
    offsets = tuple(
        (
            TopicPartition(topic.name, p.partition_index),
            CommittedOffset(
                p.committed_offset,
                p.committed_leader_epoch if version >= 6 else -1,
                p.committed_metadata,
                topic_id=topic.topic_id if version >= TOPIC_IDS_FROM else None,  # Kafka records it (v4 value)
            ),
        )
        for topic in request.topics
        if topic.name
        for p in topic.partitions
    )
    commit = CommitRequest(
        group_id=request.group_id,
        member_id=request.member_id,
        generation_id=request.generation_id_or_member_epoch,
        group_instance_id=request.group_instance_id if version >= 7 else None,
        offsets=offsets,
        internal=_internal_partitions(ctx, offsets),
    )
    results = ctx.groups.commit(commit, version)
    ctx.groups.touched()
    return OffsetCommitResponse(
        version=version,
        throttle_time_ms=0,
        topics=[
            CommitTopic(
                name=topic.name,
                topic_id=topic.topic_id if version >= TOPIC_IDS_FROM else None,
                partitions=[
                    CommitPartition(
                        partition_index=p.partition_index,
                        error_code=results[TopicPartition(topic.name, p.partition_index)]
                        if topic.name
                        else ErrorCode.UNKNOWN_TOPIC_ID,
                    )
                    for p in topic.partitions
                ],
            )
            for topic in request.topics
        ],
    )


def _internal_partitions(ctx: Uses, offsets: Any) -> frozenset[TopicPartition]:
    """The partitions of internal topics that exist among `offsets`: Kafka commits to them as to any
    partition in its metadata (ADR 108)."""
    internal = set()
    for tp, _ in offsets:
        topic = ctx.internal_topics.get(tp.topic) if tp.topic.startswith("__") else None
        if topic is not None and 0 <= tp.partition < topic.partition_count:
            internal.add(tp)
    return frozenset(internal)


def _refused_topic(Response: Any, entry: Any, version: int, error: int = TOPIC_REFUSED) -> Any:
    """The topic's entry of the response, every partition answered with `error` (nothing committed)."""
    Topic = Response.OffsetCommitResponseTopic
    Partition = Topic.OffsetCommitResponsePartition
    return Topic(
        name=entry.name,
        topic_id=entry.topic_id if version >= TOPIC_IDS_FROM else None,
        partitions=[Partition(partition_index=p.partition_index, error_code=error) for p in entry.partitions],
    )


def _refusal(api: KafkaApi, request: Any, version: int, error: int) -> Any:
    """Kafka's getErrorResponse: every partition of every topic with the error."""
    return api.empty_response(version, topics=[_refused_topic(api.response, t, version, error) for t in request.topics])


API = KafkaApi(
    OffsetCommitRequest,
    OffsetCommitResponse,
    (2, 10),
    handle_offset_commit,
    authorization=Checks(
        (Check(Res.GROUP, Op.READ, request_field("group_id")), Check(Res.TOPIC, Op.READ, _topic_names)),
        PartialAnswer(TOPICS, topic_lists("topics", "topics", _entry_name, _refused_topic)),
    ),
    refusal=_refusal,
    read_only=False,
    cluster=refuse_unless_coordinator(one_group),
)
