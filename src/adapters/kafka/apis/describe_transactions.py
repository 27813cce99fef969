"""DescribeTransactions (key 65): v0. Transactional ids' state, producer, timeout and partitions.

Authorization filters: a transactional id the principal may not DESCRIBE is answered
TRANSACTIONAL_ID_AUTHORIZATION_FAILED; its partitions leave out topics it may not DESCRIBE.

Version notes:
- v0 only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import (
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
)

from ..api import KafkaApi, top_level_error
from ..request_context import ClientInfo
from ..security.authorization import Filter
from ..security.partial import (
    merged,
)

if TYPE_CHECKING:
    from trafka.domain.transactions import TransactionService


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    transactions: TransactionService


TxnState = DescribeTransactionsResponse.TransactionState


def handle_describe_transactions(
    ctx: Uses, request: DescribeTransactionsRequest, version: int, client: ClientInfo
) -> DescribeTransactionsResponse:
    states = []
    for txn_id in request.transactional_ids:
        txn = ctx.transactions.coordinator.get(txn_id)
        if txn is None:
            states.append(
                TxnState(
                    error_code=ErrorCode.TRANSACTIONAL_ID_NOT_FOUND,
                    transactional_id=txn_id,
                    transaction_state="",
                    transaction_timeout_ms=0,
                    transaction_start_time_ms=0,  # Kafka's answer: the fields' defaults
                    producer_id=0,
                    producer_epoch=0,
                    topics=[],
                )
            )
            continue
        by_topic: dict[str, list[int]] = {}
        for tp in sorted(txn.listed_partitions()):  # a group's offsets partition too, as Kafka lists it
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        states.append(
            TxnState(
                error_code=ErrorCode.NONE,
                transactional_id=txn_id,
                transaction_state=txn.state.kafka_name,
                transaction_timeout_ms=txn.timeout_ms,
                transaction_start_time_ms=txn.started_ms,
                producer_id=txn.producer_id,
                producer_epoch=txn.producer_epoch,
                topics=[TxnState.TopicData(topic=t, partitions=ps) for t, ps in by_topic.items()],
            )
        )
    return DescribeTransactionsResponse(version=version, throttle_time_ms=0, transaction_states=states)


def _filter(gate, handler, ctx, body, version, client):
    """Per transactional id; the partitions of topics the principal may not DESCRIBE are left out."""
    asked = list(body.transactional_ids)
    allowed = {t for t in asked if gate.allowed(client, Op.DESCRIBE, Res.TRANSACTIONAL_ID, t)}
    body.transactional_ids = [t for t in asked if t in allowed]

    def complete(response) -> None:
        State = response.TransactionState
        served = iter(response.transaction_states)
        states = []
        for txn_id in asked:
            if txn_id not in allowed:
                states.append(
                    State(
                        error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                        transactional_id=txn_id,
                        transaction_state="",
                        transaction_timeout_ms=0,
                        transaction_start_time_ms=0,
                        producer_id=0,
                        producer_epoch=0,
                        topics=[],
                    )
                )
                continue
            state = next(served)
            state.topics = [t for t in state.topics or () if gate.allowed(client, Op.DESCRIBE, Res.TOPIC, t.topic)]
            states.append(state)
        response.transaction_states = states

    return merged(handler.handle(ctx, body, version, client), complete)


API = KafkaApi(
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
    (0, 0),
    handle_describe_transactions,
    authorization=Filter(_filter),
    refusal=top_level_error,
    read_only=True,
)
