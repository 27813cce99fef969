"""AddOffsetsToTxn (key 25): v0-4. A group's offsets joining a producer's transaction. v4 only allows
the TRANSACTION_ABORTABLE error (KIP-890), which trafka's coordinator has no cause to give here.

Authorization: WRITE on the transactional id, READ on the group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
)

from ..api import KafkaApi, top_level_error
from ..connection.cluster import refuse_unless_coordinator, transactional_id
from ..request_context import ClientInfo
from ..security.authorization import TXN_WRITE, Check, Checks, request_field

if TYPE_CHECKING:
    from collections.abc import Callable

    from trafka.domain.transactions import TransactionService


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    transactions: TransactionService
    clock_ms: Callable[[], int]


def handle_add_offsets_to_txn(
    ctx: Uses, request: AddOffsetsToTxnRequest, version: int, client: ClientInfo
) -> AddOffsetsToTxnResponse:
    error = ctx.transactions.add_offsets(
        request.transactional_id, request.producer_id, request.producer_epoch, request.group_id, ctx.clock_ms()
    )
    return AddOffsetsToTxnResponse(version=version, throttle_time_ms=0, error_code=error)


API = KafkaApi(
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    (0, 4),
    handle_add_offsets_to_txn,
    authorization=Checks((TXN_WRITE, Check(Res.GROUP, Op.READ, request_field("group_id")))),
    refusal=top_level_error,
    read_only=False,
    cluster=refuse_unless_coordinator(transactional_id),
)
