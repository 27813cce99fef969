"""DescribeLogDirs, AlterReplicaLogDirs, ElectLeaders and DescribeQuorum as a one-node Kafka answers
them, through their handlers and refusals on a memory-store broker."""

from __future__ import annotations

import attrs
import pytest

from tests.batches import make_batch
from trafka.adapters.kafka.apis import alter_replica_log_dirs, describe_log_dirs, describe_quorum, elect_leaders
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import (
    AlterReplicaLogDirsRequest,
    DescribeLogDirsRequest,
    DescribeQuorumRequest,
    ElectLeadersRequest,
)

CLIENT = ClientInfo("test", "127.0.0.1")
NOW = 1_700_000_000_000


@pytest.fixture
def ctx():
    settings = load_settings(overrides={"storage": {"kind": "memory"}, "broker": {"node_id": 7}})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("t", 2, 1)
    ctx.services.catalog.create("u", 1, 1)
    return ctx


def _describe_log_dirs(ctx, topics, version=4):
    Topic = DescribeLogDirsRequest.DescribableLogDirTopic
    request = DescribeLogDirsRequest[version](
        topics=None if topics is None else [Topic(topic=t, partitions=ps) for t, ps in topics.items()]
    )
    return describe_log_dirs.API.handle(ctx, request, version, CLIENT)


def _sizes(response):
    (result,) = response.results
    return {(t.name, p.partition_index): p.partition_size for t in result.topics for p in t.partitions}


def test_describe_log_dirs_lists_every_partition_with_its_size(ctx):
    ctx.services.replicas.produce(TopicPartition("t", 1), make_batch([(NOW, b"k", b"v" * 50)]), NOW)
    response = _describe_log_dirs(ctx, None)
    (result,) = response.results
    assert (response.error_code, result.error_code, result.log_dir) == (ErrorCode.NONE, ErrorCode.NONE, "memory")
    assert (result.total_bytes, result.usable_bytes) == (-1, -1)
    sizes = _sizes(response)
    assert sizes.keys() == {("t", 0), ("t", 1), ("u", 0)}
    assert sizes[("t", 0)] == 0 and sizes[("t", 1)] > 50
    assert all(p.offset_lag == 0 and not p.is_future_key for t in result.topics for p in t.partitions)


def test_describe_log_dirs_filters_and_leaves_out_what_the_broker_does_not_host(ctx):
    response = _describe_log_dirs(ctx, {"t": [1, 9], "nope": [0]}, version=1)
    assert _sizes(response) == {("t", 1): 0}


def test_describe_log_dirs_refused_answers_no_log_dirs_with_the_error_from_v3(ctx):
    refused = describe_log_dirs.API.refuse(None, 3, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    assert (refused.error_code, refused.results) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [])


def _alter(ctx, path, topics):
    Dir = AlterReplicaLogDirsRequest.AlterReplicaLogDir
    Topic = Dir.AlterReplicaLogDirTopic
    request = AlterReplicaLogDirsRequest[2](
        dirs=[Dir(path=path, topics=[Topic(name=t, partitions=ps) for t, ps in topics.items()])]
    )
    response = alter_replica_log_dirs.API.handle(ctx, request, 2, CLIENT)
    return {(t.topic_name, p.partition_index): p.error_code for t in response.results for p in t.partitions}


