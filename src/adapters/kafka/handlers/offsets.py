"""OffsetCommit, OffsetFetch and OffsetDelete.

OffsetFetch returns offset -1 and empty metadata for a partition with no commit, and metadata exactly
as it was committed otherwise. From v8 one request may ask for several groups.
"""

from __future__ import annotations

from kafka.protocol.consumer import (
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
)

from trafka.domain.errors import ErrorCode
from trafka.domain.groups import CommitRequest, CommittedOffset
from trafka.domain.topics import TopicPartition

from ..api import HandlerRegistry
from ..context import BrokerContext, ClientInfo

CommitTopic = OffsetCommitResponse.OffsetCommitResponseTopic
CommitPartition = CommitTopic.OffsetCommitResponsePartition


def handle_offset_commit(
    ctx: BrokerContext, request: OffsetCommitRequest, version: int, client: ClientInfo
) -> OffsetCommitResponse:
    offsets = tuple(
        (
            TopicPartition(topic.name, p.partition_index),
            CommittedOffset(p.committed_offset, p.committed_leader_epoch if version >= 6 else -1, p.committed_metadata),
        )
        for topic in request.topics
        for p in topic.partitions
    )
    commit = CommitRequest(
        group_id=request.group_id,
        member_id=request.member_id,
        generation_id=request.generation_id_or_member_epoch,
        group_instance_id=request.group_instance_id if version >= 7 else None,
        offsets=offsets,
    )
    results = ctx.groups.offsets.commit(commit, ctx.clock_ms())
    ctx.groups.touched()
    return OffsetCommitResponse(
        version=version,
        throttle_time_ms=0,
        topics=[
            CommitTopic(
                name=topic.name,
                partitions=[
                    CommitPartition(
                        partition_index=p.partition_index,
                        error_code=results[TopicPartition(topic.name, p.partition_index)],
                    )
                    for p in topic.partitions
                ],
            )
            for topic in request.topics
        ],
    )


def _fetched(
    ctx: BrokerContext, group_id: str, topics, require_stable: bool = False
) -> dict[str, list[tuple[int, CommittedOffset | None, ErrorCode]]]:
    """Committed offsets by topic for one group; `topics` None means every committed partition."""
    wanted = None
    if topics is not None:
        wanted = [TopicPartition(t.name, p) for t in topics for p in t.partition_indexes]
    by_topic: dict[str, list[tuple[int, CommittedOffset | None, ErrorCode]]] = {}
    for tp, committed in sorted(ctx.groups.offsets.fetch(group_id, wanted).items()):
        # require_stable (v7+): a transaction still deciding this offset makes it UNSTABLE_OFFSET_COMMIT.
        unstable = require_stable and ctx.groups.offsets.has_pending(group_id, tp)
        by_topic.setdefault(tp.topic, []).append(
            (tp.partition, committed, ErrorCode.UNSTABLE_OFFSET_COMMIT if unstable else ErrorCode.NONE)
        )
    if topics is not None:  # keep the requested order, including topics with no partitions
        return {t.name: by_topic.get(t.name, []) for t in topics}
    return by_topic


def handle_offset_fetch(
    ctx: BrokerContext, request: OffsetFetchRequest, version: int, client: ClientInfo
) -> OffsetFetchResponse:
    if version >= 8:
        Group = OffsetFetchResponse.OffsetFetchResponseGroup
        Topic = Group.OffsetFetchResponseTopics
        Partition = Topic.OffsetFetchResponsePartitions
        groups = []
        for group in request.groups:
            fetched = _fetched(ctx, group.group_id, group.topics, request.require_stable)
            groups.append(
                Group(
                    group_id=group.group_id,
                    error_code=ErrorCode.NONE,
                    topics=[
                        Topic(name=name, partitions=[_partition(Partition, p, c, e) for p, c, e in parts])
                        for name, parts in fetched.items()
                    ],
                )
            )
        return OffsetFetchResponse(version=version, throttle_time_ms=0, groups=groups)
    Topic = OffsetFetchResponse.OffsetFetchResponseTopic
    Partition = Topic.OffsetFetchResponsePartition
    topics = request.topics if version >= 2 else (request.topics or [])
    fetched = _fetched(ctx, request.group_id, topics, version >= 7 and request.require_stable)
    return OffsetFetchResponse(
        version=version,
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        topics=[
            Topic(name=name, partitions=[_partition(Partition, p, c, e) for p, c, e in parts])
            for name, parts in fetched.items()
        ],
    )


def _partition(cls, partition: int, committed: CommittedOffset | None, error: ErrorCode = ErrorCode.NONE):
    if committed is None or error is not ErrorCode.NONE:
        return cls(
            partition_index=partition, committed_offset=-1, committed_leader_epoch=-1, metadata="", error_code=error
        )
    return cls(
        partition_index=partition,
        committed_offset=committed.offset,
        committed_leader_epoch=committed.leader_epoch,
        metadata=committed.metadata,
        error_code=ErrorCode.NONE,
    )


def handle_offset_delete(
    ctx: BrokerContext, request: OffsetDeleteRequest, version: int, client: ClientInfo
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


def register(registry: HandlerRegistry) -> None:
    registry.register(OffsetCommitRequest, OffsetCommitResponse, (2, 9), handle_offset_commit)
    registry.register(OffsetFetchRequest, OffsetFetchResponse, (1, 9), handle_offset_fetch)
    registry.register(OffsetDeleteRequest, OffsetDeleteResponse, (0, 0), handle_offset_delete)
