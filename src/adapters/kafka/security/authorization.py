"""What an API needs authorized, as its room declares it, and the gate that applies it.

An API declares its authorization (`KafkaApi.authorization`) as one of:

- `Checks`: the checks in the order Kafka's KafkaApis makes them, each a resource type, an operation
  and how to find the resource names in the request (a transactional id, a group id, the topics, the
  cluster), and, where Kafka answers per resource (the topics of Produce, Fetch, DeleteTopics...,
  the config resources, the groups of DeleteGroups, the keys of FindCoordinator v4+), a
  `PartialAnswer` that gives the refused resources their error in their own response entries and
  serves the others;
- `Filter`: the APIs whose answers leave out what the principal may not DESCRIBE, or fill the
  authorized-operations fields, instead of refusing (Metadata, DescribeCluster, ListGroups...);
- `None`: the APIs Kafka serves unauthorized (ApiVersions and the SASL exchange).

`AuthorizationGate.layer(api)` composes that with the API's handler once, when the broker starts.
Any refusal that is not answered per resource (a group, transactional id or cluster check, mostly)
answers the whole request with GROUP_/TRANSACTIONAL_ID_/CLUSTER_AUTHORIZATION_FAILED through the
API's refusal, built from the request as Kafka's getErrorResponse: no side effect, nothing read. A
check with `cluster_grants` passes for every name when the principal has that operation on the
cluster (CREATE for CreateTopics, DELETE for DeleteTopics, as Kafka's hasClusterAuth).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import CLUSTER_NAME, Authorizer
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import is_internal_topic

from ..api import CloseConnection
from ..connection.faults import serve_then_fail
from .checks import Authorization as Authorization  # re-exported: the rooms name them here
from .checks import Check as Check
from .checks import Checks as Checks
from .checks import Filter as Filter
from .checks import FilterAnswer as FilterAnswer
from .checks import Names as Names
from .checks import PartialAnswer, Refused

if TYPE_CHECKING:
    from ..api import Handle, KafkaApi

ERRORS = {
    Res.TOPIC: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    Res.GROUP: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    Res.CLUSTER: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    Res.TRANSACTIONAL_ID: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
}

# -- how checks find resource names in a request -----------------------------------------------------


def topic_names(field: str = "topics", name: str = "name") -> Names:
    """The names of the entries of the request's list `field`."""
    return lambda request, version, ctx: [getattr(t, name) for t in getattr(request, field) or ()]


def request_field(field: str) -> Names:
    """The request's field `field`, when set (a group id, a transactional id)."""
    return lambda request, version, ctx: [value] if (value := getattr(request, field, None)) else []


def the_cluster(request: Any, version: int, ctx: Any) -> list[str]:
    return [CLUSTER_NAME]


TXN_WRITE = Check(Res.TRANSACTIONAL_ID, Op.WRITE, request_field("transactional_id"))
"""WRITE on the request's transactional id (Produce, InitProducerId and the transaction APIs)."""


class AuthorizationGate:
    def __init__(self, authorizer: Authorizer) -> None:
        self.authorizer = authorizer

    def allowed(self, client: Any, operation: Op, resource_type: Res, name: str) -> bool:
        return self.authorizer.authorize(client.principal, client.host, operation, resource_type, name)

    def operations(self, client: Any, resource_type: Res, name: str) -> set[int]:
        return {
            int(op) for op in self.authorizer.authorized_operations(client.principal, client.host, resource_type, name)
        }

    def layer(self, api: KafkaApi) -> Handle:
        """The API's handler behind its authorization, composed once."""
        authorization = api.authorization
        if authorization is None:
            return api.handle
        if isinstance(authorization, Filter):
            answer = authorization.answer
            return lambda ctx, body, version, client: answer(self, api, ctx, body, version, client)
        checks, partial = authorization.checks, authorization.partial
        return lambda ctx, body, version, client: self._checked(api, checks, partial, ctx, body, version, client)

    def _checked(
        self,
        api: KafkaApi,
        checks: tuple[Check, ...],
        partial: PartialAnswer | None,
        ctx: Any,
        body: Any,
        version: int,
        client: Any,
    ) -> Any:
        if partial is not None and version < partial.min_version:
            partial = None
        refused: dict[Res, set[str]] = {}
        for check in checks:
            denied = self._denied(check, body, version, api.uses(ctx), client)
            if not denied:
                continue
            if partial is not None and check.resource_type in partial.resource_types:
                refused.setdefault(check.resource_type, set()).update(denied)
                continue
            return self._refused_whole(api, ctx, body, version, client, ERRORS[check.resource_type])
        if refused:
            assert partial is not None
            allowed = functools.partial(self.allowed, client)
            return partial.answer(Refused(api, ctx, body, version, client, refused, allowed))
        return api.handle(ctx, body, version, client)

    def _denied(self, check: Check, body: Any, version: int, uses: Any, client: Any) -> set[str]:
        names = list(check.names(body, version, uses))  # the room's function, given what its handler declares
        denied = {
            n
            for n in names
            if (check.internal_refused and is_internal_topic(n))
            or not self.allowed(client, check.operation, check.resource_type, n)
        }
        if (
            denied
            and check.cluster_grants is not None
            and self.allowed(client, check.cluster_grants, Res.CLUSTER, CLUSTER_NAME)
        ):
            return set()
        if (
            denied
            and check.or_on_any is not None
            and self.authorizer.authorize_by_resource_type(client.principal, client.host, *check.or_on_any)
        ):
            return set()
        return denied

    def _refused_whole(self, api: KafkaApi, ctx: Any, body: Any, version: int, client: Any, error: ErrorCode) -> Any:
        response = api.refuse(body, version, error)  # Kafka's getErrorResponse: nothing served
        if response is not None:
            return response
        if not api.read_only:
            raise CloseConnection(f"{client.principal} is not authorized for {api.name}")
        return serve_then_fail(api.handle, ctx, body, version, client, error)
