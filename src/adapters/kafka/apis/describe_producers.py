"""DescribeProducers (key 61): v0. The active idempotent and transactional producers of partitions.

Authorization: READ per topic.

Version notes:
- v0 only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import (
    DescribeProducersRequest,
    DescribeProducersResponse,
)

from ..api import KafkaApi, top_level_error
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, topic_names
from ..security.partial import (
    TOPIC_REFUSED,
    TOPICS,
    PartialAnswer,
    entry_name,
    topic_lists,
)

if TYPE_CHECKING:
    from trafka.domain.replica_manager import ReplicaManager

    from ..internal_topics import InternalTopics


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    replicas: ReplicaManager
    internal_topics: InternalTopics


ProducersTopic = DescribeProducersResponse.TopicResponse


def handle_describe_producers(
    ctx: Uses, request: DescribeProducersRequest, version: int, client: ClientInfo
) -> DescribeProducersResponse:
    topics = []
    for topic in request.topics:
        partitions = []
        for index in topic.partition_indexes:
            active = ctx.replicas.active_producers(TopicPartition(topic.name, index))
            internal = ctx.internal_topics.get(topic.name)
            if active is None and internal is not None and 0 <= index < internal.partition_count:
                active = []  # an internal topic Metadata lists: trafka keeps no producers in it (ADR 64)
            partitions.append(
                ProducersTopic.PartitionResponse(
                    partition_index=index,
                    error_code=ErrorCode.NONE if active is not None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    error_message=None if active is not None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.message,
                    active_producers=[
                        ProducersTopic.PartitionResponse.ProducerState(
                            producer_id=p.producer_id,
                            producer_epoch=p.epoch,
                            last_sequence=p.last_sequence if p.last_sequence is not None else -1,
                            last_timestamp=p.last_timestamp,  # of its last batch or marker, as Kafka's
                            coordinator_epoch=0,
                            current_txn_start_offset=p.current_txn_first_offset
                            if p.current_txn_first_offset is not None
                            else -1,
                        )
                        for p in active or []
                    ],
                )
            )
        topics.append(ProducersTopic(name=topic.name, partitions=partitions))
    return DescribeProducersResponse(version=version, throttle_time_ms=0, topics=topics)


def _refused_topic(Response, entry, version: int) -> Any:
    Topic = Response.TopicResponse
    Partition = Topic.PartitionResponse
    return Topic(
        name=entry.name,
        partitions=[
            Partition(
                partition_index=p, error_code=TOPIC_REFUSED, error_message=TOPIC_REFUSED.message, active_producers=[]
            )
            for p in entry.partition_indexes
        ],
    )


API = KafkaApi(
    DescribeProducersRequest,
    DescribeProducersResponse,
    (0, 0),
    handle_describe_producers,
    authorization=Checks(
        (Check(Res.TOPIC, Op.READ, topic_names()),),
        PartialAnswer(TOPICS, topic_lists("topics", "topics", entry_name, _refused_topic)),
    ),
    refusal=top_level_error,
    read_only=True,
)