def test_alter_replica_log_dirs_to_the_one_log_dir_succeeds_and_elsewhere_is_not_found(ctx):
    assert _alter(ctx, "memory", {"t": [0, 5], "nope": [0]}) == {
        ("t", 0): ErrorCode.NONE,
        ("t", 5): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert _alter(ctx, "/elsewhere", {"t": [0], "nope": [0]}) == {
        ("t", 0): ErrorCode.LOG_DIR_NOT_FOUND,
        ("nope", 0): ErrorCode.LOG_DIR_NOT_FOUND,
    }


def _elect(ctx, topics, version=2):
    Topic = ElectLeadersRequest.TopicPartitions
    request = ElectLeadersRequest[version](
        election_type=0,
        topic_partitions=None if topics is None else [Topic(topic=t, partitions=ps) for t, ps in topics.items()],
        timeout_ms=1000,
    )
    return elect_leaders.API.handle(ctx, request, version, CLIENT)


def test_elect_leaders_is_never_needed_on_one_node(ctx):
    response = _elect(ctx, {"t": [0, 1, 2], "nope": [0]})
    assert response.error_code == ErrorCode.NONE
    answers = {
        (r.topic, p.partition_id): (p.error_code, p.error_message)
        for r in response.replica_election_results
        for p in r.partition_result
    }
    assert answers == {
        ("t", 0): (ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."),
        ("t", 1): (ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."),
        ("t", 2): (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as t-2"),
        ("nope", 0): (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as nope"),
    }


def test_elect_leaders_for_all_lists_every_topic_without_the_partitions_that_need_none(ctx):
    response = _elect(ctx, None, version=1)
    assert sorted((r.topic, list(r.partition_result)) for r in response.replica_election_results) == [
        ("t", []),
        ("u", []),
    ]


def test_elect_leaders_refused_answers_every_partition(ctx):
    Topic = ElectLeadersRequest.TopicPartitions
    request = ElectLeadersRequest[2](election_type=0, topic_partitions=[Topic(topic="t", partitions=[0])])
    refused = elect_leaders.API.refuse(request, 2, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    assert refused.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert [p.error_code for p in refused.replica_election_results[0].partition_result] == [
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    ]


def _quorum(ctx, topics, version=2):
    Topic = DescribeQuorumRequest.TopicData
    request = DescribeQuorumRequest[version](
        topics=[
            Topic(topic_name=t, partitions=[Topic.PartitionData(partition_index=p) for p in ps]) for t, ps in topics
        ]
    )
    return describe_quorum.API.handle(ctx, request, version, CLIENT)


def test_describe_quorum_is_a_single_voter_led_by_this_node(ctx):
    response = _quorum(ctx, [("__cluster_metadata", [0])])
    assert response.error_code == ErrorCode.NONE
    ((topic,),) = [response.topics]
    (partition,) = topic.partitions
    assert (topic.topic_name, partition.partition_index, partition.error_code) == ("__cluster_metadata", 0, 0)
    assert (partition.leader_id, partition.leader_epoch, partition.high_watermark) == (7, 1, 0)
    (voter,) = partition.current_voters
    assert (voter.replica_id, voter.log_end_offset) == (7, 0)
    assert voter.last_fetch_timestamp == voter.last_caught_up_timestamp > 0
    assert partition.observers == []
    (node,) = response.nodes
    assert node.node_id == 7
    assert [(lst.host, lst.port) for lst in node.listeners] == [("localhost", 9092)]


def test_describe_quorum_of_another_partition_is_unknown_per_partition(ctx):
    response = _quorum(ctx, [("__cluster_metadata", [1]), ("t", [0])], version=0)
    assert response.error_code == ErrorCode.NONE
    assert [(t.topic_name, [p.error_code for p in t.partitions]) for t in response.topics] == [
        ("__cluster_metadata", [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]),
        ("t", [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]),
    ]


def test_an_offline_log_dir_answers_kafka_storage_error(ctx, monkeypatch):
    offline = attrs.evolve(ctx.services.replicas.log_dir(), offline=True)
    monkeypatch.setattr(ctx.services.replicas, "log_dir", lambda: offline)
    (result,) = _describe_log_dirs(ctx, None).results
    assert (result.error_code, result.log_dir, result.topics) == (ErrorCode.KAFKA_STORAGE_ERROR, "memory", [])
    assert _alter(ctx, "memory", {"t": [0]}) == {("t", 0): ErrorCode.KAFKA_STORAGE_ERROR}
    assert _alter(ctx, "/elsewhere", {"t": [0]}) == {("t", 0): ErrorCode.LOG_DIR_NOT_FOUND}


def test_a_topic_name_too_long_for_a_future_log_dir_cannot_be_moved(ctx):
    long_name = "x" * 249
    assert _alter(ctx, "memory", {long_name: [0]}) == {(long_name, 0): ErrorCode.INVALID_TOPIC_EXCEPTION}


def test_describe_quorum_lists_the_listener_the_request_came_in_on(ctx):
    """A Kafka voter lists its one controller listener; trafka, with none, the listener the client reached
    (listing every listener showed a SASL endpoint to a PLAINTEXT client, unlike Kafka's one)."""
    from trafka.domain.listeners import Listener, SecurityProtocol

    plain = Listener("PLAINTEXT", SecurityProtocol.PLAINTEXT, "127.0.0.1", 9092, "localhost", 9092)
    sasl = Listener("SASL_PLAINTEXT", SecurityProtocol.SASL_PLAINTEXT, "127.0.0.1", 9094, "localhost", 9094)
    ctx.listening.bound((plain, sasl))
    Topic = DescribeQuorumRequest.TopicData
    partitions = [Topic.PartitionData(partition_index=0)]
    request = DescribeQuorumRequest[2](topics=[Topic(topic_name="__cluster_metadata", partitions=partitions)])
    for listener, port in (("PLAINTEXT", 9092), ("SASL_PLAINTEXT", 9094)):
        client = attrs.evolve(CLIENT, listener=listener)
        (node,) = describe_quorum.API.handle(ctx, request, 2, client).nodes
        assert [(lst.name, lst.port) for lst in node.listeners] == [(listener, port)]
