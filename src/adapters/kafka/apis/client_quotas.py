"""The client quota admin APIs: DescribeClientQuotas (key 48): v0-1 and AlterClientQuotas (key 49):
v0-1, stored as KRaft ClientQuotaRecords in `__cluster_metadata`.

Authorization as Kafka: DESCRIBE_CONFIGS on the cluster to describe (KafkaApis), ALTER_CONFIGS on
the cluster to alter (ControllerApis). A refused describe carries the error and its message and no
entries; a refused alter answers every entity with the error, as the requests' `getErrorResponse`.
A bad describe filter is the response's error (INVALID_REQUEST, or UNSUPPORTED_VERSION for an
unknown entity type) with Kafka's message; each altered entity has its own result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.quotas import DescribeFilter, QuotaEntity, QuotaError
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import (
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
)

from ..api import KafkaApi
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, the_cluster

if TYPE_CHECKING:
    from trafka.domain.quotas import QuotaSensors


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    quotas: QuotaSensors


def handle_describe_client_quotas(
    ctx: Uses, request: DescribeClientQuotasRequest, version: int, client: ClientInfo
) -> DescribeClientQuotasResponse:
    query = DescribeFilter.parse(((c.entity_type, c.match_type, c.match) for c in request.components), request.strict)
    if isinstance(query, QuotaError):
        return DescribeClientQuotasResponse(
            version=version, throttle_time_ms=0, error_code=query.error, error_message=query.message, entries=None
        )
    Entry = DescribeClientQuotasResponse.EntryData
    return DescribeClientQuotasResponse(
        version=version,
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        error_message="",  # Kafka's answer: the field's default, not null
        entries=[
            Entry(
                entity=[Entry.EntityData(entity_type=kind, entity_name=name) for kind, name in entity.parts],
                values=[Entry.ValueData(key=key, value=value) for key, value in values.items()],
            )
            for entity, values in ctx.quotas.quotas.describe(query)
        ],
    )


def handle_alter_client_quotas(
    ctx: Uses, request: AlterClientQuotasRequest, version: int, client: ClientInfo
) -> AlterClientQuotasResponse:
    alterations = [
        (
            QuotaEntity.of((e.entity_type, e.entity_name) for e in entry.entity),
            [(op.key, None if op.remove else op.value) for op in entry.ops],
        )
        for entry in request.entries
    ]
    results = ctx.quotas.quotas.alter(alterations, request.validate_only)
    Entry = AlterClientQuotasResponse.EntryData
    return AlterClientQuotasResponse(
        version=version,
        throttle_time_ms=0,
        entries=[
            Entry(
                error_code=ErrorCode.NONE if error is None else error.error,
                error_message=None if error is None else error.message,
                entity=[Entry.EntityData(entity_type=kind, entity_name=name) for kind, name in entity.parts],
            )
            for entity, error in results.items()
        ],
    )


def _message(error: int) -> str:
    return ErrorCode.of(error).message


def _describe_refusal(api: KafkaApi, request: Any, version: int, error: int) -> Any:
    return api.empty_response(version, error_code=error, error_message=_message(error), entries=None)


def _alter_refusal(api: KafkaApi, request: Any, version: int, error: int) -> Any:
    Entry = api.response.EntryData
    return api.empty_response(
        version,
        entries=[
            Entry(
                error_code=error,
                error_message=_message(error),
                entity=[Entry.EntityData(entity_type=e.entity_type, entity_name=e.entity_name) for e in entry.entity],
            )
            for entry in request.entries
        ],
    )


DESCRIBE_CLIENT_QUOTAS = KafkaApi(
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
    (0, 1),
    handle_describe_client_quotas,
    authorization=Checks((Check(Res.CLUSTER, Op.DESCRIBE_CONFIGS, the_cluster),)),
    refusal=_describe_refusal,
    read_only=True,
)
ALTER_CLIENT_QUOTAS = KafkaApi(
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
    (0, 1),
    handle_alter_client_quotas,
    authorization=Checks((Check(Res.CLUSTER, Op.ALTER_CONFIGS, the_cluster),)),
    refusal=_alter_refusal,
    read_only=False,
)
APIS = (DESCRIBE_CLIENT_QUOTAS, ALTER_CLIENT_QUOTAS)
