"""InitProducerId: a producer id and epoch for an idempotent producer.

As in Kafka, a producer without a transactional id gets a fresh producer id at epoch 0 every time
(also when it asks to bump an epoch after an error, KIP-360). A transactional id gets its producer
id back with the epoch bumped, which fences older instances and aborts their open transaction.
"""

from __future__ import annotations

from kafka.protocol.producer import InitProducerIdRequest, InitProducerIdResponse

from trafka.domain.errors import ErrorCode, KafkaError

from ..api import HandlerRegistry
from ..context import BrokerContext, ClientInfo


def handle_init_producer_id(
    ctx: BrokerContext, request: InitProducerIdRequest, version: int, client: ClientInfo
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


def register(registry: HandlerRegistry) -> None:
    registry.register(InitProducerIdRequest, InitProducerIdResponse, (0, 5), handle_init_producer_id)
