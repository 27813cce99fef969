"""DeleteGroups (key 42): v0-2. Empty groups and their committed offsets.

Authorization: DELETE per group.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import (
    DeleteGroupsRequest,
    DeleteGroupsResponse,
)

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res

from ..api import KafkaApi, top_level_error
from ..context import BrokerContext, ClientInfo
from ..security.authorization import Check, Checks
from ..security.partial import (
    PartialAnswer,
    Refused,
    served_and_refused,
)


def handle_delete_groups(
    ctx: BrokerContext, request: DeleteGroupsRequest, version: int, client: ClientInfo
) -> DeleteGroupsResponse:
    results = [
        DeleteGroupsResponse.DeletableGroupResult(group_id=g, error_code=ctx.groups.offsets.delete_group(g))
        for g in request.groups_names
    ]
    return DeleteGroupsResponse(version=version, throttle_time_ms=0, results=results)


def _partial(r: Refused) -> Any:
    Result = r.handler.response.DeletableGroupResult
    denied = r.denied[Res.GROUP]
    kept = [g for g in dict.fromkeys(r.body.groups_names) if g not in denied]
    extra = [
        Result(group_id=g, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
        for g in dict.fromkeys(r.body.groups_names)
        if g in denied
    ]
    return served_and_refused(r, "groups_names", kept, "results", extra)


API = KafkaApi(
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    (0, 2),
    handle_delete_groups,
    authorization=Checks(
        (Check(Res.GROUP, Op.DELETE, lambda r, v, c: list(r.groups_names)),),
        PartialAnswer(frozenset({Res.GROUP}), _partial),
    ),
    refusal=top_level_error,
    read_only=False,
)
