"""DescribeShareGroupOffsets (key 90): v0-1, AlterShareGroupOffsets (key 91): v0,
DeleteShareGroupOffsets (key 92): v0. A share group's start offsets, as Kafka's admin client and
`kafka-share-groups.sh` read and reset them (KIP-932; v1 of Describe adds the lag, KIP-1226).

- Describe: per group the start offset of each share-partition (all of the group's when Topics is
  null) and its lag (records from the start offset to the high watermark not yet acknowledged or
  archived); -1 where the group has no state. Authorization: DESCRIBE on each group
  (GROUP_AUTHORIZATION_FAILED in its entry); topics it may not DESCRIBE are refused per partition, or
  left out of a describe-all.
- Alter: the share-partitions start again at the given offsets, nothing in flight; only while the
  group has no members (NON_EMPTY_GROUP). A group that does not exist yet is created empty.
  Authorization: READ on the group; READ on each topic (TOPIC_AUTHORIZATION_FAILED per partition).
- Delete: the share-partitions of the given topics are forgotten; the group must exist and be empty.
  Authorization: DELETE on the group; READ on each topic.

Version notes:
- DescribeShareGroupOffsets v1: each partition's Lag (KIP-1226).
- AlterShareGroupOffsets and DeleteShareGroupOffsets: v0 only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import ZERO_UUID, TopicPartition
from trafka.schema_codec.messages import (
    AlterShareGroupOffsetsRequest,
    AlterShareGroupOffsetsResponse,
    DeleteShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsResponse,
    DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsResponse,
)

from ..api import KafkaApi, top_level_error
from ..connection.cluster import groups_in, one_group, refuse_unless_coordinator
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, Filter, request_field

if TYPE_CHECKING:
    from trafka.domain.catalog import TopicCatalog

    from ..runtime.share_runtime import ShareRuntime
    from ..security.authorization import AuthorizationGate


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    authorization: AuthorizationGate | None
    share: ShareRuntime | None


DGroup = DescribeShareGroupOffsetsResponse.DescribeShareGroupOffsetsResponseGroup
DTopic = DGroup.DescribeShareGroupOffsetsResponseTopic
DPartition = DTopic.DescribeShareGroupOffsetsResponsePartition
ATopic = AlterShareGroupOffsetsResponse.AlterShareGroupOffsetsResponseTopic
APartition = ATopic.AlterShareGroupOffsetsResponsePartition
XTopic = DeleteShareGroupOffsetsResponse.DeleteShareGroupOffsetsResponseTopic
DISABLED = "Share groups are disabled."


def _allowed(ctx: Uses, client: ClientInfo, op: Op, res: Res, name: str) -> bool:
    gate = ctx.authorization
    return gate is None or gate.allowed(client, op, res, name)


def _topic_id(ctx: Uses, name: str) -> Any:
    topic = ctx.catalog.get(name)
    return topic.topic_id if topic is not None else ZERO_UUID


# -- DescribeShareGroupOffsets -------------------------------------------------------------------------


def _describe_group(ctx: Uses, client: ClientInfo, entry: Any, version: int) -> Any:
    share = ctx.share
    if share is None:
        return DGroup(
            group_id=entry.group_id, topics=[], error_code=ErrorCode.UNSUPPORTED_VERSION, error_message=DISABLED
        )
    group_id = entry.group_id
    if entry.topics is None:
        wanted: dict[str, list[int]] = {}
        for tp in sorted(share.groups.group_partitions(group_id)):
            if _allowed(ctx, client, Op.DESCRIBE, Res.TOPIC, tp.topic):
                wanted.setdefault(tp.topic, []).append(tp.partition)
        refused: set[str] = set()
    else:
        wanted = {t.topic_name: list(t.partitions) for t in entry.topics}
        refused = {n for n in wanted if not _allowed(ctx, client, Op.DESCRIBE, Res.TOPIC, n)}
    topics = []
    for name, partitions in wanted.items():
        answers = []
        for p in partitions:
            if name in refused:
                start, lag, error = -1, -1, ErrorCode.TOPIC_AUTHORIZATION_FAILED
            else:
                (start, lag), error = share.groups.start_and_lag(group_id, TopicPartition(name, p)), ErrorCode.NONE
            answers.append(
                DPartition(
                    partition_index=p, start_offset=start, leader_epoch=0, lag=lag, error_code=error, error_message=None
                )
            )
        topics.append(DTopic(topic_name=name, topic_id=_topic_id(ctx, name), partitions=answers))
    return DGroup(group_id=group_id, topics=topics, error_code=ErrorCode.NONE, error_message=None)


def handle_describe_share_group_offsets(
    ctx: Uses, request: DescribeShareGroupOffsetsRequest, version: int, client: ClientInfo
) -> DescribeShareGroupOffsetsResponse:
    groups = [_describe_group(ctx, client, g, version) for g in request.groups]
    return DescribeShareGroupOffsetsResponse(version=version, throttle_time_ms=0, groups=groups)


def _describe_filter(gate, handler, ctx, body, version, client):
    allowed = [g for g in body.groups if gate.allowed(client, Op.DESCRIBE, Res.GROUP, g.group_id)]
    refused = [g for g in body.groups if not gate.allowed(client, Op.DESCRIBE, Res.GROUP, g.group_id)]
    body.groups = allowed
    response = handler.handle(ctx, body, version, client)
    response.groups += [_refused_group(g.group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED) for g in refused]
    return response


def _refused_group(group_id: str, error: int) -> Any:
    return DGroup(group_id=group_id, topics=[], error_code=error, error_message=ErrorCode.of(error).message)


def _describe_refusal(api: KafkaApi, request: Any, version: int, error: int) -> Any:
    return api.empty_response(version, groups=[_refused_group(g.group_id, error) for g in request.groups])


DESCRIBE = KafkaApi(
    DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsResponse,
    (0, 1),
    handle_describe_share_group_offsets,
    authorization=Filter(_describe_filter),
    refusal=_describe_refusal,
    read_only=True,
    cluster=refuse_unless_coordinator(groups_in("groups")),
)


# -- AlterShareGroupOffsets ----------------------------------------------------------------------------


def handle_alter_share_group_offsets(
    ctx: Uses, request: AlterShareGroupOffsetsRequest, version: int, client: ClientInfo
) -> AlterShareGroupOffsetsResponse:
    def answer(error: ErrorCode, message: str | None = None, topics: list[Any] | None = None) -> Any:
        return AlterShareGroupOffsetsResponse(
            version=version, throttle_time_ms=0, error_code=error, error_message=message, responses=topics or []
        )

    share = ctx.share
    if share is None:
        return answer(ErrorCode.UNSUPPORTED_VERSION, DISABLED)
    offsets: dict[TopicPartition, int] = {}
    topics = []
    for t in request.topics:
        topic = ctx.catalog.get(t.topic_name)
        refused = not _allowed(ctx, client, Op.READ, Res.TOPIC, t.topic_name)
        partitions = []
        for p in t.partitions:
            error = ErrorCode.NONE
            if refused:
                error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif topic is None or not 0 <= p.partition_index < topic.partition_count:
                error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                offsets[TopicPartition(t.topic_name, p.partition_index)] = p.start_offset
            partitions.append(APartition(partition_index=p.partition_index, error_code=error, error_message=None))
        topics.append(ATopic(topic_name=t.topic_name, topic_id=_topic_id(ctx, t.topic_name), partitions=partitions))
    error = share.groups.alter_offsets(request.group_id, offsets)
    if error is not ErrorCode.NONE:
        return answer(error, error.message)
    return answer(ErrorCode.NONE, None, topics)


ALTER = KafkaApi(
    AlterShareGroupOffsetsRequest,
    AlterShareGroupOffsetsResponse,
    (0, 0),
    handle_alter_share_group_offsets,
    authorization=Checks((Check(Res.GROUP, Op.READ, request_field("group_id")),)),
    refusal=top_level_error,
    read_only=False,
    cluster=refuse_unless_coordinator(one_group),
)


# -- DeleteShareGroupOffsets ---------------------------------------------------------------------------


def handle_delete_share_group_offsets(
    ctx: Uses, request: DeleteShareGroupOffsetsRequest, version: int, client: ClientInfo
) -> DeleteShareGroupOffsetsResponse:
    def answer(error: ErrorCode, message: str | None = None, topics: list[Any] | None = None) -> Any:
        return DeleteShareGroupOffsetsResponse(
            version=version, throttle_time_ms=0, error_code=error, error_message=message, responses=topics or []
        )

    share = ctx.share
    if share is None:
        return answer(ErrorCode.UNSUPPORTED_VERSION, DISABLED)
    names, topics = [], []
    for t in request.topics:
        error = ErrorCode.NONE
        if not _allowed(ctx, client, Op.READ, Res.TOPIC, t.topic_name):
            error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        elif ctx.catalog.get(t.topic_name) is None:
            error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        else:
            names.append(t.topic_name)
        topics.append(
            XTopic(topic_name=t.topic_name, topic_id=_topic_id(ctx, t.topic_name), error_code=error, error_message=None)
        )
    error = share.groups.delete_offsets(request.group_id, names)
    if error is not ErrorCode.NONE:
        return answer(error, error.message)
    return answer(ErrorCode.NONE, None, topics)


DELETE = KafkaApi(
    DeleteShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsResponse,
    (0, 0),
    handle_delete_share_group_offsets,
    authorization=Checks((Check(Res.GROUP, Op.DELETE, request_field("group_id")),)),
    refusal=top_level_error,
    read_only=False,
    cluster=refuse_unless_coordinator(one_group),
)

APIS = (DESCRIBE, ALTER, DELETE)
