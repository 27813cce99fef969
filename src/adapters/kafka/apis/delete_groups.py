"""DeleteGroups (key 42): v0-2. Empty groups and their committed offsets.

Authorization: DELETE per group.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kafka.protocol.admin import (
    DeleteGroupsRequest,
    DeleteGroupsResponse,
)

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res

from ..api import KafkaApi
from ..connection.cluster import groups_in, refuse_unless_coordinator
from ..context import BrokerContext
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks
from ..security.partial import (
    PartialAnswer,
    Refused,
    served_and_refused,
)


def delete_group(ctx: BrokerContext, group_id: str) -> ErrorCode:
    """A share group (and its share-partitions' state) if it is one, else a classic or consumer group; also
    the console's delete action."""
    share = ctx.share
    if share is not None and group_id in share.groups.coordinator.groups:
        error = share.groups.delete(group_id)  # its GROUP configs stay, as Kafka keeps them
        share.settled()
        return error
    return ctx.groups.delete_group(group_id)


def handle_delete_groups(
    ctx: BrokerContext, request: DeleteGroupsRequest, version: int, client: ClientInfo
) -> DeleteGroupsResponse:
    results = [
        DeleteGroupsResponse.DeletableGroupResult(group_id=g, error_code=delete_group(ctx, g))
        for g in request.groups_names
    ]
    return DeleteGroupsResponse(version=version, throttle_time_ms=0, results=results)


def _refused_groups(Response: Any, groups: Iterable[str], error: int) -> list[Any]:
    return [Response.DeletableGroupResult(group_id=g, error_code=error) for g in groups]


def _partial(r: Refused) -> Any:
    denied = r.denied[Res.GROUP]
    kept = [g for g in dict.fromkeys(r.body.groups_names) if g not in denied]
    refused = [g for g in dict.fromkeys(r.body.groups_names) if g in denied]
    extra = _refused_groups(r.handler.response, refused, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    return served_and_refused(r, "groups_names", kept, "results", extra)


def _refusal(api: KafkaApi, request: Any, version: int, error: int) -> Any:
    """Kafka's getErrorResponse: each group with the error."""
    return api.empty_response(
        version, results=_refused_groups(api.response, dict.fromkeys(request.groups_names), error)
    )


API = KafkaApi(
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    (0, 2),
    handle_delete_groups,
    authorization=Checks(
        (Check(Res.GROUP, Op.DELETE, lambda r, v, c: list(r.groups_names)),),
        PartialAnswer(frozenset({Res.GROUP}), _partial),
    ),
    refusal=_refusal,
    read_only=False,
    cluster=refuse_unless_coordinator(groups_in("groups_names")),
)
