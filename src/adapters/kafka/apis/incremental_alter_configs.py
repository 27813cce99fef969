"""IncrementalAlterConfigs (key 44): v0-1. SET, DELETE, APPEND, SUBTRACT on a topic's configs, or on the
dynamic configs of this broker (BROKER "<node id>") or of the cluster default (BROKER ""):
`trafka.domain.broker_configs`; SET or DELETE on a consumer group's consumer.session.timeout.ms and
consumer.heartbeat.interval.ms (GROUP, KIP-848) and a share group's share.* keys, recorded in the
metadata log (`..group_configs`).

Authorization: ALTER_CONFIGS on the cluster for broker and broker logger resources, on each topic
for topic ones, on each group for group ones.

Version notes:
- v1: flexible versions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from trafka.domain.catalog import AlterOp
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import (
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)

from ..api import KafkaApi
from ..request_context import ClientInfo
from ..runtime import group_configs
from ..security.authorization import Check, Checks
from ..security.partial import (
    PartialAnswer,
)
from .common.config_resources import (
    BROKER_LOGGER_RESOURCE,
    BROKER_RESOURCE,
    CONFIGS_WITH_GROUPS,
    GROUP_RESOURCE,
    TOPIC_RESOURCE,
    WITH_LOGGERS,
    broker_configs,
    config_resources,
    refused_resources,
    whole_refusal,
)
from .common.share_group_configs import dead_letter_refusal_for

if TYPE_CHECKING:
    from trafka.domain.catalog import TopicCatalog
    from trafka.domain.groups.recorded_configs import DurableGroupConfigs

    from ..runtime.group_runtime import GroupRuntime
    from ..runtime.share_runtime import ShareRuntime
    from ..security.authorization import AuthorizationGate


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    groups: GroupRuntime
    authorization: AuthorizationGate | None
    share: ShareRuntime | None
    group_configs: DurableGroupConfigs | None


AlterResult = IncrementalAlterConfigsResponse.AlterConfigsResourceResponse


def _alter_one(ctx: Uses, resource, validate_only: bool, client: ClientInfo) -> tuple[ErrorCode, str | None]:
    if resource.resource_type == GROUP_RESOURCE:
        asked = [(c.name, int(c.config_operation), c.value) for c in resource.configs]
        refused = dead_letter_refusal_for(ctx, client, asked)
        return refused or group_configs.alter(ctx, resource, validate_only)
    if resource.resource_type not in (TOPIC_RESOURCE, BROKER_RESOURCE):
        return ErrorCode.INVALID_REQUEST, f"Unsupported resource type {resource.resource_type}"
    names = [c.name for c in resource.configs]
    if len(names) != len(set(names)):
        return ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys"
    try:
        changes = {c.name: (AlterOp(c.config_operation), c.value) for c in resource.configs}
    except ValueError:
        return ErrorCode.INVALID_REQUEST, "Unknown config operation"
    try:
        if resource.resource_type == BROKER_RESOURCE:
            ctx.catalog.broker_configs.alter(
                resource.resource_name, {k: (int(op), v) for k, (op, v) in changes.items()}, validate_only
            )
        else:
            ctx.catalog.alter_configs(resource.resource_name, changes, validate_only)
    except KafkaError as error:
        return error.code, error.message
    return ErrorCode.NONE, None


def handle_incremental_alter_configs(
    ctx: Uses, request: IncrementalAlterConfigsRequest, version: int, client: ClientInfo
) -> IncrementalAlterConfigsResponse:
    responses = []
    for resource in request.resources:
        error, message = _alter_one(ctx, resource, request.validate_only, client)
        responses.append(
            AlterResult(
                error_code=error,
                error_message=message,
                resource_type=resource.resource_type,
                resource_name=resource.resource_name,
            )
        )
    return IncrementalAlterConfigsResponse(version=version, throttle_time_ms=0, responses=responses)


API = KafkaApi(
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
    (0, 1),
    handle_incremental_alter_configs,
    authorization=Checks(
        (
            Check(Res.CLUSTER, Op.ALTER_CONFIGS, broker_configs(BROKER_RESOURCE, BROKER_LOGGER_RESOURCE)),
            Check(Res.TOPIC, Op.ALTER_CONFIGS, config_resources(TOPIC_RESOURCE)),
            Check(Res.GROUP, Op.ALTER_CONFIGS, config_resources(GROUP_RESOURCE)),
        ),
        PartialAnswer(
            CONFIGS_WITH_GROUPS, refused_resources("AlterConfigsResourceResponse", "responses", WITH_LOGGERS)
        ),
    ),
    refusal=whole_refusal("AlterConfigsResourceResponse", "responses"),
    read_only=False,
)
