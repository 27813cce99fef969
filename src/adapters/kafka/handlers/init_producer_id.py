"""InitProducerId: a producer id and epoch for an idempotent producer.

As in Kafka, a producer without a transactional id gets a fresh producer id at epoch 0 every time
(also when it asks to bump an epoch after an error, KIP-360). Transactional ids need the transaction
coordinator, which this broker does not run yet: they get COORDINATOR_NOT_AVAILABLE.
"""

from __future__ import annotations

from kafka.protocol.producer import InitProducerIdRequest, InitProducerIdResponse

from domain.errors import ErrorCode

from ..context import BrokerContext, ClientInfo
from ..registry import HandlerRegistry


def handle_init_producer_id(
    ctx: BrokerContext, request: InitProducerIdRequest, version: int, client: ClientInfo
) -> InitProducerIdResponse:
    if request.transactional_id is not None:
        return InitProducerIdResponse(
            version=version, throttle_time_ms=0, error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE,
            producer_id=-1, producer_epoch=-1,
        )
    return InitProducerIdResponse(
        version=version, throttle_time_ms=0, error_code=ErrorCode.NONE,
        producer_id=ctx.producer_ids.allocate(), producer_epoch=0,
    )


def register(registry: HandlerRegistry) -> None:
    registry.register(InitProducerIdRequest, InitProducerIdResponse, (0, 5), handle_init_producer_id)
