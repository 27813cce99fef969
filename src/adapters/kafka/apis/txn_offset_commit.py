"""TxnOffsetCommit (key 28): v0-5. Offsets committed inside a transaction. v4 only allows the
TRANSACTION_ABORTABLE error (KIP-890); v5 implies AddOffsetsToTxn under transactions V2, which trafka
does not finalize (ADR 44), so clients add the group first and v5 is served as v4.

Authorization: WRITE on the transactional id and READ on the group (a refusal answers every
partition), then READ per topic.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.producer import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)

from trafka.domain.errors import ErrorCode
from trafka.domain.groups import CommittedOffset
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition

from ..api import KafkaApi
from ..connection.cluster import one_group, refuse_unless_coordinator
from ..context import BrokerContext
from ..request_context import ClientInfo
from ..security.authorization import TXN_WRITE, Check, Checks, request_field, topic_names
from ..security.partial import (
    TOPIC_REFUSED,
    TOPICS,
    PartialAnswer,
    entry_name,
    topic_lists,
)

CommitTopic = TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic


def handle_txn_offset_commit(
    ctx: BrokerContext, request: TxnOffsetCommitRequest, version: int, client: ClientInfo
) -> TxnOffsetCommitResponse:
    offsets = {
        TopicPartition(t.name, p.partition_index): CommittedOffset(
            p.committed_offset, p.committed_leader_epoch if version >= 2 else -1, p.committed_metadata
        )
        for t in request.topics
        for p in t.partitions
    }
    fencing = ErrorCode.NONE
    if version >= 3 and request.generation_id >= 0:  # a group member's commit: its generation must be current
        fencing = ctx.groups.coordinator.validate_offset_commit(
            request.group_id, request.member_id, request.generation_id, ctx.clock_ms(), request.group_instance_id
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
        )
    return TxnOffsetCommitResponse(
        version=version,
        throttle_time_ms=0,
        topics=[
            CommitTopic(
                name=t.name,
                partitions=[
                    CommitTopic.TxnOffsetCommitResponsePartition(
                        partition_index=p.partition_index, error_code=errors[TopicPartition(t.name, p.partition_index)]
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
        partitions=[Partition(partition_index=p.partition_index, error_code=error) for p in entry.partitions],
    )


def _refusal(api: KafkaApi, request: Any, version: int, error: int) -> Any:
    """Kafka's getErrorResponse: every partition of every topic with the error."""
    return api.empty_response(version, topics=[_refused_topic(api.response, t, version, error) for t in request.topics])


API = KafkaApi(
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
    (0, 5),
    handle_txn_offset_commit,
    authorization=Checks(
        (TXN_WRITE, Check(Res.GROUP, Op.READ, request_field("group_id")), Check(Res.TOPIC, Op.READ, topic_names())),
        PartialAnswer(TOPICS, topic_lists("topics", "topics", entry_name, _refused_topic)),
    ),
    refusal=_refusal,
    read_only=False,
    cluster=refuse_unless_coordinator(one_group),
)
