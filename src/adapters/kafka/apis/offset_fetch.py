"""OffsetFetch (key 9): v1-10. A group's committed offsets (v8+: several groups). v10 names topics by id
(KIP-848): asked topics are resolved to their names first, as Kafka's KafkaApis does, an unknown id
answering its partitions UNKNOWN_TOPIC_ID; the response names topics by id (asked for all of them, a
committed topic that no longer exists has no id to be named by and is left out).

Authorization filters: per group (v8+) DESCRIBE, and per topic: asked for all topics, the ones the
principal may not DESCRIBE are left out; asked by name, they answer TOPIC_AUTHORIZATION_FAILED.

Version notes:
(v0 is not served)
- v2: a null topic list means all topics, a top-level ErrorCode; v3: throttle time.
- v4: the response is sent before the client is throttled; v5: CommittedLeaderEpoch.
- v6: flexible versions; v7: RequireStable (UNSTABLE_OFFSET_COMMIT).
- v8: several groups per request.
- v9: MemberId and MemberEpoch, checked for consumer groups (KIP-848).
- v10: topics by id (UNKNOWN_TOPIC_ID, KIP-848).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.groups import CommittedOffset
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import (
    OffsetFetchRequest,
    OffsetFetchResponse,
)

from ..api import KafkaApi, top_level_error
from ..connection.cluster import groups_in, refuse_unless_coordinator
from ..request_context import ClientInfo
from ..security.authorization import Filter
from ..security.partial import (
    merged,
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


def _fetched(
    ctx: Uses, group_id: str, topics, require_stable: bool = False
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


def _by_id(ctx: Uses, group, fetched: dict[str, list], Topic, Partition) -> list:
    """v10's answer for one group: topics by id, an unknown asked id UNKNOWN_TOPIC_ID."""
    answered = []
    if group.topics is not None:
        for asked in group.topics:
            if not asked.name:
                answered.append(
                    Topic(
                        topic_id=asked.topic_id,
                        partitions=[
                            _partition(Partition, p, None, ErrorCode.UNKNOWN_TOPIC_ID) for p in asked.partition_indexes
                        ],
                    )
                )
                continue
            parts = fetched.get(asked.name, [])
            answered.append(
                Topic(
                    name=asked.name,
                    topic_id=asked.topic_id,
                    partitions=[_partition(Partition, p, c, e) for p, c, e in parts],
                )
            )
        return answered
    for name, parts in fetched.items():
        topic = ctx.catalog.get(name) or ctx.internal_topics.get(name)
        if topic is not None:
            answered.append(
                Topic(
                    name=name,
                    topic_id=topic.topic_id,
                    partitions=[_partition(Partition, p, c, e) for p, c, e in parts],
                )
            )
    return answered


def resolve_topic_ids(ctx: Uses, request: OffsetFetchRequest, version: int) -> None:
    """From v10, set each asked topic's name from its id (left empty for an unknown id)."""
    if version < TOPIC_IDS_FROM:
        return
    for group in request.groups:
        for topic in group.topics or ():
            if not topic.name:
                found = ctx.catalog.by_id(topic.topic_id) or ctx.internal_topics.by_id(topic.topic_id)
                topic.name = found.name if found is not None else ""


TOPIC_IDS_FROM = 10


def handle_offset_fetch(
    ctx: Uses, request: OffsetFetchRequest, version: int, client: ClientInfo
) -> OffsetFetchResponse:
    if version >= 8:
        resolve_topic_ids(ctx, request, version)
        Group = OffsetFetchResponse.OffsetFetchResponseGroup
        Topic = Group.OffsetFetchResponseTopics
        Partition = Topic.OffsetFetchResponsePartitions
        groups = []
        for group in request.groups:
            if version >= 9:  # a consumer group's member fetches at its member epoch (KIP-848)
                error = ctx.groups.offset_fetch_error(group.group_id, group.member_id, group.member_epoch)
                if error is not ErrorCode.NONE:
                    groups.append(Group(group_id=group.group_id, error_code=error, topics=[]))
                    continue
            asked = group.topics
            if asked is not None and version >= TOPIC_IDS_FROM:
                asked = [t for t in asked if t.name]  # the unknown ids are answered UNKNOWN_TOPIC_ID
            fetched = _fetched(ctx, group.group_id, asked, request.require_stable)
            if version >= TOPIC_IDS_FROM:
                topics = _by_id(ctx, group, fetched, Topic, Partition)
            else:
                topics = [
                    Topic(name=name, partitions=[_partition(Partition, p, c, e) for p, c, e in parts])
                    for name, parts in fetched.items()
                ]
            groups.append(Group(group_id=group.group_id, error_code=ErrorCode.NONE, topics=topics))
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


