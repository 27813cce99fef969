"""CreateTopics (key 19): v2-7. Topics with partition counts or explicit assignments, configs, -1
defaults and validate_only. A request whose topics would take Kafka's controller more than 10,000
metadata records (a topic, its partitions, its configs) fails whole with POLICY_VIOLATION, as in Kafka.

Authorization: CREATE per topic, or CREATE on the cluster for all of them (Kafka's hasClusterAuth);
a refused topic answers "Authorization failed.".

Version notes:
(v0-1 are not served)
- v2: throttle time; v3: the response is sent before the client is throttled.
- v4: partitions and replication factor may be -1 without assignments (KIP-464).
- v5: flexible versions; the created topic's configs in the response (KIP-525).
- v6: THROTTLING_QUOTA_EXCEEDED (KIP-599).
- v7: the created topic's id.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.catalog import EXCESSIVELY_LARGE_BATCH, MAX_RECORDS_PER_USER_OP
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import ZERO_UUID
from trafka.schema_codec.messages import (
    CreateTopicsRequest,
    CreateTopicsResponse,
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
    shallow,
)
from .common.mutation_quota import MutationQuota, mutation_quota, mutation_quota_use, take, throttle_of

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


VERSIONS = (2, 7)


CreateResult = CreateTopicsResponse.CreatableTopicResult  # a class built at run time: Any to mypy


def check_assignment(ctx: Uses, broker_lists) -> None:
    for brokers in broker_lists:
        if list(brokers) != [ctx.policy.node_id]:
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"Replica assignment {list(brokers)} names brokers other than {ctx.policy.node_id}",
            )


def _create_one(
    ctx: Uses, creatable, validate_only: bool, version: int, quota: MutationQuota | None = None
) -> Any:  # a CreateResult
    try:
        num_partitions = creatable.num_partitions
        replication_factor = creatable.replication_factor
        if creatable.assignments:
            if num_partitions != -1 or replication_factor != -1:
                raise KafkaError(
                    ErrorCode.INVALID_REQUEST,
                    "Both numPartitions or replicationFactor and replicasAssignments were set.",
                )
            ordered = sorted(creatable.assignments, key=lambda a: a.partition_index)
            if [a.partition_index for a in ordered] != list(range(len(ordered))):
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "Partitions must be numbered from 0")
            check_assignment(ctx, (a.broker_ids for a in ordered))
            num_partitions, replication_factor = len(ordered), 1
        configs = {c.name: c.value for c in creatable.configs}
        if quota is not None:  # validated first, then its partitions taken from the quota (Kafka's order)
            checked = ctx.catalog.create(
                creatable.name, num_partitions, replication_factor, configs, validate_only=True
            )
            take(quota, checked.partition_count)
        topic = ctx.catalog.create(
            creatable.name, num_partitions, replication_factor, configs, validate_only=validate_only
        )
    except KafkaError as error:
        return CreateResult(
            name=creatable.name,
            topic_id=ZERO_UUID,
            error_code=error.code,
            error_message=error.message,
            num_partitions=-1,
            replication_factor=-1,
            configs=[],
        )
    return CreateResult(
        name=topic.name,
        topic_id=topic.topic_id,
        error_code=ErrorCode.NONE,
        error_message=None,
        num_partitions=topic.partition_count,
        replication_factor=1,
        configs=[
            CreateResult.CreatableTopicConfigs(
                name=e.name, value=e.value, read_only=e.read_only, config_source=e.source, is_sensitive=False
            )
            for e in ctx.policy.describe_topic(topic.configs, None)
        ],
    )


def _metadata_records(ctx: Uses, request: CreateTopicsRequest, counts: Counter) -> int:
    """The records Kafka's controller would write for the topics it would create."""
    records = 0
    for creatable in request.topics:
        if counts[creatable.name] > 1 or ctx.catalog.get(creatable.name) is not None:
            continue
        partitions = len(creatable.assignments) if creatable.assignments else creatable.num_partitions
        if partitions == -1:
            partitions = ctx.policy.num_partitions
        records += 1 + max(partitions, 0) + len(creatable.configs)
    return records


def _refused_whole(request: CreateTopicsRequest, version: int, error: ErrorCode, message: str) -> CreateTopicsResponse:
    return CreateTopicsResponse(
        version=version,
        throttle_time_ms=0,
        topics=[
            CreateResult(
                name=t.name,
                topic_id=ZERO_UUID,
                error_code=error,
                error_message=message,
                num_partitions=-1,
                replication_factor=-1,
                configs=[],
            )
            for t in request.topics
        ],
    )


def handle_create_topics(
    ctx: Uses, request: CreateTopicsRequest, version: int, client: ClientInfo
) -> CreateTopicsResponse:
    counts = Counter(t.name for t in request.topics)
    if _metadata_records(ctx, request, counts) > MAX_RECORDS_PER_USER_OP:  # nothing is created
        return _refused_whole(request, version, ErrorCode.POLICY_VIOLATION, EXCESSIVELY_LARGE_BATCH)
    quota = mutation_quota(ctx, client, version, strict_since=6)
    results = []
    for creatable in request.topics:
        if counts[creatable.name] > 1:
            results.append(
                CreateResult(
                    name=creatable.name,
                    topic_id=ZERO_UUID,
                    error_code=ErrorCode.INVALID_REQUEST,
                    error_message="Duplicate topic name.",
                    num_partitions=-1,
                    replication_factor=-1,
                    configs=[],
                )
            )
            continue
        results.append(_create_one(ctx, creatable, request.validate_only, version, quota))
    return CreateTopicsResponse(version=version, throttle_time_ms=throttle_of(quota), topics=results)


def _refusal_entries(response_class: Any, request: Any, version: int, error: int) -> Any:
    result = response_class.CreatableTopicResult
    return response_class(
        version=version, throttle_time_ms=0, topics=[result(name=t.name, error_code=error) for t in request.topics]
    )


def _partial(r: Refused) -> Any:
    denied = r.topics()
    refused = [t for t in r.body.topics if t.name in denied]
    failed = r.handler.refuse(shallow(r.body, topics=refused), r.version, TOPIC_REFUSED)
    for result in failed.topics:
        result.error_message = "Authorization failed."
    kept = [t for t in r.body.topics if t.name not in denied]
    return served_and_refused(r, "topics", kept, "topics", failed.topics)


def _refusal(api: KafkaApi, request: Any, version: int, error: int) -> Any:
    return _refusal_entries(api.response, request, version, error)


API = KafkaApi(
    CreateTopicsRequest,
    CreateTopicsResponse,
    VERSIONS,
    handle_create_topics,
    authorization=Checks(
        (Check(Res.TOPIC, Op.CREATE, topic_names(), cluster_grants=Op.CREATE),), PartialAnswer(TOPICS, _partial)
    ),
    refusal=_refusal,
    read_only=False,
    quota=mutation_quota_use,
)
