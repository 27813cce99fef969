"""AlterConfigs (key 33): v0-2. Replaces a topic's configs, or the dynamic configs of this broker
(BROKER "<node id>") or of the cluster default (BROKER ""): `trafka.domain.broker_configs`; or a
group's (GROUP: the given keys set, its other overrides removed, as Kafka's controller, `..group_configs`).

Authorization: ALTER_CONFIGS on the cluster for broker resources, on each topic for topic ones, on each
group for group ones;
broker loggers are left to the handler's INVALID_REQUEST, as Kafka's ControllerApis.

Version notes:
- v1: the response is sent before the client is throttled.
- v2: flexible versions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import (
    AlterConfigsRequest,
    AlterConfigsResponse,
)

from ..api import KafkaApi
from ..request_context import ClientInfo
from ..runtime import group_configs
from ..security.authorization import Check, Checks
from ..security.partial import (
    PartialAnswer,
)
from .common.config_resources import (
    BROKER_RESOURCE,
    CONFIGS_WITH_GROUPS,
    GROUP_RESOURCE,
    TOPIC_RESOURCE,
    WITHOUT_LOGGERS,
    broker_configs,
    config_resources,
    refused_resources,
    whole_refusal,
)
from .common.share_group_configs import SET, dead_letter_refusal_for

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


def _replace_one(ctx: Uses, resource, validate_only: bool, client: ClientInfo) -> tuple[ErrorCode, str | None]:
    if resource.resource_type == GROUP_RESOURCE:
        refused = dead_letter_refusal_for(ctx, client, [(c.name, SET, c.value) for c in resource.configs])
        return refused or group_configs.replace(ctx, resource, validate_only)
    if resource.resource_type not in (TOPIC_RESOURCE, BROKER_RESOURCE):
        return ErrorCode.INVALID_REQUEST, f"Unknown resource type {resource.resource_type}"
    names = [c.name for c in resource.configs]
    if len(names) != len(set(names)):
        return ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys"
    configs = {c.name: c.value for c in resource.configs}
    try:
        if resource.resource_type == BROKER_RESOURCE:
            ctx.catalog.broker_configs.replace(resource.resource_name, configs, validate_only)
        else:
            ctx.catalog.replace_configs(resource.resource_name, configs, validate_only)
    except KafkaError as error:
        return error.code, error.message
    return ErrorCode.NONE, None


def handle_alter_configs(
    ctx: Uses, request: AlterConfigsRequest, version: int, client: ClientInfo
) -> AlterConfigsResponse:
    responses = []
    for resource in request.resources:
        error, message = _replace_one(ctx, resource, request.validate_only, client)
        responses.append(
            AlterConfigsResponse.AlterConfigsResourceResponse(
                error_code=error,
                error_message=message,
                resource_type=resource.resource_type,
                resource_name=resource.resource_name,
            )
        )
    return AlterConfigsResponse(version=version, throttle_time_ms=0, responses=responses)


API = KafkaApi(
    AlterConfigsRequest,
    AlterConfigsResponse,
    (0, 2),
    handle_alter_configs,
    authorization=Checks(
        (
            Check(Res.CLUSTER, Op.ALTER_CONFIGS, broker_configs(BROKER_RESOURCE)),
            Check(Res.TOPIC, Op.ALTER_CONFIGS, config_resources(TOPIC_RESOURCE)),
            Check(Res.GROUP, Op.ALTER_CONFIGS, config_resources(GROUP_RESOURCE)),
        ),
        PartialAnswer(
            CONFIGS_WITH_GROUPS, refused_resources("AlterConfigsResourceResponse", "responses", WITHOUT_LOGGERS)
        ),
    ),
    refusal=whole_refusal("AlterConfigsResourceResponse", "responses"),
    read_only=False,
)