def _filter(gate, handler, ctx, body, version, client):
    """Per group (v8+) and per topic; asked for all topics, the ones it may not DESCRIBE are left out."""

    def group_allowed(group_id: str) -> bool:
        return gate.allowed(client, Op.DESCRIBE, Res.GROUP, group_id)

    def topic_allowed(name: str) -> bool:
        return gate.allowed(client, Op.DESCRIBE, Res.TOPIC, name)

    Response = handler.response
    if version < 8:
        if not group_allowed(body.group_id):
            return _offset_fetch_group_refused(handler, body, version)
        Topic = Response.OffsetFetchResponseTopic
        refused = _without_refused_topics(body, topic_allowed)
        return merged(
            handler.handle(ctx, body, version, client),
            lambda response: _offset_fetch_topics(
                response, Topic, Topic.OffsetFetchResponsePartition, refused, topic_allowed
            ),
        )
    Group = Response.OffsetFetchResponseGroup
    Topics = Group.OffsetFetchResponseTopics
    resolve_topic_ids(handler.uses(ctx), body, version)  # its declared services (ADR 103)
    asked = list(body.groups)
    body.groups = [g for g in asked if group_allowed(g.group_id)]
    refused_by_group = [_without_refused_topics(g, topic_allowed) for g in body.groups]

    def complete(response) -> None:
        served = iter(zip(response.groups, refused_by_group))
        groups = []
        for g in asked:
            if not group_allowed(g.group_id):
                groups.append(Group(group_id=g.group_id, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, topics=[]))
                continue
            group, refused = next(served)
            _offset_fetch_topics(group, Topics, Topics.OffsetFetchResponsePartitions, refused, topic_allowed)
            groups.append(group)
        response.groups = groups

    return merged(handler.handle(ctx, body, version, client), complete)


def _without_refused_topics(request, allowed: Callable[[str], bool]) -> list | None:
    """Drop the topics the principal may not DESCRIBE from a (group's) request; None asks for all of them."""
    if request.topics is None:
        return None
    refused = [t for t in request.topics if t.name and not allowed(t.name)]  # an unknown id is answered as such
    request.topics = [t for t in request.topics if t not in refused]
    return refused


def _offset_fetch_topics(answer, Topic, Partition, refused: list | None, allowed: Callable[[str], bool]) -> None:
    """The refused topics added with TOPIC_AUTHORIZATION_FAILED or, for an all-topics fetch, the
    undescribable ones left out, as Kafka does when the group was answered without an error."""
    if getattr(answer, "error_code", None):
        return
    if refused is None:
        answer.topics = [t for t in answer.topics if allowed(t.name)]
        return
    answer.topics.extend(
        Topic(
            name=t.name,
            **({"topic_id": t.topic_id} if "topic_id" in Topic.fields else {}),
            partitions=[
                Partition(
                    partition_index=p,
                    committed_offset=-1,
                    committed_leader_epoch=-1,
                    metadata="",
                    error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                )
                for p in t.partition_indexes
            ],
        )
        for t in refused
    )


def _offset_fetch_group_refused(handler, body, version):
    """Kafka's OffsetFetch error response before v8: the error per partition (v1) or at the top (v2+)."""
    Topic = handler.response.OffsetFetchResponseTopic
    Partition = Topic.OffsetFetchResponsePartition
    error = ErrorCode.GROUP_AUTHORIZATION_FAILED
    topics = (
        []
        if version >= 2
        else [
            Topic(
                name=t.name,
                partitions=[
                    Partition(
                        partition_index=p, committed_offset=-1, committed_leader_epoch=-1, metadata="", error_code=error
                    )
                    for p in t.partition_indexes
                ],
            )
            for t in body.topics or ()
        ]
    )
    return handler.response(version=version, throttle_time_ms=0, error_code=error, topics=topics)


API = KafkaApi(
    OffsetFetchRequest,
    OffsetFetchResponse,
    (1, 10),
    handle_offset_fetch,
    authorization=Filter(_filter),
    refusal=top_level_error,
    read_only=True,
    cluster=refuse_unless_coordinator(groups_in("groups")),
)
