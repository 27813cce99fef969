"""DescribeConfigs (key 32): v1-4. Topic configs (with defaults and overrides, synonyms, documentation),
the broker's (its dynamic configs by Kafka's precedence) and the cluster default's (the dynamic default
values only); the broker logger resource; a consumer group's (GROUP, KIP-848: the consumer.* configs).

Authorization: DESCRIBE_CONFIGS on the cluster for broker resources, on each topic for topic ones, on
each group for group ones.

Version notes:
(v0 is not served)
- v1: IncludeSynonyms, each entry's ConfigSource and synonyms.
- v2: the response is sent before the client is throttled.
- v3: IncludeDocumentation, each entry's ConfigType and documentation.
- v4: flexible versions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.configs import ConfigEntry
from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import (
    DescribeConfigsRequest,
    DescribeConfigsResponse,
)

from ..api import KafkaApi
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks
from ..security.partial import (
    PartialAnswer,
)
from .common import share_group_configs
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

if TYPE_CHECKING:
    from trafka.domain.catalog import TopicCatalog
    from trafka.domain.configs import BrokerPolicy

    from ..runtime.group_runtime import GroupRuntime
    from ..runtime.share_runtime import ShareRuntime
    from ..security.authorization import AuthorizationGate


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    policy: BrokerPolicy
    groups: GroupRuntime
    authorization: AuthorizationGate | None
    share: ShareRuntime | None


ConfigsResult = DescribeConfigsResponse.DescribeConfigsResult  # classes built at run time: Any to mypy


ConfigValue = DescribeConfigsResponse.DescribeConfigsResult.DescribeConfigsResourceResult


def _config_value(entry: ConfigEntry, synonyms: bool) -> Any:  # a ConfigValue
    return ConfigValue(
        name=entry.name,
        value=entry.value,
        read_only=entry.read_only,
        config_source=entry.source,
        is_sensitive=entry.is_sensitive,
        synonyms=(
            [
                ConfigValue.DescribeConfigsSynonym(name=s.name, value=s.value, source=s.source)
                for s in entry.synonyms or (entry,)
            ]
            if synonyms
            else []
        ),
        config_type=entry.config_type,
        documentation=None,
    )


def _describe_resource(ctx: Uses, resource, synonyms: bool) -> Any:  # a ConfigsResult
    keys = None if resource.configuration_keys is None else list(resource.configuration_keys)
    error, message, entries = ErrorCode.NONE, "", []  # Kafka: its field default when it succeeds
    if resource.resource_type == TOPIC_RESOURCE:
        topic = ctx.catalog.get(resource.resource_name)
        if topic is None:
            error, message = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ""  # Kafka's: no message
        else:
            entries = ctx.policy.describe_topic(topic.configs, keys)
    elif resource.resource_type == BROKER_RESOURCE:
        if resource.resource_name == "":
            entries = ctx.policy.describe_cluster_default(keys)
        elif resource.resource_name != str(ctx.policy.node_id):
            error, message = ErrorCode.INVALID_REQUEST, f"Unexpected broker id {resource.resource_name}"
        else:
            entries = ctx.policy.describe(keys)
    elif resource.resource_type == GROUP_RESOURCE:
        entries = share_group_configs.describe(ctx, resource.resource_name, keys)
    elif resource.resource_type == BROKER_LOGGER_RESOURCE:
        if resource.resource_name != str(ctx.policy.node_id):
            error, message = ErrorCode.INVALID_REQUEST, f"Unexpected broker id {resource.resource_name}"
    else:
        error, message = ErrorCode.INVALID_REQUEST, f"Unsupported resource type {resource.resource_type}"
    return ConfigsResult(
        error_code=error,
        error_message=message,
        resource_type=resource.resource_type,
        resource_name=resource.resource_name,
        configs=[_config_value(e, synonyms) for e in entries],
    )


def handle_describe_configs(
    ctx: Uses, request: DescribeConfigsRequest, version: int, client: ClientInfo
) -> DescribeConfigsResponse:
    return DescribeConfigsResponse(
        version=version,
        throttle_time_ms=0,
        results=[_describe_resource(ctx, r, request.include_synonyms) for r in request.resources],
    )


API = KafkaApi(
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    (1, 4),
    handle_describe_configs,
    authorization=Checks(
        (
            Check(Res.CLUSTER, Op.DESCRIBE_CONFIGS, broker_configs(BROKER_RESOURCE, BROKER_LOGGER_RESOURCE)),
            Check(Res.TOPIC, Op.DESCRIBE_CONFIGS, config_resources(TOPIC_RESOURCE)),
            Check(Res.GROUP, Op.DESCRIBE_CONFIGS, config_resources(GROUP_RESOURCE)),
        ),
        PartialAnswer(
            CONFIGS_WITH_GROUPS, refused_resources("DescribeConfigsResult", "results", WITH_LOGGERS, configs=[])
        ),
    ),
    refusal=whole_refusal("DescribeConfigsResult", "results", configs=[]),
    read_only=True,
)
