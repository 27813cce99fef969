"""TxnOffsetCommit (key 28): v0-6. Offsets committed inside a transaction. v4 only allows the
TRANSACTION_ABORTABLE error (KIP-890); v5 is transactions V2 (ADR 75): the group joins the producer's
transaction itself (starting one if none is ongoing), where before v5 AddOffsetsToTxn must have added it.
v6 (Kafka 4.4, KIP-1319) names topics by id: each is resolved to its name first, as OffsetCommit v10,
an unknown id answering its partitions UNKNOWN_TOPIC_ID; the response names topics by id.

Authorization: WRITE on the transactional id and READ on the group (a refusal answers every
partition), then READ per topic.

Version notes:
- v1: the response is sent before the client is throttled.
- v2: CommittedLeaderEpoch.
- v3: MemberId, GroupInstanceId and GenerationId (KIP-447).
- v4: TRANSACTION_ABORTABLE; v5: the implicit AddOffsetsToTxn of transaction version 2 (KIP-890).
- v6: topics by id, GROUP_ID_NOT_FOUND and STALE_MEMBER_EPOCH (KIP-1319).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.groups import CommittedOffset
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import TxnOffsetCommitRequest, TxnOffsetCommitResponse

from ..api import KafkaApi
from ..connection.cluster import one_group, refuse_unless_coordinator
from ..request_context import ClientInfo
from ..security.authorization import TXN_WRITE, Check, Checks, request_field
from ..security.partial import (
    TOPIC_REFUSED,
    TOPICS,
    PartialAnswer,
    topic_lists,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from trafka.domain.catalog import TopicCatalog
    from trafka.domain.transactions import TransactionService

    from ..runtime.group_runtime import GroupRuntime


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    groups: GroupRuntime
    transactions: TransactionService
    clock_ms: Callable[[], int]


CommitTopic = TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic

TOPIC_IDS_FROM = 6


def resolve_topic_ids(ctx: Uses, topics: Any, version: int) -> None:
    """From v6, set each request topic's name from its id (left empty for an unknown id)."""
    if version < TOPIC_IDS_FROM:
        return
    for topic in topics or ():
        if not topic.name:
            found = ctx.catalog.by_id(topic.topic_id)
            topic.name = found.name if found is not None else ""


def _topic_names(request: Any, version: int, ctx: Any) -> list[str]:
    resolve_topic_ids(ctx, request.topics, version)
    return [topic.name for topic in request.topics if topic.name]


def _entry_name(entry: Any, version: int, ctx: Any) -> str | None:
    return str(entry.name) if entry.name else None


def handle_txn_offset_commit(
    ctx: Uses, request: TxnOffsetCommitRequest, version: int, client: ClientInfo
) -> TxnOffsetCommitResponse:
    resolve_topic_ids(ctx, request.topics, version)
    offsets = {
        TopicPartition(t.name, p.partition_index): CommittedOffset(
            p.committed_offset, p.committed_leader_epoch if version >= 2 else -1, p.committed_metadata
        )
        for t in request.topics
        if t.name
        for p in t.partitions
    }
    # a group member's commit (v3+ names it): its generation, or its member epoch in a KIP-848 group, must
    # be current; a consumer group's was checked against the classic groups, which did not know it
    named = version >= 3
    fencing = ctx.groups.txn_commit_fencing(
        request.group_id,
        request.member_id if named else "",
        request.generation_id if named else -1,
        request.group_instance_id if named else None,
        ctx.clock_ms(),
    )
    errors: dict[TopicPartition, ErrorCode]
    if fencing is not ErrorCode.NONE:
        errors = dict.fromkeys(offsets, fencing)
    else:
        errors = ctx.transactions.txn_offset_commit(
            request.transactional_id,
            request.group_id,
            request.producer_id,
            request.producer_epoch,
            offsets,
            ctx.clock_ms(),
            add=version >= 5,
        )
    return TxnOffsetCommitResponse(
        version=version,
        throttle_time_ms=0,
        topics=[
            CommitTopic(
                name=t.name,
                topic_id=t.topic_id if version >= TOPIC_IDS_FROM else None,
                partitions=[
                    CommitTopic.TxnOffsetCommitResponsePartition(
                        partition_index=p.partition_index,
                        error_code=errors[TopicPartition(t.name, p.partition_index)]
                        if t.name
                        else ErrorCode.UNKNOWN_TOPIC_ID,
                    )
                    for p in t.partitions
                ],
            )
            for t in request.topics
        ],
    )


def _refused_topic(Response: Any, entry: Any, version: int, error: int = TOPIC_REFUSED) -> Any:
    """The topic's entry of the response, every partition answered with `error` (nothing committed)."""
    Topic = Response.TxnOffsetCommitResponseTopic
    Partition = Topic.TxnOffsetCommitResponsePartition
    return Topic(
        name=entry.name,
        topic_id=entry.topic_id if version >= TOPIC_IDS_FROM else None,
        partitions=[Partition(partition_index=p.partition_index, error_code=error) for p in entry.partitions],
    )


def _refusal(api: KafkaApi, request: Any, version: int, error: int) -> Any:
    """Kafka's getErrorResponse: every partition of every topic with the error."""
    return api.empty_response(version, topics=[_refused_topic(api.response, t, version, error) for t in request.topics])


API = KafkaApi(
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
    (0, 6),
    handle_txn_offset_commit,
    authorization=Checks(
        (TXN_WRITE, Check(Res.GROUP, Op.READ, request_field("group_id")), Check(Res.TOPIC, Op.READ, _topic_names)),
        PartialAnswer(TOPICS, topic_lists("topics", "topics", _entry_name, _refused_topic)),
    ),
    refusal=_refusal,
    read_only=False,
    cluster=refuse_unless_coordinator(one_group),
)
