"""CreateTopics, DeleteTopics and CreatePartitions, each answered per topic.

A manual replica assignment is accepted only when it names this broker alone, the one broker of a
single-node cluster; anything else is INVALID_REPLICA_ASSIGNMENT, as Kafka answers for unknown brokers.
A topic named twice in one request gets INVALID_REQUEST, as in Kafka.
"""

from __future__ import annotations

from collections import Counter

from kafka.protocol.admin import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
)

from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.topics import ZERO_UUID

from ..api import HandlerRegistry
from ..context import BrokerContext, ClientInfo

CREATE_VERSIONS = (2, 7)
DELETE_VERSIONS = (1, 6)
PARTITIONS_VERSIONS = (0, 3)

CreateResult = CreateTopicsResponse.CreatableTopicResult


def _check_assignment(ctx: BrokerContext, broker_lists) -> None:
    for brokers in broker_lists:
        if list(brokers) != [ctx.policy.node_id]:
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"Replica assignment {list(brokers)} names brokers other than {ctx.policy.node_id}",
            )


def _create_one(ctx: BrokerContext, creatable, validate_only: bool, version: int) -> CreateResult:
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
            _check_assignment(ctx, (a.broker_ids for a in ordered))
            num_partitions, replication_factor = len(ordered), 1
        configs = {c.name: c.value for c in creatable.configs}
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
            configs=None,
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


def handle_create_topics(
    ctx: BrokerContext, request: CreateTopicsRequest, version: int, client: ClientInfo
) -> CreateTopicsResponse:
    counts = Counter(t.name for t in request.topics)
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
                    configs=None,
                )
            )
            continue
        results.append(_create_one(ctx, creatable, request.validate_only, version))
    return CreateTopicsResponse(version=version, throttle_time_ms=0, topics=results)


DeleteResult = DeleteTopicsResponse.DeletableTopicResult


def handle_delete_topics(
    ctx: BrokerContext, request: DeleteTopicsRequest, version: int, client: ClientInfo
) -> DeleteTopicsResponse:
    if version >= 6:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(name, None) for name in request.topic_names]
    results = []
    for name, topic_id in wanted:
        try:
            if name is None:
                topic = ctx.catalog.delete_by_id(topic_id)
            else:
                topic = ctx.catalog.get(name)
                if topic is not None and topic.is_internal:
                    raise KafkaError(ErrorCode.INVALID_REQUEST, f"Internal topic {name} cannot be deleted")
                topic = ctx.catalog.delete(name)
            ctx.groups.offsets.forget_topic(topic.name)
            results.append(DeleteResult(name=topic.name, topic_id=topic.topic_id, error_code=0, error_message=None))
        except KafkaError as error:
            results.append(
                DeleteResult(
                    name=name, topic_id=topic_id or ZERO_UUID, error_code=error.code, error_message=error.message
                )
            )
    return DeleteTopicsResponse(version=version, throttle_time_ms=0, responses=results)


PartitionsResult = CreatePartitionsResponse.CreatePartitionsTopicResult


def handle_create_partitions(
    ctx: BrokerContext, request: CreatePartitionsRequest, version: int, client: ClientInfo
) -> CreatePartitionsResponse:
    counts = Counter(t.name for t in request.topics)
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
            ctx.catalog.create_partitions(topic.name, topic.count, validate_only=request.validate_only)
            results.append(PartitionsResult(name=topic.name, error_code=0, error_message=None))
        except KafkaError as error:
            results.append(PartitionsResult(name=topic.name, error_code=error.code, error_message=error.message))
    return CreatePartitionsResponse(version=version, throttle_time_ms=0, results=results)


def register(registry: HandlerRegistry) -> None:
    registry.register(CreateTopicsRequest, CreateTopicsResponse, CREATE_VERSIONS, handle_create_topics)
    registry.register(DeleteTopicsRequest, DeleteTopicsResponse, DELETE_VERSIONS, handle_delete_topics)
    registry.register(CreatePartitionsRequest, CreatePartitionsResponse, PARTITIONS_VERSIONS, handle_create_partitions)
