"""EndTxn (key 26): v0-3. Commit or abort: markers written to every partition of the transaction.

Authorization: WRITE on the transactional id.
"""

from __future__ import annotations

from kafka.protocol.producer import (
    EndTxnRequest,
    EndTxnResponse,
)

from ..api import KafkaApi, top_level_error
from ..context import BrokerContext, ClientInfo
from ..security.authorization import TXN_WRITE, Checks


def handle_end_txn(ctx: BrokerContext, request: EndTxnRequest, version: int, client: ClientInfo) -> EndTxnResponse:
    error = ctx.transactions.end(
        request.transactional_id, request.producer_id, request.producer_epoch, request.committed, ctx.clock_ms()
    )
    ctx.appends.notify_all()  # markers move the last stable offset: read_committed fetches wake
    return EndTxnResponse(version=version, throttle_time_ms=0, error_code=error)


API = KafkaApi(
    EndTxnRequest,
    EndTxnResponse,
    (0, 3),
    handle_end_txn,
    authorization=Checks((TXN_WRITE,)),
    refusal=top_level_error,
    read_only=False,
)
