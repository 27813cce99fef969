"""ElectLeaders (key 43): v0-2. On a one-node cluster every partition already has its preferred
leader, this node: each named partition answers ELECTION_NOT_NEEDED (preferred or unclean), an
unknown one UNKNOWN_TOPIC_OR_PARTITION. With `topic_partitions` null, Kafka's controller
(ReplicationControlManager.electLeaders) lists every topic but leaves out the partitions that needed
no election: here, all of them.

Authorization: ALTER on the cluster; refused, the top-level error (v1+) and every named partition's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import ElectLeadersRequest, ElectLeadersResponse

from ..api import KafkaApi
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, the_cluster

if TYPE_CHECKING:
    from trafka.domain.catalog import TopicCatalog


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog


TopicResult = ElectLeadersResponse.ReplicaElectionResult
PartitionResult = TopicResult.PartitionResult


def _elect(ctx: Uses, tp: TopicPartition) -> tuple[ErrorCode, str]:
    """Kafka's ReplicationControlManager.electLeader on a partition whose leader is its one replica."""
    topic = ctx.catalog.get(tp.topic)
    if topic is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {tp.topic}"
    if not 0 <= tp.partition < topic.partition_count:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {tp.topic}-{tp.partition}"
    return ErrorCode.ELECTION_NOT_NEEDED, ErrorCode.ELECTION_NOT_NEEDED.message


def handle_elect_leaders(
    ctx: Uses, request: ElectLeadersRequest, version: int, client: ClientInfo
) -> ElectLeadersResponse:
    if request.topic_partitions is None:
        results = [TopicResult(topic=topic.name, partition_result=[]) for topic in ctx.catalog.topics()]
    else:
        results = []
        for topic in request.topic_partitions:
            partitions = []
            for partition in topic.partitions:
                error, message = _elect(ctx, TopicPartition(topic.topic, partition))
                partitions.append(PartitionResult(partition_id=partition, error_code=error, error_message=message))
            results.append(TopicResult(topic=topic.topic, partition_result=partitions))
    return ElectLeadersResponse(
        version=version, throttle_time_ms=0, error_code=ErrorCode.NONE, replica_election_results=results
    )


def _refusal(api: KafkaApi, request: ElectLeadersRequest, version: int, error: int) -> ElectLeadersResponse:
    """Kafka's ElectLeadersRequest.getErrorResponse: the error at the top (v1+) and on every partition."""
    message = ErrorCode.of(error).message
    results = [
        TopicResult(
            topic=topic.topic,
            partition_result=[
                PartitionResult(partition_id=partition, error_code=error, error_message=message)
                for partition in topic.partitions
            ],
        )
        for topic in request.topic_partitions or ()
    ]
    return ElectLeadersResponse(version=version, throttle_time_ms=0, error_code=error, replica_election_results=results)


API = KafkaApi(
    ElectLeadersRequest,
    ElectLeadersResponse,
    (0, 2),
    handle_elect_leaders,
    authorization=Checks((Check(Res.CLUSTER, Op.ALTER, the_cluster),)),
    refusal=_refusal,
    read_only=False,
)
