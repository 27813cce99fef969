"""EndTxn (key 26): v0-5. Commit or abort: markers written to every partition of the transaction.
v4 only allows TRANSACTION_ABORTABLE (KIP-890). v5 is transactions V2 (KIP-890 part 2, ADR 75), as
Kafka's KafkaApis takes it from the version: every commit or abort bumps the producer epoch (the markers
carry the bumped one), and the response carries the producer id and epoch for the next transaction (-1
and -1 with an error); see `TransactionCoordinator._end_v2` for the retry and fencing rules.

Authorization: WRITE on the transactional id.

Version notes:
- v2: PRODUCER_FENCED in place of INVALID_PRODUCER_EPOCH.
- v3: flexible versions.
- v4: TRANSACTION_ABORTABLE (KIP-890).
- v5: the epoch bumped at every transaction's end, the producer id and epoch in the response
  (transaction version 2, KIP-890 part 2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from trafka.domain.errors import ErrorCode
from trafka.schema_codec.messages import (
    EndTxnRequest,
    EndTxnResponse,
)

from ..api import KafkaApi, top_level_error
from ..connection.cluster import refuse_unless_coordinator, transactional_id
from ..request_context import ClientInfo
from ..security.authorization import TXN_WRITE, Checks

if TYPE_CHECKING:
    from collections.abc import Callable

    from trafka.domain.transactions import TransactionService

    from ..runtime.purgatory import Purgatory


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    transactions: TransactionService
    clock_ms: Callable[[], int]
    appends: Purgatory


def handle_end_txn(ctx: Uses, request: EndTxnRequest, version: int, client: ClientInfo) -> EndTxnResponse:
    error = ctx.transactions.end(
        request.transactional_id,
        request.producer_id,
        request.producer_epoch,
        request.committed,
        ctx.clock_ms(),
        v2=version >= 5,
    )
    ctx.appends.notify_all()  # markers move the last stable offset: read_committed fetches wake
    response = EndTxnResponse(version=version, throttle_time_ms=0, error_code=error)
    if version >= 5:
        txn = ctx.transactions.coordinator.get(request.transactional_id) if error == ErrorCode.NONE else None
        response.producer_id = txn.producer_id if txn is not None else -1
        response.producer_epoch = txn.producer_epoch if txn is not None else -1
    return response


API = KafkaApi(
    EndTxnRequest,
    EndTxnResponse,
    (0, 5),
    handle_end_txn,
    authorization=Checks((TXN_WRITE,)),
    refusal=top_level_error,
    read_only=False,
    cluster=refuse_unless_coordinator(transactional_id),
)
