"""The ACL admin APIs, a tight family over the domain's StandardAuthorizer: DescribeAcls (key 29),
CreateAcls (key 30), DeleteAcls (key 31), each v1-3. Without an authorizer each answers
SECURITY_DISABLED, as Kafka.

Authorization: DESCRIBE on the cluster to list, ALTER to create or delete.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import (
    CreateAclsRequest,
    CreateAclsResponse,
    DeleteAclsRequest,
    DeleteAclsResponse,
    DescribeAclsRequest,
    DescribeAclsResponse,
)

from ..api import KafkaApi, top_level_error
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, the_cluster

if TYPE_CHECKING:
    from ..security.authorization import AuthorizationGate


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    authorization: AuthorizationGate | None


NO_AUTHORIZER = "No Authorizer is configured on the broker"


def _enum(kind, value: int):
    try:
        return kind(value)
    except ValueError:
        return kind.UNKNOWN


def _filter(f) -> AclBindingFilter | str:
    resource_type = _enum(ResourceType, f.resource_type_filter)
    pattern = _enum(PatternType, f.pattern_type_filter)
    operation = _enum(AclOperation, f.operation)
    permission = _enum(AclPermissionType, f.permission_type)
    for value in (resource_type, pattern, operation, permission):
        if value.name == "UNKNOWN":
            return f"Invalid filter: unknown {type(value).__name__}"
    return AclBindingFilter(
        resource_type, f.resource_name_filter, pattern, f.principal_filter, f.host_filter, operation, permission
    )


def handle_describe_acls(ctx: Uses, request: DescribeAclsRequest, version: int, client: ClientInfo):
    if ctx.authorization is None:
        return DescribeAclsResponse(
            version=version,
            throttle_time_ms=0,
            error_code=ErrorCode.SECURITY_DISABLED,
            error_message=NO_AUTHORIZER,
            resources=[],
        )
    found = _filter(request)
    if isinstance(found, str):
        return DescribeAclsResponse(
            version=version,
            throttle_time_ms=0,
            error_code=ErrorCode.INVALID_REQUEST,
            error_message=found,
            resources=[],
        )
    grouped: dict[tuple, list[AclBinding]] = {}
    for acl in ctx.authorization.authorizer.acls(found):
        grouped.setdefault((acl.resource_type, acl.resource_name, acl.pattern_type), []).append(acl)
    Resource = DescribeAclsResponse.DescribeAclsResource
    return DescribeAclsResponse(
        version=version,
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        error_message="",  # Kafka's answer: the field's default, not null
        resources=[
            Resource(
                resource_type=int(rt),
                resource_name=name,
                pattern_type=int(pt),
                acls=[
                    Resource.AclDescription(
                        principal=a.principal,
                        host=a.host,
                        operation=int(a.operation),
                        permission_type=int(a.permission_type),
                    )
                    for a in acls
                ],
            )
            for (rt, name, pt), acls in grouped.items()
        ],
    )


def handle_create_acls(ctx: Uses, request: CreateAclsRequest, version: int, client: ClientInfo):
    Result = CreateAclsResponse.AclCreationResult
    if ctx.authorization is None:
        return CreateAclsResponse(
            version=version,
            throttle_time_ms=0,
            results=[
                Result(error_code=ErrorCode.SECURITY_DISABLED, error_message=NO_AUTHORIZER) for _ in request.creations
            ],
        )
    bindings = [
        AclBinding(
            _enum(ResourceType, c.resource_type),
            c.resource_name,
            _enum(PatternType, c.resource_pattern_type),
            c.principal,
            c.host,
            _enum(AclOperation, c.operation),
            _enum(AclPermissionType, c.permission_type),
        )
        for c in request.creations
    ]
    results = ctx.authorization.authorizer.create(bindings)
    return CreateAclsResponse(
        version=version,
        throttle_time_ms=0,
        results=[Result(error_code=r.error, error_message=r.message) for r in results],
    )


def handle_delete_acls(ctx: Uses, request: DeleteAclsRequest, version: int, client: ClientInfo):
    FilterResult = DeleteAclsResponse.DeleteAclsFilterResult
    Matching = FilterResult.DeleteAclsMatchingAcl
    if ctx.authorization is None:
        return DeleteAclsResponse(
            version=version,
            throttle_time_ms=0,
            filter_results=[
                FilterResult(error_code=ErrorCode.SECURITY_DISABLED, error_message=NO_AUTHORIZER, matching_acls=[])
                for _ in request.filters
            ],
        )
    filters = [_filter(f) for f in request.filters]
    valid = [f for f in filters if not isinstance(f, str)]
    deleted = iter(ctx.authorization.authorizer.delete(valid))
    results = []
    for f in filters:
        if isinstance(f, str):
            results.append(FilterResult(error_code=ErrorCode.INVALID_REQUEST, error_message=f, matching_acls=[]))
            continue
        results.append(
            FilterResult(
                error_code=ErrorCode.NONE,
                error_message=None,
                matching_acls=[
                    Matching(
                        error_code=ErrorCode.NONE,
                        error_message=None,
                        resource_type=int(a.resource_type),
                        resource_name=a.resource_name,
                        pattern_type=int(a.pattern_type),
                        principal=a.principal,
                        host=a.host,
                        operation=int(a.operation),
                        permission_type=int(a.permission_type),
                    )
                    for a in next(deleted)
                ],
            )
        )
    return DeleteAclsResponse(version=version, throttle_time_ms=0, filter_results=results)


def _create_refusal(response_class: Any, request: Any, version: int, error: int) -> Any:
    result = response_class.AclCreationResult
    return response_class(
        version=version,
        throttle_time_ms=0,
        results=[result(error_code=error, error_message=None) for _ in request.creations],
    )


def _delete_refusal(response_class: Any, request: Any, version: int, error: int) -> Any:
    result = response_class.DeleteAclsFilterResult
    return response_class(
        version=version,
        throttle_time_ms=0,
        filter_results=[result(error_code=error, error_message=None, matching_acls=[]) for _ in request.filters],
    )


DESCRIBE_ACLS = KafkaApi(
    DescribeAclsRequest,
    DescribeAclsResponse,
    (1, 3),
    handle_describe_acls,
    authorization=Checks((Check(Res.CLUSTER, Op.DESCRIBE, the_cluster),)),
    refusal=top_level_error,
    read_only=True,
)
CREATE_ACLS = KafkaApi(
    CreateAclsRequest,
    CreateAclsResponse,
    (1, 3),
    handle_create_acls,
    authorization=Checks((Check(Res.CLUSTER, Op.ALTER, the_cluster),)),
    refusal=lambda api, request, version, error: _create_refusal(api.response, request, version, error),
    read_only=False,
)
DELETE_ACLS = KafkaApi(
    DeleteAclsRequest,
    DeleteAclsResponse,
    (1, 3),
    handle_delete_acls,
    authorization=Checks((Check(Res.CLUSTER, Op.ALTER, the_cluster),)),
    refusal=lambda api, request, version, error: _delete_refusal(api.response, request, version, error),
    read_only=False,
)
APIS = (DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS)
