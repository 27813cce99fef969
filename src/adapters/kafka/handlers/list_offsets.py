"""ListOffsets: earliest (-2), latest (-1), max timestamp (-3) and by timestamp.

On a single node with no transactions yet, the last stable offset equals the high watermark, so
read_committed answers the same as read_uncommitted.
"""

from __future__ import annotations

from kafka.protocol.consumer import ListOffsetsRequest, ListOffsetsResponse

from trafka.domain.topics import TopicPartition

from ..api import HandlerRegistry
from ..context import BrokerContext, ClientInfo

VERSIONS = (1, 8)
LEADER_EPOCH = 0

TopicResponse = ListOffsetsResponse.ListOffsetsTopicResponse
PartitionResponse = TopicResponse.ListOffsetsPartitionResponse


def handle_list_offsets(
    ctx: BrokerContext, request: ListOffsetsRequest, version: int, client: ClientInfo
) -> ListOffsetsResponse:
    topics = []
    for topic in request.topics:
        partitions = []
        for part in topic.partitions:
            result = ctx.replicas.list_offset(
                TopicPartition(topic.name, part.partition_index),
                part.timestamp,
                read_committed=version >= 2 and request.isolation_level == 1,
            )
            partitions.append(
                PartitionResponse(
                    partition_index=part.partition_index,
                    error_code=result.error,
                    timestamp=result.timestamp,
                    offset=result.offset,
                    leader_epoch=LEADER_EPOCH if result.offset >= 0 else -1,
                )
            )
        topics.append(TopicResponse(name=topic.name, partitions=partitions))
    return ListOffsetsResponse(version=version, throttle_time_ms=0, topics=topics)


def register(registry: HandlerRegistry) -> None:
    registry.register(ListOffsetsRequest, ListOffsetsResponse, VERSIONS, handle_list_offsets)
