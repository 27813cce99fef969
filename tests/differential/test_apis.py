"""One scenario per API (the ones tests/differential's other modules do not cover), mostly the answers a
client gets for what does not exist: unknown topics, groups, transactional ids, producers, resources.
The same request goes to Apache Kafka and to trafka; the answers are compared field by field."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from kafka.protocol import admin, consumer, metadata, producer

from tests import kafka_python_messages as messages

# The first test to ask for `apache_kafka` waits for Maven and Kafka's start (ADR 63).
pytestmark = pytest.mark.timeout(900)

MISSING = f"missing-{uuid.uuid4().hex[:8]}"  # a topic, group and transactional id neither broker has
AUTO_CREATED = f"auto-created-{uuid.uuid4().hex[:8]}"  # a topic each broker creates when asked for it
BROKER_RESOURCE, TOPIC_RESOURCE, GROUP_RESOURCE = 4, 2, 32


def _scenarios() -> dict[str, tuple[Callable[[], Any], Any, int]]:
    A, C, P = admin, consumer, producer
    return {
        # KIP-1066's dynamic cordon (Kafka 4.3), validated only: what a 4.2 broker says of it
        "IncrementalAlterConfigs broker cordoned.log.dirs": (
            lambda: A.IncrementalAlterConfigsRequest[1](
                resources=[
                    A.IncrementalAlterConfigsRequest.AlterConfigsResource(
                        resource_type=BROKER_RESOURCE,
                        resource_name="1",
                        configs=[
                            A.IncrementalAlterConfigsRequest.AlterConfigsResource.AlterableConfig(
                                name="cordoned.log.dirs", config_operation=0, value="*"
                            )
                        ],
                    )
                ],
                validate_only=True,
            ),
            A.IncrementalAlterConfigsResponse,
            1,
        ),
        "Metadata of __consumer_offsets": (
            lambda: metadata.MetadataRequest[12](
                topics=[metadata.MetadataRequest.MetadataRequestTopic(name="__consumer_offsets", topic_id=None)],
                allow_auto_topic_creation=False,
            ),
            metadata.MetadataResponse,
            12,
        ),
        "Metadata auto-creating a topic": (  # answered UNKNOWN_TOPIC_OR_PARTITION by the request that creates it
            lambda: metadata.MetadataRequest[12](
                topics=[metadata.MetadataRequest.MetadataRequestTopic(name=AUTO_CREATED, topic_id=None)],
                allow_auto_topic_creation=True,
            ),
            metadata.MetadataResponse,
            12,
        ),
        "FindCoordinator group": (
            lambda: metadata.FindCoordinatorRequest[4](key_type=0, coordinator_keys=[MISSING]),
            metadata.FindCoordinatorResponse,
            4,
        ),
        "FindCoordinator transaction": (
            lambda: metadata.FindCoordinatorRequest[4](key_type=1, coordinator_keys=[MISSING]),
            metadata.FindCoordinatorResponse,
            4,
        ),
        "ListOffsets unknown topic": (
            lambda: C.ListOffsetsRequest[9](
                replica_id=-1,
                isolation_level=0,
                topics=[
                    C.ListOffsetsRequest.ListOffsetsTopic(
                        name=MISSING,
                        partitions=[
                            C.ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(
                                partition_index=0, current_leader_epoch=-1, timestamp=-1
                            )
                        ],
                    )
                ],
            ),
            C.ListOffsetsResponse,
            9,
        ),
        "OffsetFetch unknown group": (
            lambda: C.OffsetFetchRequest[8](
                groups=[C.OffsetFetchRequest.OffsetFetchRequestGroup(group_id=MISSING, topics=None)],
                require_stable=False,
            ),
            C.OffsetFetchResponse,
            8,
        ),
        "Heartbeat unknown group": (
            lambda: C.HeartbeatRequest[4](group_id=MISSING, generation_id=1, member_id="m", group_instance_id=None),
            C.HeartbeatResponse,
            4,
        ),
        "SyncGroup unknown group": (
            lambda: C.SyncGroupRequest[5](
                group_id=MISSING,
                generation_id=1,
                member_id="m",
                group_instance_id=None,
                protocol_type="consumer",
                protocol_name="range",
                assignments=[],
            ),
            C.SyncGroupResponse,
            5,
        ),
        "LeaveGroup unknown group": (
            lambda: C.LeaveGroupRequest[5](
                group_id=MISSING,
                members=[C.LeaveGroupRequest.MemberIdentity(member_id="m", group_instance_id=None, reason=None)],
            ),
            C.LeaveGroupResponse,
            5,
        ),
        "OffsetDelete unknown group": (
            lambda: C.OffsetDeleteRequest[0](
                group_id=MISSING,
                topics=[
                    C.OffsetDeleteRequest.OffsetDeleteRequestTopic(
                        name=MISSING,
                        partitions=[
                            C.OffsetDeleteRequest.OffsetDeleteRequestTopic.OffsetDeleteRequestPartition(
                                partition_index=0
                            )
                        ],
                    )
                ],
            ),
            C.OffsetDeleteResponse,
            0,
        ),
        "DescribeGroups unknown group": (
            lambda: A.DescribeGroupsRequest[6](groups=[MISSING], include_authorized_operations=False),
            A.DescribeGroupsResponse,
            6,
        ),
        "DeleteGroups unknown group": (
            lambda: A.DeleteGroupsRequest[2](groups_names=[MISSING]),
            A.DeleteGroupsResponse,
            2,
        ),
        "DescribeConfigs unknown topic": (
            lambda: A.DescribeConfigsRequest[4](
                resources=[
                    A.DescribeConfigsRequest.DescribeConfigsResource(
                        resource_type=TOPIC_RESOURCE, resource_name=MISSING, configuration_keys=None
                    )
                ],
                include_synonyms=False,
                include_documentation=False,
            ),
            A.DescribeConfigsResponse,
            4,
        ),
        "DeleteTopics unknown topic": (
            lambda: A.DeleteTopicsRequest[6](
                topics=[A.DeleteTopicsRequest.DeleteTopicState(name=MISSING, topic_id=None)], timeout_ms=5000
            ),
            A.DeleteTopicsResponse,
            6,
        ),
        "CreatePartitions unknown topic": (
            lambda: A.CreatePartitionsRequest[3](
                topics=[A.CreatePartitionsRequest.CreatePartitionsTopic(name=MISSING, count=3, assignments=None)],
                timeout_ms=5000,
                validate_only=True,
            ),
            A.CreatePartitionsResponse,
            3,
        ),
        "DeleteRecords unknown topic": (
            lambda: A.DeleteRecordsRequest[2](
                topics=[
                    A.DeleteRecordsRequest.DeleteRecordsTopic(
                        name=MISSING,
                        partitions=[
                            A.DeleteRecordsRequest.DeleteRecordsTopic.DeleteRecordsPartition(
                                partition_index=0, offset=0
                            )
                        ],
                    )
                ],
                timeout_ms=5000,
            ),
            A.DeleteRecordsResponse,
            2,
        ),
        "DescribeProducers unknown topic": (
            lambda: A.DescribeProducersRequest[0](
                topics=[A.DescribeProducersRequest.TopicRequest(name=MISSING, partition_indexes=[0])]
            ),
            A.DescribeProducersResponse,
            0,
        ),
        "DescribeTransactions unknown id": (
            lambda: A.DescribeTransactionsRequest[0](transactional_ids=[MISSING]),
            A.DescribeTransactionsResponse,
            0,
        ),
        "ListTransactions filtered": (
            lambda: A.ListTransactionsRequest[1](state_filters=[], producer_id_filters=[987654321], duration_filter=-1),
            A.ListTransactionsResponse,
            1,
        ),
        "ListGroups filtered": (
            lambda: A.ListGroupsRequest[5](states_filter=["Dead"], types_filter=[]),
            A.ListGroupsResponse,
            5,
        ),
        "DescribeAcls none": (
            lambda: A.DescribeAclsRequest[3](
                resource_type_filter=2,
                resource_name_filter=MISSING,
                pattern_type_filter=3,
                principal_filter=None,
                host_filter=None,
                operation=1,
                permission_type=1,
            ),
            A.DescribeAclsResponse,
            3,
        ),
        "DescribeClientQuotas none": (
            lambda: A.DescribeClientQuotasRequest[1](
                components=[
                    A.DescribeClientQuotasRequest.ComponentData(entity_type="user", match_type=0, match=MISSING)
                ],
                strict=True,
            ),
            A.DescribeClientQuotasResponse,
            1,
        ),
        "DescribeUserScramCredentials unknown user": (
            lambda: A.DescribeUserScramCredentialsRequest[0](
                users=[A.DescribeUserScramCredentialsRequest.UserName(name=MISSING)]
            ),
            A.DescribeUserScramCredentialsResponse,
            0,
        ),
        "ElectLeaders unknown topic": (
            lambda: A.ElectLeadersRequest[2](
                election_type=0,
                topic_partitions=[A.ElectLeadersRequest.TopicPartitions(topic=MISSING, partitions=[0])],
                timeout_ms=5000,
            ),
            A.ElectLeadersResponse,
            2,
        ),
        "ListPartitionReassignments unknown topic": (
            lambda: A.ListPartitionReassignmentsRequest[0](
                timeout_ms=5000,
                topics=[
                    A.ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics(
                        name=MISSING, partition_indexes=[0]
                    )
                ],
            ),
            A.ListPartitionReassignmentsResponse,
            0,
        ),
        "DescribeTopicPartitions unknown topic": (
            lambda: A.DescribeTopicPartitionsRequest[0](
                topics=[A.DescribeTopicPartitionsRequest.TopicRequest(name=MISSING)],
                response_partition_limit=2000,
                cursor=None,
            ),
            A.DescribeTopicPartitionsResponse,
            0,
        ),
        "ListConfigResources groups": (
            lambda: A.ListConfigResourcesRequest[1](resource_types=[GROUP_RESOURCE]),
            A.ListConfigResourcesResponse,
            1,
        ),
        "AddOffsetsToTxn unknown id": (
            lambda: P.AddOffsetsToTxnRequest[4](
                transactional_id=MISSING, producer_id=1000, producer_epoch=0, group_id=MISSING
            ),
            P.AddOffsetsToTxnResponse,
            4,
        ),
        "EndTxn unknown id": (
            lambda: P.EndTxnRequest[4](transactional_id=MISSING, producer_id=1000, producer_epoch=0, committed=True),
            P.EndTxnResponse,
            4,
        ),
        "ConsumerGroupDescribe unknown group": (
            lambda: messages.ConsumerGroupDescribeRequest[1](group_ids=[MISSING], include_authorized_operations=False),
            messages.ConsumerGroupDescribeResponse,
            1,
        ),
        # Delegation tokens on a PLAINTEXT listener: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED on both
        "CreateDelegationToken on PLAINTEXT": (
            lambda: messages.CreateDelegationTokenRequest[3](
                owner_principal_type=None, owner_principal_name=None, renewers=[], max_lifetime_ms=-1
            ),
            messages.CreateDelegationTokenResponse,
            3,
        ),
        "RenewDelegationToken on PLAINTEXT": (
            lambda: messages.RenewDelegationTokenRequest[2](hmac=b"not a token", renew_period_ms=1000),
            messages.RenewDelegationTokenResponse,
            2,
        ),
        "ExpireDelegationToken on PLAINTEXT": (
            lambda: messages.ExpireDelegationTokenRequest[2](hmac=b"not a token", expiry_time_period_ms=-1),
            messages.ExpireDelegationTokenResponse,
            2,
        ),
        "DescribeDelegationToken on PLAINTEXT": (
            lambda: messages.DescribeDelegationTokenRequest[3](owners=None),
            messages.DescribeDelegationTokenResponse,
            3,
        ),
        "ShareGroupDescribe unknown group": (
            lambda: messages.ShareGroupDescribeRequest[1](group_ids=[MISSING], include_authorized_operations=False),
            messages.ShareGroupDescribeResponse,
            1,
        ),
    }


SCENARIOS = _scenarios()


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_api(pair, scenario):
    make, response_class, version = SCENARIOS[scenario]
    pair.raw(scenario, make, response_class, version)
