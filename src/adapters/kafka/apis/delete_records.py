"""DeleteRecords (key 21): v0-2. Moves partitions' log start offsets forward.

Authorization: DELETE per topic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import (
    DeleteRecordsRequest,
    DeleteRecordsResponse,
)

from ..api import KafkaApi
from ..connection.cluster import refuse_unless_leader
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, topic_names
from ..security.partial import (
    TOPIC_REFUSED,
    TOPICS,
    PartialAnswer,
    Refused,
    served_and_refused,
)

if TYPE_CHECKING:
    from trafka.domain.replica_manager import ReplicaManager


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    replicas: ReplicaManager


DeleteTopic = DeleteRecordsResponse.DeleteRecordsTopicResult


def handle_delete_records(
    ctx: Uses, request: DeleteRecordsRequest, version: int, client: ClientInfo
) -> DeleteRecordsResponse:
    topics = []
    for topic in request.topics:
        partitions = []
        for part in topic.partitions:
            result = ctx.replicas.delete_records(TopicPartition(topic.name, part.partition_index), part.offset)
            partitions.append(
                DeleteTopic.DeleteRecordsPartitionResult(
                    partition_index=part.partition_index, low_watermark=result.offset, error_code=result.error
                )
            )
        topics.append(DeleteTopic(name=topic.name, partitions=partitions))
    return DeleteRecordsResponse(version=version, throttle_time_ms=0, topics=topics)


def _refused_topic(Response: Any, entry: Any, error: int) -> Any:
    """A topic's entry answered with `error`: every partition, low watermark -1 (nothing deleted)."""
    Topic = Response.DeleteRecordsTopicResult
    Partition = Topic.DeleteRecordsPartitionResult
    return Topic(
        name=entry.name,
        partitions=[
            Partition(partition_index=p.partition_index, low_watermark=-1, error_code=error) for p in entry.partitions
        ],
    )


def _partial(r: Refused) -> Any:
    denied = r.topics()
    kept = [t for t in r.body.topics if t.name not in denied]
    extra = [_refused_topic(r.handler.response, t, TOPIC_REFUSED) for t in r.body.topics if t.name in denied]
    return served_and_refused(r, "topics", kept, "topics", extra)


def _refusal(api: KafkaApi, request: Any, version: int, error: int) -> Any:
    """Kafka's getErrorResponse: every partition of every topic with the error."""
    return api.empty_response(version, topics=[_refused_topic(api.response, t, error) for t in request.topics])


def _deleted_partitions(body: Any, ctx: Uses) -> list[TopicPartition]:
    """The simulated cluster's leader check: every partition whose records the request deletes."""
    return [
        TopicPartition(topic.name, partition.partition_index)
        for topic in body.topics or ()
        for partition in topic.partitions or ()
    ]


API = KafkaApi(
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    (0, 2),
    handle_delete_records,
    authorization=Checks((Check(Res.TOPIC, Op.DELETE, topic_names()),), PartialAnswer(TOPICS, _partial)),
    refusal=_refusal,
    read_only=False,
    cluster=refuse_unless_leader(_deleted_partitions),
)
