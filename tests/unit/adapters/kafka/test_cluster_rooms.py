"""What a node of a simulated cluster (`trafka.Cluster`, ADR 42) does with each API, as its room declares
it (`KafkaApi.cluster`): the KIP-848 and share APIs refused off their group's coordinator or their
partitions' leader, and every API either declares a check or is one every node serves alike."""

from __future__ import annotations

import pytest

from trafka.adapters.kafka.apis import (
    build_registry,
    consumer_group_describe,
    consumer_group_heartbeat,
    share_fetch,
    share_group_describe,
    share_group_heartbeat,
    share_group_offsets,
)
from trafka.adapters.kafka.cluster import ClusterMap
from trafka.adapters.kafka.connection.cluster import layer
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import (
    AlterShareGroupOffsetsRequest,
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
    DeleteShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsRequest,
    ShareFetchRequest,
    ShareGroupDescribeRequest,
    ShareGroupHeartbeatRequest,
)

NOT_COORDINATOR = ErrorCode.NOT_COORDINATOR
NOT_LEADER = ErrorCode.NOT_LEADER_OR_FOLLOWER

# Every node serves these alike (a single store underneath), as today; anything else declares a check.
SERVED_ALIKE = {
    "AlterClientQuotas",
    "AlterConfigs",
    "AlterPartitionReassignments",
    "AlterReplicaLogDirs",
    "AlterUserScramCredentials",
    "ApiVersions",
    "CreateAcls",
    "CreateDelegationToken",
    "CreatePartitions",
    "CreateTopics",
    "DeleteAcls",
    "DeleteTopics",
    "DescribeAcls",
    "DescribeClientQuotas",
    "DescribeConfigs",
    "DescribeDelegationToken",
    "DescribeLogDirs",
    "DescribeProducers",
    "DescribeQuorum",
    "DescribeTransactions",
    "DescribeUserScramCredentials",
    "ElectLeaders",
    "ExpireDelegationToken",
    "GetTelemetrySubscriptions",
    "IncrementalAlterConfigs",
    "ListConfigResources",
    "ListGroups",
    "ListPartitionReassignments",
    "ListTransactions",
    "PushTelemetry",
    "RenewDelegationToken",
    "SaslAuthenticate",
    "SaslHandshake",
    "UpdateFeatures",
}


@pytest.fixture
def ctx():
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("t", 1, 1)
    return ctx


@pytest.fixture
def cluster():
    return ClusterMap([1, 2, 3])


def on(node: int) -> ClientInfo:
    return ClientInfo("client", "127.0.0.1", listener=f"BROKER{node}")


def other_than(cluster: ClusterMap, node: int) -> int:
    return next(n for n in cluster.node_ids if n != node)


def test_every_api_declares_its_cluster_check_or_is_served_alike_by_every_node():
    registry = build_registry(telemetry=True)
    unchecked = {api.name for api in registry.apis() if api.cluster is None}
    assert unchecked == SERVED_ALIKE


@pytest.mark.parametrize(
    ("api", "request_", "version"),
    [
        (
            consumer_group_heartbeat.API,
            ConsumerGroupHeartbeatRequest[1](
                group_id="g", member_id="m", member_epoch=0, rebalance_timeout_ms=30_000, subscribed_topic_names=["t"]
            ),
            1,
        ),
        (
            share_group_heartbeat.API,
            ShareGroupHeartbeatRequest[1](group_id="g", member_id="m", member_epoch=0, subscribed_topic_names=["t"]),
            1,
        ),
        (share_group_offsets.ALTER, AlterShareGroupOffsetsRequest[0](group_id="g", topics=[]), 0),
        (share_group_offsets.DELETE, DeleteShareGroupOffsetsRequest[0](group_id="g", topics=[]), 0),
    ],
    ids=["ConsumerGroupHeartbeat", "ShareGroupHeartbeat", "AlterShareGroupOffsets", "DeleteShareGroupOffsets"],
)
def test_a_group_request_off_its_coordinator_is_refused_and_served_on_it(ctx, cluster, api, request_, version):
    coordinator = cluster.coordinator("g")
    serve = layer(cluster, api, api.handle)
    refused = serve(ctx, request_, version, on(other_than(cluster, coordinator)))
    assert refused.error_code == NOT_COORDINATOR
    served = serve(ctx, request_, version, on(coordinator))
    assert served.error_code != NOT_COORDINATOR


def test_group_descriptions_off_the_coordinator_say_not_coordinator(ctx, cluster):
    off = on(other_than(cluster, cluster.coordinator("g")))
    for api, request_ in (
        (consumer_group_describe.API, ConsumerGroupDescribeRequest[1](group_ids=["g"])),
        (share_group_describe.API, ShareGroupDescribeRequest[1](group_ids=["g"])),
    ):
        (group,) = layer(cluster, api, api.handle)(ctx, request_, 1, off).groups
        assert group.error_code == NOT_COORDINATOR, api.name
    G = DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup
    described = layer(cluster, share_group_offsets.DESCRIBE, share_group_offsets.DESCRIBE.handle)(
        ctx, DescribeShareGroupOffsetsRequest[1](groups=[G(group_id="g", topics=None)]), 1, off
    )
    assert [g.error_code for g in described.groups] == [NOT_COORDINATOR]


def test_a_share_fetch_for_a_partition_another_node_leads_is_refused(ctx, cluster):
    leader, _ = cluster.leader(TopicPartition("t", 0))
    T = ShareFetchRequest.FetchTopic
    request_ = ShareFetchRequest[1](
        group_id="g",
        member_id="m",
        share_session_epoch=0,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=1 << 20,
        max_records=10,
        batch_size=10,
        topics=[T(topic_id=ctx.services.catalog.get("t").topic_id, partitions=[T.FetchPartition(partition_index=0)])],
        forgotten_topics_data=[],
    )
    refused = layer(cluster, share_fetch.API, share_fetch.API.handle)(ctx, request_, 1, on(other_than(cluster, leader)))
    assert refused.error_code == NOT_LEADER
