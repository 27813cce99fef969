"""CreatePartitions (key 37): v0-3. More partitions for existing topics, with optional assignments.

Authorization: ALTER per topic.

Version notes:
- v1: the response is sent before the client is throttled.
- v2: flexible versions.
- v3: THROTTLING_QUOTA_EXCEEDED when the controller mutation quota is exceeded (KIP-599).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.catalog import EXCESSIVELY_LARGE_BATCH, MAX_RECORDS_PER_USER_OP
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
)

from ..api import KafkaApi
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, topic_names
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
    from trafka.domain.configs import BrokerPolicy
    from trafka.domain.quotas import QuotaSensors


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    policy: BrokerPolicy
    clock_ms: Callable[[], int]
    quotas: QuotaSensors


VERSIONS = (0, 3)


def _check_assignment(ctx: Uses, broker_lists) -> None:
    for brokers in broker_lists:
        if list(brokers) != [ctx.policy.node_id]:
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"Replica assignment {list(brokers)} names brokers other than {ctx.policy.node_id}",
            )


PartitionsResult = CreatePartitionsResponse.CreatePartitionsTopicResult


def handle_create_partitions(
    ctx: Uses, request: CreatePartitionsRequest, version: int, client: ClientInfo
) -> CreatePartitionsResponse:
    counts = Counter(t.name for t in request.topics)
    added = 0  # Kafka's controller writes a PartitionRecord per new partition: at most 10,000 per request
    for topic in request.topics:
        existing = ctx.catalog.get(topic.name)
        if counts[topic.name] == 1 and existing is not None:
            added += max(topic.count - existing.partition_count, 0)
    if added > MAX_RECORDS_PER_USER_OP:
        return CreatePartitionsResponse(
            version=version,
            throttle_time_ms=0,
            results=[
                PartitionsResult(
                    name=t.name, error_code=ErrorCode.POLICY_VIOLATION, error_message=EXCESSIVELY_LARGE_BATCH
                )
                for t in request.topics
            ],
        )
    quota = mutation_quota(ctx, client, version, strict_since=3)
    results = []
    for topic in request.topics:
        try:
            if counts[topic.name] > 1:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Duplicate topic in request.")
            existing = ctx.catalog.get(topic.name)
            if topic.assignments is not None and existing is not None:
                if len(topic.assignments) != topic.count - existing.partition_count:
                    raise KafkaError(
                        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                        "The number of assignments does not match the number of new partitions.",
                    )
                _check_assignment(ctx, (a.broker_ids for a in topic.assignments))
            if quota is not None and existing is not None:  # validated first, then the new partitions taken
                ctx.catalog.create_partitions(topic.name, topic.count, validate_only=True)
                take(quota, topic.count - existing.partition_count)
            ctx.catalog.create_partitions(topic.name, topic.count, validate_only=request.validate_only)
            results.append(PartitionsResult(name=topic.name, error_code=0, error_message=None))
        except KafkaError as error:
            results.append(PartitionsResult(name=topic.name, error_code=error.code, error_message=error.message))
    return CreatePartitionsResponse(version=version, throttle_time_ms=throttle_of(quota), results=results)


def _refused_topic(Response: Any, name: str, error: int, message: str | None) -> Any:
    return Response.CreatePartitionsTopicResult(name=name, error_code=error, error_message=message)


def _partial(r: Refused) -> Any:
    denied = r.topics()
    kept = [t for t in r.body.topics if t.name not in denied]
    extra = [_refused_topic(r.handler.response, t.name, TOPIC_REFUSED, None) for t in r.body.topics if t.name in denied]
    return served_and_refused(r, "topics", kept, "results", extra)


def _refusal(api: KafkaApi, request: Any, version: int, error: int) -> Any:
    """Kafka's getErrorResponse: each topic with the error and its message."""
    message = ErrorCode.of(error).message
    return api.empty_response(
        version, results=[_refused_topic(api.response, t.name, error, message) for t in request.topics]
    )


API = KafkaApi(
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    VERSIONS,
    handle_create_partitions,
    authorization=Checks((Check(Res.TOPIC, Op.ALTER, topic_names()),), PartialAnswer(TOPICS, _partial)),
    refusal=_refusal,
    read_only=False,
    quota=mutation_quota_use,
)
