"""DescribeQuorum (key 55): v0-2. The KRaft quorum of a combined-mode single node, as its
KafkaRaftClient.handleDescribeQuorumRequest answers: `__cluster_metadata` partition 0, led by this
node (the one voter, no observers) at epoch 1, its high watermark and the voter's log end offset the
metadata log's end offset (0 with the memory store, which keeps none), the leader's own fetch and
caught-up times now; v2 adds the voter's directory id (the log dir's) and the nodes with their
listeners: a Kafka voter lists its one controller listener; trafka has none, and lists the listener
the request came in on, as advertised (the one this client can reach). Any other topic
or partition is answered UNKNOWN_TOPIC_OR_PARTITION per partition.

Authorization: DESCRIBE on the cluster (ControllerApis); refused, the top-level error.

Version notes:
- v1: each replica's LastFetchTimestamp and LastCaughtUpTimestamp (KIP-836).
- v2: ErrorMessage, the voters' Nodes and ReplicaDirectoryId (KIP-853).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.log_dirs import METADATA_PARTITION
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.schema_codec.messages import DescribeQuorumRequest, DescribeQuorumResponse

from ..api import KafkaApi, top_level_error
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, the_cluster

if TYPE_CHECKING:
    from collections.abc import Callable

    from trafka.domain.configs import BrokerPolicy
    from trafka.domain.replica_manager import ReplicaManager

    from ..request_context import Listening


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    replicas: ReplicaManager
    policy: BrokerPolicy
    clock_ms: Callable[[], int]
    listening: Listening


TopicData = DescribeQuorumResponse.TopicData
PartitionData = TopicData.PartitionData
ReplicaState = PartitionData.ReplicaState
Node = DescribeQuorumResponse.Node
NodeListener = Node.Listener

LEADER_EPOCH = 1
"""The quorum's epoch: the single voter elected itself once, and nothing ever contests it."""


def _asks_for_metadata_partition(request: DescribeQuorumRequest) -> bool:
    """Kafka's hasValidTopicPartition: exactly one topic, the metadata log's, with exactly its partition."""
    return (
        len(request.topics) == 1
        and request.topics[0].topic_name == METADATA_PARTITION.topic
        and len(request.topics[0].partitions) == 1
        and request.topics[0].partitions[0].partition_index == METADATA_PARTITION.partition
    )


def handle_describe_quorum(
    ctx: Uses, request: DescribeQuorumRequest, version: int, client: ClientInfo
) -> DescribeQuorumResponse:
    if not _asks_for_metadata_partition(request):
        topics = [
            TopicData(
                topic_name=topic.topic_name,
                partitions=[
                    PartitionData(
                        partition_index=partition.partition_index,
                        error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                        error_message=None,
                        leader_id=0,
                        leader_epoch=0,
                        high_watermark=0,
                        current_voters=[],
                        observers=[],
                    )
                    for partition in topic.partitions
                ],
            )
            for topic in request.topics
        ]
        return DescribeQuorumResponse(version=version, error_code=ErrorCode.NONE, error_message=None, topics=topics)
    node = ctx.policy.node_id
    end_offset = ctx.replicas.metadata_log_end_offset()
    now = ctx.clock_ms()
    voter = ReplicaState(
        replica_id=node,
        replica_directory_id=ctx.replicas.log_dir().directory_id,
        log_end_offset=end_offset,
        last_fetch_timestamp=now,
        last_caught_up_timestamp=now,
    )
    partition = PartitionData(
        partition_index=METADATA_PARTITION.partition,
        error_code=ErrorCode.NONE,
        error_message=None,
        leader_id=node,
        leader_epoch=LEADER_EPOCH,
        high_watermark=end_offset,
        current_voters=[voter],
        observers=[],
    )
    listeners = ctx.listening.listeners or ()
    nodes = [
        Node(
            node_id=node,
            listeners=[
                NodeListener(name=listener.name, host=listener.advertised_host, port=listener.advertised_port)
                for listener in listeners
                if listener.name == client.listener
            ]
            or [NodeListener(name=client.listener, host=client.advertised.host, port=client.advertised.port)],
        )
    ]
    return DescribeQuorumResponse(
        version=version,
        error_code=ErrorCode.NONE,
        error_message=None,
        topics=[TopicData(topic_name=METADATA_PARTITION.topic, partitions=[partition])],
        nodes=nodes,
    )


API = KafkaApi(
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    (0, 2),
    handle_describe_quorum,
    authorization=Checks((Check(Res.CLUSTER, Op.DESCRIBE, the_cluster),)),
    refusal=top_level_error,
    read_only=True,
)
