"""The reassignment APIs of a one-broker cluster: AlterPartitionReassignments (key 45): v0 and
ListPartitionReassignments (key 46): v0 (nothing is ever being reassigned).

Authorization: ALTER on the cluster to reassign, DESCRIBE to list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)

from ..api import KafkaApi, top_level_error
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, the_cluster

if TYPE_CHECKING:
    from trafka.domain.catalog import TopicCatalog
    from trafka.domain.configs import BrokerPolicy


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    policy: BrokerPolicy


TopicResponse = AlterPartitionReassignmentsResponse.ReassignableTopicResponse


def _reassign(ctx: Uses, tp: TopicPartition, replicas) -> tuple[ErrorCode, str | None]:
    if not ctx.catalog.has_partition(tp):
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
    if replicas is None:
        return ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, None
    if list(replicas) != [ctx.policy.node_id]:
        return ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"Unknown broker ids in {list(replicas)}"
    return ErrorCode.NONE, None


def handle_alter_partition_reassignments(
    ctx: Uses, request: AlterPartitionReassignmentsRequest, version: int, client: ClientInfo
):
    topics = []
    for topic in request.topics:
        partitions = []
        for part in topic.partitions:
            error, message = _reassign(ctx, TopicPartition(topic.name, part.partition_index), part.replicas)
            partitions.append(
                TopicResponse.ReassignablePartitionResponse(
                    partition_index=part.partition_index, error_code=error, error_message=message
                )
            )
        topics.append(TopicResponse(name=topic.name, partitions=partitions))
    return AlterPartitionReassignmentsResponse(
        version=version,
        throttle_time_ms=0,
        allow_replication_factor_change=True,
        error_code=ErrorCode.NONE,
        error_message=None,
        responses=topics,
    )


def handle_list_partition_reassignments(
    ctx: Uses, request: ListPartitionReassignmentsRequest, version: int, client: ClientInfo
):
    return ListPartitionReassignmentsResponse(
        version=version, throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None, topics=[]
    )


ALTER_PARTITION_REASSIGNMENTS = KafkaApi(
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    (0, 1),
    handle_alter_partition_reassignments,
    authorization=Checks((Check(Res.CLUSTER, Op.ALTER, the_cluster),)),
    refusal=top_level_error,
    read_only=False,
)
LIST_PARTITION_REASSIGNMENTS = KafkaApi(
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
    (0, 0),
    handle_list_partition_reassignments,
    authorization=Checks((Check(Res.CLUSTER, Op.DESCRIBE, the_cluster),)),
    refusal=top_level_error,
    read_only=True,
)
APIS = (ALTER_PARTITION_REASSIGNMENTS, LIST_PARTITION_REASSIGNMENTS)
