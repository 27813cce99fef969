"""DeleteTopics (key 20): v1-6. By name, and from v6 by topic id.

Authorization: DELETE per topic, or DELETE on the cluster. A topic the principal may not DESCRIBE is
refused whether it exists or not, a describable but absent one is UNKNOWN_TOPIC_OR_PARTITION (so
existence leaks only to those who may see it), and one named by id and not describable is refused
without its name.

Version notes:
(v0 is not served)
- v1: throttle time; v2: the response is sent before the client is throttled.
- v3: TOPIC_DELETION_DISABLED may be answered.
- v4: flexible versions.
- v5: ErrorMessage, THROTTLING_QUOTA_EXCEEDED (KIP-599).
- v6: topics by name or by id, answered with their ids (UNKNOWN_TOPIC_ID).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import ZERO_UUID
from trafka.schema_codec.messages import (
    DeleteTopicsRequest,
    DeleteTopicsResponse,
)

from ..api import KafkaApi
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks
from ..security.partial import (
    TOPIC_REFUSED,
    TOPICS,
    PartialAnswer,
    Refused,
    served_and_refused,
)
from .common.mutation_quota import mutation_quota, mutation_quota_use, take, throttle_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from trafka.domain.catalog import TopicCatalog
    from trafka.domain.quotas import QuotaSensors

    from ..runtime.group_runtime import GroupRuntime
    from ..runtime.share_runtime import ShareRuntime


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    groups: GroupRuntime
    clock_ms: Callable[[], int]
    quotas: QuotaSensors
    share: ShareRuntime | None


VERSIONS = (1, 6)


DeleteResult = DeleteTopicsResponse.DeletableTopicResult


def handle_delete_topics(
    ctx: Uses, request: DeleteTopicsRequest, version: int, client: ClientInfo
) -> DeleteTopicsResponse:
    if version >= 6:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(name, None) for name in request.topic_names]
    quota = mutation_quota(ctx, client, version, strict_since=5)
    results = []
    for name, topic_id in wanted:
        try:
            if quota is not None:
                doomed = ctx.catalog.get(name) if name is not None else ctx.catalog.by_id(topic_id)
                if doomed is not None and not doomed.is_internal:
                    take(quota, doomed.partition_count)
            if name is None:
                topic = ctx.catalog.delete_by_id(topic_id)
            else:
                found = ctx.catalog.get(name)
                if found is not None and found.is_internal:
                    raise KafkaError(ErrorCode.INVALID_REQUEST, f"Internal topic {name} cannot be deleted")
                topic = ctx.catalog.delete(name)
            ctx.groups.offsets.forget_topic(topic.name)
            if ctx.share is not None:
                ctx.share.groups.topic_deleted(topic.topic_id)  # its share-group state's tombstones, at the commit
            results.append(DeleteResult(name=topic.name, topic_id=topic.topic_id, error_code=0, error_message=None))
        except KafkaError as error:
            results.append(
                DeleteResult(
                    name=name,
                    topic_id=topic_id or ZERO_UUID,
                    error_code=error.code,
                    error_message=error.message or error.code.message,  # Kafka's ApiError(error): the default
                )
            )
    return DeleteTopicsResponse(version=version, throttle_time_ms=throttle_of(quota), responses=results)


def _topic_names(request, version, ctx) -> list[str]:
    if version < 6:
        return list(request.topic_names)
    out = []
    for t in request.topics:
        topic = ctx.catalog.by_id(t.topic_id) if not t.name else None
        out.append(t.name or (topic.name if topic is not None else ""))
    return [n for n in out if n]


def _refusal_entries(response_class: Any, request: Any, version: int, error: int) -> Any:
    result = response_class.DeletableTopicResult
    names = [t.name for t in request.topics] if version >= 6 else list(request.topic_names)
    return response_class(
        version=version, throttle_time_ms=0, responses=[result(name=n, error_code=error) for n in names]
    )


def _partial(r: Refused) -> Any:
    Result = r.handler.response.DeletableTopicResult
    catalog, denied = r.uses.catalog, r.topics()
    message = TOPIC_REFUSED.message if r.version >= 5 else None

    def refusal(name: str | None, topic_id: Any) -> Any:
        return Result(name=name, topic_id=topic_id, error_code=TOPIC_REFUSED, error_message=message)

    def describable(name: str) -> bool:
        return r.allowed(Op.DESCRIBE, Res.TOPIC, name)

    if r.version < 6:
        refused = [n for n in r.body.topic_names if n in denied and (not describable(n) or catalog.get(n) is not None)]
        kept = [n for n in r.body.topic_names if n not in refused]
        extra = [refusal(n, None) for n in refused]
        return served_and_refused(r, "topic_names", kept, "responses", extra)
    kept, extra = [], []
    for entry in r.body.topics:
        if entry.name:
            if entry.name in denied and (not describable(entry.name) or catalog.get(entry.name) is not None):
                extra.append(refusal(entry.name, ZERO_UUID))
                continue
        else:
            topic = catalog.by_id(entry.topic_id)
            if topic is not None and topic.name in denied:
                extra.append(refusal(topic.name if describable(topic.name) else None, entry.topic_id))
                continue
        kept.append(entry)
    return served_and_refused(r, "topics", kept, "responses", extra)


def _refusal(api: KafkaApi, request: Any, version: int, error: int) -> Any:
    return _refusal_entries(api.response, request, version, error)


API = KafkaApi(
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    VERSIONS,
    handle_delete_topics,
    authorization=Checks(
        (Check(Res.TOPIC, Op.DELETE, _topic_names, cluster_grants=Op.DELETE),), PartialAnswer(TOPICS, _partial)
    ),
    refusal=_refusal,
    read_only=False,
    quota=mutation_quota_use,
)
