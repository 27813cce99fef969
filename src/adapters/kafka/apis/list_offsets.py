"""ListOffsets (key 2): v1-11. Earliest, latest, max timestamp and by-timestamp offsets per partition;
earliest local (-4, v8+) is the log start offset, latest tiered (-5, v9+) and earliest pending upload
(-6, v11+) answer offset and timestamp -1 with leader epoch -1, as Kafka does for a topic without tiered
storage. A special timestamp before the version that introduced it (or an unknown negative one) is
UNSUPPORTED_VERSION for that partition, as Kafka's ReplicaManager answers it. v10's TimeoutMs is for
remote reads: nothing waits here. Kafka's internal topics that exist are answered like any topic (ADR 108).

Authorization: DESCRIBE per topic; a refused partition answers -1 offset and timestamp.

Version notes:
(v0 is not served)
- v1: one offset and its timestamp per partition; v2: IsolationLevel and throttle time.
- v3: the response is sent before the client is throttled.
- v4: CurrentLeaderEpoch and each answer's LeaderEpoch; v5: OFFSET_NOT_AVAILABLE.
- v6: flexible versions.
- v7: by max timestamp (-3, KIP-734); v8: the local log start offset (-4, KIP-405).
- v9: the last tiered offset (-5, KIP-1005); v10: TimeoutMs (KIP-1075).
- v11: the earliest pending upload offset (-6, KIP-1023).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.offset_lookup import OffsetResult
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import ListOffsetsRequest, ListOffsetsResponse

from ..api import KafkaApi, top_level_error
from ..connection.cluster import fail_partitions
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


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    replicas: ReplicaManager


VERSIONS = (1, 11)


LEADER_EPOCH = 0

TIMESTAMP_MIN_VERSION = {-1: 1, -2: 1, -3: 7, -4: 8, -5: 9, -6: 11}
"""The first version that carries each special timestamp (Kafka's timestampMinSupportedVersion)."""


def _unsupported(timestamp: int, version: int) -> bool:
    return timestamp < 0 and version < TIMESTAMP_MIN_VERSION.get(timestamp, 1 << 15)


TopicResponse = ListOffsetsResponse.ListOffsetsTopicResponse


PartitionResponse = TopicResponse.ListOffsetsPartitionResponse


def handle_list_offsets(
    ctx: Uses, request: ListOffsetsRequest, version: int, client: ClientInfo
) -> ListOffsetsResponse:
    topics = []
    for topic in request.topics:
        partitions = []
        for part in topic.partitions:
            if _unsupported(part.timestamp, version):
                result = OffsetResult(ErrorCode.UNSUPPORTED_VERSION)
            else:
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


def _refused_topic(Response, entry, version: int) -> Any:
    Topic = Response.ListOffsetsTopicResponse
    Partition = Topic.ListOffsetsPartitionResponse
    return Topic(
        name=entry.name,
        partitions=[
            Partition(
                partition_index=p.partition_index,
                error_code=TOPIC_REFUSED,
                old_style_offsets=[],
                timestamp=-1,
                offset=-1,
                leader_epoch=-1,
            )
            for p in entry.partitions
        ],
    )


API = KafkaApi(
    ListOffsetsRequest,
    ListOffsetsResponse,
    VERSIONS,
    handle_list_offsets,
    authorization=Checks(
        (Check(Res.TOPIC, Op.DESCRIBE, topic_names()),),
        PartialAnswer(TOPICS, topic_lists("topics", "topics", entry_name, _refused_topic)),
    ),
    refusal=top_level_error,
    read_only=True,
    cluster=fail_partitions("topics", "partition_index"),
)
