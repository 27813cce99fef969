"""InitProducerId (key 22): v0-5. A producer id and epoch for an idempotent or transactional producer.

Authorization: WRITE on the transactional id; an idempotent producer needs IDEMPOTENT_WRITE on the
cluster or WRITE on any topic (Kafka's authorizeByResourceType).

Version notes:
- v1: the response is sent before the client is throttled.
- v2: flexible versions.
- v3: ProducerId and ProducerEpoch, to resume after INVALID_PRODUCER_EPOCH (KIP-360).
- v4: PRODUCER_FENCED; v5: TRANSACTION_ABORTABLE (KIP-890).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.security.acls import CLUSTER_NAME
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import InitProducerIdRequest, InitProducerIdResponse

from ..api import KafkaApi, top_level_error
from ..connection.cluster import refuse_unless_coordinator, transactional_id
from ..request_context import ClientInfo
from ..security.authorization import TXN_WRITE, Check, Checks

if TYPE_CHECKING:
    from collections.abc import Callable

    from trafka.domain.producers import ProducerIdAllocator
    from trafka.domain.transactions import TransactionService

    from ..runtime.purgatory import Purgatory


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    producer_ids: ProducerIdAllocator
    transactions: TransactionService
    clock_ms: Callable[[], int]
    appends: Purgatory


def handle_init_producer_id(
    ctx: Uses, request: InitProducerIdRequest, version: int, client: ClientInfo
) -> InitProducerIdResponse:
    if request.transactional_id is not None:
        try:
            txn = ctx.transactions.init_producer_id(
                request.transactional_id,
                request.transaction_timeout_ms,
                ctx.clock_ms(),
                request.producer_id if version >= 3 else -1,
                request.producer_epoch if version >= 3 else -1,
            )
        except KafkaError as error:
            return InitProducerIdResponse(
                version=version, throttle_time_ms=0, error_code=error.code, producer_id=-1, producer_epoch=-1
            )
        ctx.appends.notify_all()  # an aborted transaction's markers may have moved a last stable offset
        return InitProducerIdResponse(
            version=version,
            throttle_time_ms=0,
            error_code=ErrorCode.NONE,
            producer_id=txn.producer_id,
            producer_epoch=txn.producer_epoch,
        )
    return InitProducerIdResponse(
        version=version,
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        producer_id=ctx.producer_ids.allocate(),
        producer_epoch=0,
    )


def _idempotent(request, version, ctx) -> list[str]:
    return [] if request.transactional_id else [CLUSTER_NAME]


API = KafkaApi(
    InitProducerIdRequest,
    InitProducerIdResponse,
    (0, 5),
    handle_init_producer_id,
    authorization=Checks(
        (TXN_WRITE, Check(Res.CLUSTER, Op.IDEMPOTENT_WRITE, _idempotent, or_on_any=(Op.WRITE, Res.TOPIC)))
    ),
    refusal=top_level_error,
    read_only=False,
    cluster=refuse_unless_coordinator(transactional_id),
)
