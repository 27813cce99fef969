"""DeleteRecords (key 21): v0-2. Moves partitions' log start offsets forward.

Authorization: DELETE per topic.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import (
    DeleteRecordsRequest,
    DeleteRecordsResponse,
)

from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition

from ..api import KafkaApi, top_level_error
from ..context import BrokerContext, ClientInfo
from ..security.authorization import Check, Checks, topic_names
from ..security.partial import (
    TOPIC_REFUSED,
    TOPICS,
    PartialAnswer,
    Refused,
    served_and_refused,
)

DeleteTopic = DeleteRecordsResponse.DeleteRecordsTopicResult


def handle_delete_records(
    ctx: BrokerContext, request: DeleteRecordsRequest, version: int, client: ClientInfo
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


def _partial(r: Refused) -> Any:
    Topic = r.handler.response.DeleteRecordsTopicResult
    Partition = Topic.DeleteRecordsPartitionResult
    denied = r.topics()
    kept = [t for t in r.body.topics if t.name not in denied]
    extra = [
        Topic(
            name=t.name,
            partitions=[
                Partition(partition_index=p.partition_index, low_watermark=-1, error_code=TOPIC_REFUSED)
                for p in t.partitions
            ],
        )
        for t in r.body.topics
        if t.name in denied
    ]
    return served_and_refused(r, "topics", kept, "topics", extra)


API = KafkaApi(
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    (0, 2),
    handle_delete_records,
    authorization=Checks((Check(Res.TOPIC, Op.DELETE, topic_names()),), PartialAnswer(TOPICS, _partial)),
    refusal=top_level_error,
    read_only=False,
)
