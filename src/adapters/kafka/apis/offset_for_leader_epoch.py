"""OffsetForLeaderEpoch (key 23): v2-4. The end offset of a leader epoch per partition (KIP-101,
KIP-320): consumers validate their position after a leader change with it. Answered from the
partition's leader epochs (`leader-epoch-checkpoint`, domain/leader_epochs.py) as Kafka's
Partition.lastOffsetForLeaderEpoch does on the leader: the request's current leader epoch is checked
against this broker's (0: FENCED_LEADER_EPOCH below it, UNKNOWN_LEADER_EPOCH above, -1 unchecked), the
latest epoch ends at the log end offset, an unknown epoch answers -1/-1 without an error, an unknown
partition UNKNOWN_TOPIC_OR_PARTITION.

Authorization: DESCRIBE per topic (the consumers' permission since KIP-320; Kafka also lets a holder
of CLUSTER_ACTION, a follower, through for every topic, which a single broker never has); a refused
topic answers TOPIC_AUTHORIZATION_FAILED per partition, the others are served.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse

from ..api import Handle, KafkaApi
from ..cluster import ClusterMap
from ..connection.cluster import then
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, topic_names
from ..security.partial import TOPIC_REFUSED, TOPICS, PartialAnswer, topic_lists

if TYPE_CHECKING:
    from trafka.domain.replica_manager import ReplicaManager


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    replicas: ReplicaManager


TopicResult = OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult
EpochEndOffset = TopicResult.EpochEndOffset


def handle_offset_for_leader_epoch(
    ctx: Uses, request: OffsetForLeaderEpochRequest, version: int, client: ClientInfo
) -> OffsetForLeaderEpochResponse:
    topics = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            error, epoch, end_offset = ctx.replicas.end_offset_for_epoch(
                TopicPartition(topic.topic, p.partition), p.current_leader_epoch, p.leader_epoch
            )
            partitions.append(
                EpochEndOffset(error_code=error, partition=p.partition, leader_epoch=epoch, end_offset=end_offset)
            )
        topics.append(TopicResult(topic=topic.topic, partitions=partitions))
    return OffsetForLeaderEpochResponse(version=version, throttle_time_ms=0, topics=topics)


def _refused_topic(Response: Any, entry: Any, version: int, error: int = TOPIC_REFUSED) -> Any:
    Topic = Response.OffsetForLeaderTopicResult
    return Topic(
        topic=entry.topic,
        partitions=[
            Topic.EpochEndOffset(error_code=error, partition=p.partition, leader_epoch=-1, end_offset=-1)
            for p in entry.partitions
        ],
    )


def _entry_topic(entry: Any, version: int, ctx: Any) -> str:
    return str(entry.topic)


def _refusal(api: KafkaApi, request: Any, version: int, error: int) -> Any:
    """Kafka's getErrorResponse: every partition with the error."""
    return api.empty_response(version, topics=[_refused_topic(api.response, t, version, error) for t in request.topics])


def _in_cluster(
    cluster: ClusterMap,
    node: int,
    api: KafkaApi,
    serve: Handle,
    ctx: Any,
    body: Any,
    version: int,
    client: ClientInfo,
) -> Any:
    """Served (authorization, unknown partitions), then each answered partition re-answered with the
    cluster's leader epoch instead of the store's single-broker epoch 0: NOT_LEADER_OR_FOLLOWER off the
    leader, the current epoch checked as Kafka's Partition.lastOffsetForLeaderEpoch (FENCED_LEADER_EPOCH
    below, UNKNOWN_LEADER_EPOCH above), an epoch above the current one -1/-1, and any other epoch ends at
    the log end offset: the nodes share one log, so no epoch's records were ever truncated."""
    asked = {
        (topic.topic, p.partition): (p.current_leader_epoch, p.leader_epoch)
        for topic in body.topics or ()
        for p in topic.partitions or ()
    }
    recheck = (int(ErrorCode.NONE), int(ErrorCode.FENCED_LEADER_EPOCH), int(ErrorCode.UNKNOWN_LEADER_EPOCH))

    def rewrite(response: Any) -> Any:
        for topic in response.topics or ():
            for partition in topic.partitions or ():
                if partition.error_code not in recheck:
                    continue
                tp = TopicPartition(topic.topic, partition.partition)
                current, wanted = asked.get((tp.topic, tp.partition), (-1, -1))
                leader, epoch = cluster.leader(tp)
                error, answer_epoch, end_offset = ErrorCode.NONE, -1, -1
                if leader != node:
                    error = ErrorCode.NOT_LEADER_OR_FOLLOWER
                elif current != -1 and current < epoch:
                    error = ErrorCode.FENCED_LEADER_EPOCH
                elif current > epoch:
                    error = ErrorCode.UNKNOWN_LEADER_EPOCH
                elif wanted <= epoch:
                    _, _, end_offset = ctx.replicas.end_offset_for_epoch(tp, -1, 0)
                    answer_epoch = wanted
                partition.error_code = int(error)
                partition.leader_epoch, partition.end_offset = answer_epoch, end_offset
        return response

    return then(serve(ctx, body, version, client), rewrite)


API = KafkaApi(
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    (2, 4),
    handle_offset_for_leader_epoch,
    authorization=Checks(
        (Check(Res.TOPIC, Op.DESCRIBE, topic_names(name="topic")),),
        PartialAnswer(TOPICS, topic_lists("topics", "topics", _entry_topic, _refused_topic)),
    ),
    refusal=_refusal,
    read_only=True,
    cluster=_in_cluster,
)
