"""What the three config APIs (DescribeConfigs, AlterConfigs, IncrementalAlterConfigs) share: the
resource types they address, the authorization checks over them (DESCRIBE_/ALTER_CONFIGS on the
cluster for broker resources, on the topic for topic resources) and the per-resource refusal: a
refused broker resource gets CLUSTER_AUTHORIZATION_FAILED, a refused topic TOPIC_AUTHORIZATION_FAILED,
each with Kafka's message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from trafka.domain.configs import ConfigResourceType
from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import CLUSTER_NAME
from trafka.domain.security.acls import ResourceType as Res

from ...api import KafkaApi, Refusal
from ...security.partial import (
    TOPIC_REFUSED,
    Refused,
    served_and_refused,
)

TOPIC_RESOURCE = ConfigResourceType.TOPIC


BROKER_RESOURCE = ConfigResourceType.BROKER


BROKER_LOGGER_RESOURCE = ConfigResourceType.BROKER_LOGGER


GROUP_RESOURCE = ConfigResourceType.GROUP  # a consumer group's configs (KIP-848)


Names = Callable[[Any, int, Any], Iterable[str]]  # (request, version, ctx) -> resource names


def config_resources(resource_type: int) -> Names:
    return lambda request, version, ctx: [
        r.resource_name for r in request.resources if r.resource_type == resource_type
    ]


def broker_configs(*types: int) -> Names:
    """The cluster, when the request names a broker config resource (legacy AlterConfigs has no loggers)."""
    return lambda request, version, ctx: (
        [CLUSTER_NAME] if any(r.resource_type in types for r in request.resources) else []
    )


Answer = Callable[[Refused], Any]


def _config_error(r: Refused, resource: Any, broker_types: frozenset[int]) -> ErrorCode | None:
    if resource.resource_type in broker_types and r.denied.get(Res.CLUSTER):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    if resource.resource_type == TOPIC_RESOURCE and resource.resource_name in r.topics():
        return TOPIC_REFUSED
    if resource.resource_type == GROUP_RESOURCE and resource.resource_name in r.denied.get(Res.GROUP, ()):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED
    return None


def refused_resources(entry: str, answered: str, broker_types: frozenset[int], **empty: Any) -> Answer:
    """Per config resource; `broker_types` are the resource types the cluster check covers (legacy
    AlterConfigs leaves broker loggers to the handler's INVALID_REQUEST, as Kafka's ControllerApis)."""

    def answer(r: Refused) -> Any:
        Result = getattr(r.handler.response, entry)
        kept, extra = [], []
        for resource in r.body.resources:
            error = _config_error(r, resource, broker_types)
            if error is None:
                kept.append(resource)
            else:
                extra.append(_refused_resource(Result, resource, error, **empty))
        return served_and_refused(r, "resources", kept, answered, extra)

    return answer


def _refused_resource(Result: Any, resource: Any, error: ErrorCode, **empty: Any) -> Any:
    return Result(
        error_code=error,
        error_message=error.message,
        resource_type=resource.resource_type,
        resource_name=resource.resource_name,
        **empty,
    )


def whole_refusal(entry: str, answered: str, **empty: Any) -> Refusal:
    """Kafka's getErrorResponse of a config API: every resource with the error and its message."""

    def refuse(api: KafkaApi, request: Any, version: int, error: int) -> Any:
        Result, code = getattr(api.response, entry), ErrorCode.of(error)
        refused = [_refused_resource(Result, resource, code, **empty) for resource in request.resources]
        return api.empty_response(version, **{answered: refused})

    return refuse


WITH_LOGGERS = frozenset({BROKER_RESOURCE, BROKER_LOGGER_RESOURCE})
WITHOUT_LOGGERS = frozenset({BROKER_RESOURCE})
CONFIGS = frozenset({Res.CLUSTER, Res.TOPIC})
CONFIGS_WITH_GROUPS = frozenset({Res.CLUSTER, Res.TOPIC, Res.GROUP})
