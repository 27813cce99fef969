"""ListTransactions (key 66): v0-2. Transactional ids, filtered by state, producer id, duration (v1) and
a regular expression the whole id must match (v2, KIP-1152; null or empty: no filter). The pattern is
compiled by RE2, linear in the id's length whatever the client sends (ADR 45); one RE2 cannot parse is
INVALID_REGULAR_EXPRESSION.

Authorization filters: only the transactional ids the principal may DESCRIBE.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.transactions import TxnState as TxnStates
from trafka.schema_codec.messages import (
    ListTransactionsRequest,
    ListTransactionsResponse,
)

from ..api import KafkaApi, top_level_error
from ..request_context import ClientInfo
from ..security.authorization import Filter

if TYPE_CHECKING:
    from collections.abc import Callable

    from trafka.domain.transactions import TransactionService


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    transactions: TransactionService
    clock_ms: Callable[[], int]


@cache
def _re2() -> tuple[Any, Any]:
    """RE2 and its options, loaded with the first pattern a client sends (not with every broker)."""
    import re2

    options = re2.Options()
    options.log_errors = False  # a client's bad pattern is its error, not the broker's log line
    return re2, options


def handle_list_transactions(
    ctx: Uses, request: ListTransactionsRequest, version: int, client: ClientInfo
) -> ListTransactionsResponse:
    pattern = request.transactional_id_pattern if version >= 2 else None
    matcher = None
    if pattern:
        re2, options = _re2()
        try:
            matcher = re2.compile(pattern, options)
        except re2.error:
            return ListTransactionsResponse(
                version=version,
                throttle_time_ms=0,
                error_code=ErrorCode.INVALID_REGULAR_EXPRESSION,
                unknown_state_filters=[],
                transaction_states=[],
            )
    names = {s.kafka_name for s in TxnStates}
    wanted = set(request.state_filters or [])
    pids = set(request.producer_id_filters or [])
    now = ctx.clock_ms()
    listed = [
        ListTransactionsResponse.TransactionState(
            transactional_id=t.transactional_id, producer_id=t.producer_id, transaction_state=t.state.kafka_name
        )
        for t in ctx.transactions.coordinator.all()
        if (not wanted or t.state.kafka_name in wanted)
        and (not pids or t.producer_id in pids)
        and (matcher is None or matcher.fullmatch(t.transactional_id) is not None)
        and (
            version < 1
            or request.duration_filter < 0
            or (t.started_ms >= 0 and now - t.started_ms >= request.duration_filter)
        )
    ]
    return ListTransactionsResponse(
        version=version,
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        unknown_state_filters=sorted(wanted - names),
        transaction_states=listed,
    )


def _filter(gate, handler, ctx, body, version, client):
    response = handler.handle(ctx, body, version, client)
    response.transaction_states = [
        t
        for t in response.transaction_states
        if gate.allowed(client, Op.DESCRIBE, Res.TRANSACTIONAL_ID, t.transactional_id)
    ]
    return response


API = KafkaApi(
    ListTransactionsRequest,
    ListTransactionsResponse,
    (0, 2),
    handle_list_transactions,
    authorization=Filter(_filter),
    refusal=top_level_error,
    read_only=True,
)
