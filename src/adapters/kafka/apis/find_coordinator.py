"""FindCoordinator (key 10): v0-6. This broker coordinates every group and transactional id.

Authorization: DESCRIBE on the group or transactional id; from v4 each key is answered on its own,
before v4 a refusal is Kafka's old-style answer with no node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import FindCoordinatorRequest, FindCoordinatorResponse

from .. import internal_topics
from ..api import Handle, KafkaApi
from ..cluster import GROUP, TRANSACTION, ClusterMap
from ..connection.cluster import then
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks
from ..security.partial import (
    PartialAnswer,
    Refused,
    served_and_refused,
)

if TYPE_CHECKING:
    from trafka.domain.configs import BrokerPolicy

    from ..internal_topics import InternalTopics


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    policy: BrokerPolicy
    internal_topics: InternalTopics


GROUP_KEY = 0


TRANSACTION_KEY = 1


def _coordinator_for(ctx: Uses, key: str, key_type: int) -> tuple[ErrorCode, str | None]:
    if key_type not in (GROUP_KEY, TRANSACTION_KEY):
        return ErrorCode.INVALID_REQUEST, f"unknown coordinator key type {key_type}"
    # Kafka creates the coordinator's topic when it is first looked for; Metadata lists it from then on
    ctx.internal_topics.create(internal_topics.OFFSETS if key_type == GROUP_KEY else internal_topics.TRANSACTIONS)
    return ErrorCode.NONE, None


def handle_find_coordinator(ctx: Uses, request: FindCoordinatorRequest, version: int, client: ClientInfo):
    node, host, port = ctx.policy.node_id, client.advertised.host, client.advertised.port
    key_type = request.key_type if version >= 1 else GROUP_KEY
    if version < 4:
        error, message = _coordinator_for(ctx, request.key, key_type)
        ok = error is ErrorCode.NONE
        return FindCoordinatorResponse(
            version=version,
            throttle_time_ms=0,
            error_code=error,
            error_message="NONE" if ok else message,  # Kafka's Errors.NONE.message() before v4
            node_id=node if ok else -1,
            host=host if ok else "",
            port=port if ok else -1,
        )
    coordinators = []
    for key in request.coordinator_keys:
        error, message = _coordinator_for(ctx, key, key_type)
        ok = error is ErrorCode.NONE
        coordinators.append(
            FindCoordinatorResponse.Coordinator(
                key=key,
                node_id=node if ok else -1,
                host=host if ok else "",
                port=port if ok else -1,
                error_code=error,
                error_message=message or "",  # v4+: Kafka sets no message, the field's default ""
            )
        )
    return FindCoordinatorResponse(version=version, throttle_time_ms=0, coordinators=coordinators)


Names = Callable[[Any, int, Any], Iterable[str]]  # (request, version, ctx) -> resource names


def _coordinator_keys(key_type: int) -> Names:
    def names(request, version, ctx) -> list[str]:
        if request.key_type != key_type:
            return []
        return list(request.coordinator_keys) if version >= 4 else [request.key]

    return names


def _partial(r: Refused) -> Any:
    """v4+ answers each key; before v4 the one key's refusal is the whole answer (`whole` below)."""
    key_type = r.body.key_type
    resource, error = (
        (Res.GROUP, ErrorCode.GROUP_AUTHORIZATION_FAILED)
        if key_type == 0
        else (Res.TRANSACTIONAL_ID, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    )
    denied = r.denied.get(resource, set())
    Coordinator = r.handler.response.Coordinator
    kept = [k for k in r.body.coordinator_keys if k not in denied]
    extra = [
        Coordinator(key=k, node_id=-1, host="", port=-1, error_code=error, error_message="")
        for k in r.body.coordinator_keys
        if k in denied
    ]
    return served_and_refused(r, "coordinator_keys", kept, "coordinators", extra)


def no_coordinator(handler: Any, body: Any, version: int, error: int) -> Any:
    """FindCoordinator before v4 refused: Kafka's old-style answer, no node."""
    return handler.response(
        version=version,
        throttle_time_ms=0,
        error_code=error,
        error_message=ErrorCode.of(error).message,
        node_id=-1,
        host="",
        port=-1,
    )


def _refusal(api: KafkaApi, request: Any, version: int, error: int) -> Any | None:
    return no_coordinator(api, request, version, error) if version < 4 else None


def _in_cluster(
    cluster: ClusterMap,
    node: int,
    api: KafkaApi,
    serve: Handle,
    ctx: Any,
    body: Any,
    version: int,
    client: ClientInfo,
) -> Any:
    """On a simulated cluster: each group's and transactional id's coordinator, with its address."""

    def place(entry: Any, key: str, key_type: int) -> None:
        if entry.error_code != 0 or key_type not in (GROUP, TRANSACTION):
            return
        owner = cluster.coordinator(key, key_type)
        endpoint = cluster.endpoints.get(owner)
        if endpoint is not None:
            entry.node_id, entry.host, entry.port = owner, endpoint.host, endpoint.port

    def rewrite(response: Any) -> Any:
        key_type = getattr(body, "key_type", GROUP) or GROUP
        if version >= 4:
            for entry in response.coordinators or ():
                place(entry, entry.key, key_type)
        else:
            place(response, body.key, key_type)
        return response

    return then(serve(ctx, body, version, client), rewrite)


API = KafkaApi(
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    (0, 6),
    handle_find_coordinator,
    authorization=Checks(
        (
            Check(Res.GROUP, Op.DESCRIBE, _coordinator_keys(GROUP_KEY)),
            Check(Res.TRANSACTIONAL_ID, Op.DESCRIBE, _coordinator_keys(TRANSACTION_KEY)),
        ),
        PartialAnswer(frozenset({Res.GROUP, Res.TRANSACTIONAL_ID}), _partial, min_version=4),
    ),
    refusal=_refusal,
    read_only=True,
    cluster=_in_cluster,
)
