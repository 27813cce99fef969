"""APIs a single broker without an authorizer answers the way Kafka does in that setup.

- DescribeAcls, CreateAcls, DeleteAcls: SECURITY_DISABLED ("No Authorizer is configured").
- AlterPartitionReassignments: moving a partition onto this broker is a no-op; onto any other broker
  INVALID_REPLICA_ASSIGNMENT; cancelling finds NO_REASSIGNMENT_IN_PROGRESS.
- ListPartitionReassignments: nothing is ever being reassigned.
"""

from __future__ import annotations

from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    CreateAclsRequest,
    CreateAclsResponse,
    DeleteAclsRequest,
    DeleteAclsResponse,
    DescribeAclsRequest,
    DescribeAclsResponse,
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)

from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition

from ..context import BrokerContext, ClientInfo
from ..registry import HandlerRegistry

NO_AUTHORIZER = "No Authorizer is configured on the broker"


def handle_describe_acls(ctx: BrokerContext, request: DescribeAclsRequest, version: int, client: ClientInfo):
    return DescribeAclsResponse(
        version=version, throttle_time_ms=0, error_code=ErrorCode.SECURITY_DISABLED,
        error_message=NO_AUTHORIZER, resources=[],
    )


def handle_create_acls(ctx: BrokerContext, request: CreateAclsRequest, version: int, client: ClientInfo):
    return CreateAclsResponse(
        version=version, throttle_time_ms=0,
        results=[
            CreateAclsResponse.AclCreationResult(error_code=ErrorCode.SECURITY_DISABLED, error_message=NO_AUTHORIZER)
            for _ in request.creations
        ],
    )


def handle_delete_acls(ctx: BrokerContext, request: DeleteAclsRequest, version: int, client: ClientInfo):
    return DeleteAclsResponse(
        version=version, throttle_time_ms=0,
        filter_results=[
            DeleteAclsResponse.DeleteAclsFilterResult(
                error_code=ErrorCode.SECURITY_DISABLED, error_message=NO_AUTHORIZER, matching_acls=[]
            )
            for _ in request.filters
        ],
    )


TopicResponse = AlterPartitionReassignmentsResponse.ReassignableTopicResponse


def _reassign(ctx: BrokerContext, tp: TopicPartition, replicas) -> tuple[ErrorCode, str | None]:
    if not ctx.catalog.has_partition(tp):
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
    if replicas is None:
        return ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, None
    if list(replicas) != [ctx.policy.node_id]:
        return ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"Unknown broker ids in {list(replicas)}"
    return ErrorCode.NONE, None


def handle_alter_partition_reassignments(
    ctx: BrokerContext, request: AlterPartitionReassignmentsRequest, version: int, client: ClientInfo
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
        version=version, throttle_time_ms=0, allow_replication_factor_change=True,
        error_code=ErrorCode.NONE, error_message=None, responses=topics,
    )


def handle_list_partition_reassignments(
    ctx: BrokerContext, request: ListPartitionReassignmentsRequest, version: int, client: ClientInfo
):
    return ListPartitionReassignmentsResponse(
        version=version, throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None, topics=[]
    )


def register(registry: HandlerRegistry) -> None:
    registry.register(DescribeAclsRequest, DescribeAclsResponse, (1, 3), handle_describe_acls)
    registry.register(CreateAclsRequest, CreateAclsResponse, (1, 3), handle_create_acls)
    registry.register(DeleteAclsRequest, DeleteAclsResponse, (1, 3), handle_delete_acls)
    registry.register(
        AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse, (0, 1),
        handle_alter_partition_reassignments,
    )
    registry.register(
        ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse, (0, 0),
        handle_list_partition_reassignments,
    )
