"""DeleteGroups (key 42): v0-3. Empty groups and their committed offsets. v3 (Kafka 4.4, KIP-1331)
answers each failed group with an error message too: the error's own (Kafka's Errors message).

Authorization: DELETE per group.

Version notes:
- v1: the response is sent before the client is throttled.
- v2: flexible versions.
- v3: a per-group ErrorMessage (Kafka 4.4).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import DeleteGroupsRequest, DeleteGroupsResponse

from ..api import KafkaApi
from ..connection.cluster import groups_in, refuse_unless_coordinator
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks
from ..security.partial import (
    PartialAnswer,
    Refused,
    served_and_refused,
)

if TYPE_CHECKING:
    from ..runtime.group_runtime import GroupRuntime
    from ..runtime.share_runtime import ShareRuntime


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    groups: GroupRuntime
    share: ShareRuntime | None


MESSAGES_FROM = 3


def delete_group(ctx: Uses, group_id: str) -> ErrorCode:
    """A share group (and its share-partitions' state) if it is one, else a classic or consumer group; also
    the console's delete action (which commits it itself)."""
    share = ctx.share
    if share is not None and group_id in share.groups.coordinator.groups:
        return share.groups.delete(group_id)  # its GROUP configs stay, as Kafka keeps them
    return ctx.groups.delete_group(group_id)


def handle_delete_groups(
    ctx: Uses, request: DeleteGroupsRequest, version: int, client: ClientInfo
) -> DeleteGroupsResponse:
    results = [_result(DeleteGroupsResponse, g, delete_group(ctx, g), version) for g in request.groups_names]
    return DeleteGroupsResponse(version=version, throttle_time_ms=0, results=results)


def _result(Response: Any, group_id: str, error: int, version: int) -> Any:
    message = ErrorCode.of(error).message if error and version >= MESSAGES_FROM else None
    return Response.DeletableGroupResult(group_id=group_id, error_code=error, error_message=message)


def _refused_groups(Response: Any, groups: Iterable[str], error: int, version: int) -> list[Any]:
    return [_result(Response, g, error, version) for g in groups]


def _partial(r: Refused) -> Any:
    denied = r.denied[Res.GROUP]
    kept = [g for g in dict.fromkeys(r.body.groups_names) if g not in denied]
    refused = [g for g in dict.fromkeys(r.body.groups_names) if g in denied]
    extra = _refused_groups(r.handler.response, refused, ErrorCode.GROUP_AUTHORIZATION_FAILED, r.version)
    return served_and_refused(r, "groups_names", kept, "results", extra)


def _refusal(api: KafkaApi, request: Any, version: int, error: int) -> Any:
    """Kafka's getErrorResponse: each group with the error."""
    return api.empty_response(
        version, results=_refused_groups(api.response, dict.fromkeys(request.groups_names), error, version)
    )


API = KafkaApi(
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    (0, 3),
    handle_delete_groups,
    authorization=Checks(
        (Check(Res.GROUP, Op.DELETE, lambda r, v, c: list(r.groups_names)),),
        PartialAnswer(frozenset({Res.GROUP}), _partial),
    ),
    refusal=_refusal,
    read_only=False,
    cluster=refuse_unless_coordinator(groups_in("groups_names")),
)
