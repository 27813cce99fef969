"""ListTransactions (key 66): v0-1. Transactional ids, filtered by state and producer id.

Authorization filters: only the transactional ids the principal may DESCRIBE.
"""

from __future__ import annotations

from kafka.protocol.admin import (
    ListTransactionsRequest,
    ListTransactionsResponse,
)

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.transactions import TxnState as TxnStates

from ..api import KafkaApi, top_level_error
from ..context import BrokerContext, ClientInfo
from ..security.authorization import Filter


def handle_list_transactions(
    ctx: BrokerContext, request: ListTransactionsRequest, version: int, client: ClientInfo
) -> ListTransactionsResponse:
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
    (0, 1),
    handle_list_transactions,
    authorization=Filter(_filter),
    refusal=top_level_error,
    read_only=True,
)
