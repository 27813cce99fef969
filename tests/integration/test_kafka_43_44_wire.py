"""Kafka 4.3 and 4.4's client-facing versions on the wire, against the real server, with kafka-python's
protocol classes (and trafka's schemas of the same kind where kafka-python has not the version yet):
DescribeLogDirs v5 and `cordoned.log.dirs` (KIP-1066), TxnOffsetCommit v6 (topics by id), DeleteGroups
v3 (per-group error messages), and brokers pinned with `kafka_version="4.3"` and `"4.4"`."""

from __future__ import annotations

import uuid

import pytest
from kafka.protocol.admin import (
    CreateTopicsRequest,
    CreateTopicsResponse,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
    UpdateFeaturesRequest,
    UpdateFeaturesResponse,
)
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.record.default_records import DefaultRecordBatchBuilder

from tests import kafka_python_messages as messages
from tests.kafka_python_messages import (
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)

from .broker import BrokerProcess
from .test_transactions_v2_wire import _batch, _end, _init, _produce
from .wire import WireClient

NONE, UNSUPPORTED_VERSION, INVALID_REPLICATION_FACTOR, GROUP_ID_NOT_FOUND, UNKNOWN_TOPIC_ID = 0, 35, 38, 69, 100
REBOOTSTRAP_REQUIRED, INVALID_CONFIG, INVALID_REQUEST = 129, 40, 42


def _log_dirs(client: WireClient, version: int):
    response = client.request(DescribeLogDirsRequest[version](topics=None), DescribeLogDirsResponse, version)
    (result,) = response.results
    return result


def _create_topic(client: WireClient, name: str) -> int:
    Topic = CreateTopicsRequest.CreatableTopic
    request = CreateTopicsRequest[7](
        topics=[Topic(name=name, num_partitions=1, replication_factor=1, assignments=[], configs=[])],
        timeout_ms=5000,
        validate_only=False,
    )
    return client.request(request, CreateTopicsResponse, 7).topics[0].error_code


def test_a_cordoned_log_dir_says_so_and_takes_no_new_partitions(tmp_path):
    data = tmp_path / "logs"
    props = tmp_path / "server.properties"
    props.write_text(f"log.dirs={data}\ncordoned.log.dirs={data}\n")
    broker = BrokerProcess(["--config", str(props)]).start()
    try:
        with WireClient(broker.bootstrap) as client:
            assert _log_dirs(client, 5).is_cordoned is True
            assert _create_topic(client, "refused") == INVALID_REPLICATION_FACTOR
    finally:
        assert broker.stop() == 0, broker.log()
    broker = BrokerProcess(["--data-dir", str(data)]).start()  # uncordoned
    try:
        with WireClient(broker.bootstrap) as client:
            assert _log_dirs(client, 5).is_cordoned is False
            assert _create_topic(client, "taken") == NONE
    finally:
        assert broker.stop() == 0, broker.log()


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    broker = BrokerProcess(["--data-dir", str(tmp_path_factory.mktemp("logs"))]).start()
    yield broker
    assert broker.stop() == 0, broker.log()


def test_txn_offset_commit_v6_names_topics_by_id(broker, topic_name):
    tid = f"{topic_name}-tid"
    with WireClient(broker.bootstrap) as client:
        assert _create_topic(client, topic_name) == NONE
        metadata = client.request(
            MetadataRequest[12](topics=[MetadataRequest.MetadataRequestTopic(name=topic_name, topic_id=None)]),
            MetadataResponse,
            12,
        )
        topic_id = metadata.topics[0].topic_id
        pid, epoch = _init(client, tid)
        assert _produce(client, 12, tid, topic_name, _batch(pid, epoch, 0, [b"x"])) == NONE
        Topic = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
        Partition = Topic.TxnOffsetCommitRequestPartition
        unknown = uuid.uuid4()
        request = TxnOffsetCommitRequest[6](
            transactional_id=tid,
            group_id=f"{topic_name}-g",
            producer_id=pid,
            producer_epoch=epoch,
            generation_id=-1,
            member_id="",
            group_instance_id=None,
            topics=[
                Topic(
                    topic_id=topic_id,
                    partitions=[Partition(partition_index=0, committed_offset=5, committed_leader_epoch=-1)],
                ),
                Topic(topic_id=unknown, partitions=[Partition(partition_index=0, committed_offset=5)]),
            ],
        )
        response = client.request(request, TxnOffsetCommitResponse, 6)
        assert [(t.topic_id, t.partitions[0].error_code) for t in response.topics] == [
            (topic_id, NONE),
            (unknown, UNKNOWN_TOPIC_ID),
        ]
        assert _end(client, tid, pid, epoch, True)[0] == NONE


def test_delete_groups_v3_answers_an_error_message_per_group(broker):
    with WireClient(broker.bootstrap) as client:
        response = client.request(DeleteGroupsRequest[3](groups_names=["nobody"]), DeleteGroupsResponse, 3)
        (result,) = response.results
        assert (result.group_id, result.error_code, result.error_message) == (
            "nobody",
            GROUP_ID_NOT_FOUND,
            "The group id does not exist.",
        )
        v2 = client.request(DeleteGroupsRequest[2](groups_names=["nobody"]), DeleteGroupsResponse, 2)
        assert v2.results[0].error_code == GROUP_ID_NOT_FOUND


@pytest.mark.parametrize(
    ("release", "expected"),
    [
        ("4.2", {35: (1, 4), 28: (0, 5), 42: (0, 2)}),
        ("4.3", {35: (1, 5), 28: (0, 5), 42: (0, 2)}),
        ("4.4", {35: (1, 5), 28: (0, 6), 42: (0, 3)}),
        ("3.9", {35: (1, 4), 28: (0, 4), 42: (0, 2)}),
    ],
)
def test_pinned_releases_advertise_their_versions_and_transaction_version(tmp_path, release, expected):
    broker = BrokerProcess(["--data-dir", str(tmp_path / "logs"), "--kafka-version", release]).start()
    try:
        with WireClient(broker.bootstrap) as client:
            response = client.request(
                ApiVersionsRequest[3](client_software_name="trafka-tests", client_software_version="1"),
                ApiVersionsResponse,
                3,
            )
        served = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
        assert {key: served[key] for key in expected} == expected
        finalized = {f.name: f.max_version_level for f in response.finalized_features}
        assert finalized.get("transaction.version", 0) == (0 if release == "3.9" else 2)
    finally:
        assert broker.stop() == 0, broker.log()


def _api_versions_v5(client: WireClient, cluster_id, node_id):
    request = messages.ApiVersionsRequest[5](
        client_software_name="trafka-tests", client_software_version="1", cluster_id=cluster_id, node_id=node_id
    )
    return client.request(request, messages.ApiVersionsResponse, 5)


def test_api_versions_v5_sends_a_client_of_another_cluster_or_node_to_rebootstrap(broker):
    with WireClient(broker.bootstrap) as client:
        metadata = client.request(MetadataRequest[12](topics=[]), MetadataResponse, 12)
        cluster_id, (node,) = metadata.cluster_id, metadata.brokers
        expected = _api_versions_v5(client, cluster_id, node.node_id)
        assert expected.error_code == NONE and (18, 0, 5) in {
            (k.api_key, k.min_version, k.max_version) for k in expected.api_keys
        }
        for wrong in ((cluster_id + "x", node.node_id), (cluster_id, node.node_id + 1)):
            refused = _api_versions_v5(client, *wrong)
            assert (refused.error_code, refused.api_keys) == (REBOOTSTRAP_REQUIRED, [])
        # the connection stays usable, as Kafka's: the client decides to go
        assert _api_versions_v5(client, None, -1).error_code == NONE


def test_api_versions_v5_is_not_served_by_a_broker_pinned_before_44(tmp_path):
    broker = BrokerProcess(["--data-dir", str(tmp_path / "logs"), "--kafka-version", "4.3"]).start()
    try:
        with WireClient(broker.bootstrap) as client:
            client.send(
                messages.ApiVersionsRequest[5](
                    client_software_name="t", client_software_version="1", cluster_id="c", node_id=1
                ),
                5,
            )
            response = client.receive(ApiVersionsResponse, 0)  # kafka-python's: a v0 body on an error
            assert response.error_code == UNSUPPORTED_VERSION
            assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(18, 0, 4)]
    finally:
        assert broker.stop() == 0, broker.log()


def _alter_broker(client: WireClient, resource: str, value: str | None, operation: int = 0):
    """IncrementalAlterConfigs of `cordoned.log.dirs` on a BROKER resource (type 4): (error, message)."""
    Resource = IncrementalAlterConfigsRequest.AlterConfigsResource
    Config = Resource.AlterableConfig
    request = IncrementalAlterConfigsRequest[1](
        resources=[
            Resource(
                resource_type=4,
                resource_name=resource,
                configs=[Config(name="cordoned.log.dirs", config_operation=operation, value=value)],
            )
        ],
        validate_only=False,
    )
    (result,) = client.request(request, IncrementalAlterConfigsResponse, 1).responses
    return result.error_code, result.error_message


def _upgrade_metadata_version(client: WireClient, level: int) -> None:
    update = UpdateFeaturesRequest.FeatureUpdateKey(feature="metadata.version", max_version_level=level, upgrade_type=1)
    response = client.request(
        UpdateFeaturesRequest[1](feature_updates=[update], validate_only=False), UpdateFeaturesResponse, 1
    )
    assert response.error_code == NONE, response.error_message


def _produce_plain(client: WireClient, topic: str) -> int:
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
    builder.append(0, timestamp=None, key=None, value=b"still", headers=[])
    Topic = ProduceRequest.TopicProduceData
    request = ProduceRequest[9](
        transactional_id=None,
        acks=-1,
        timeout_ms=5000,
        topic_data=[
            Topic(name=topic, partition_data=[Topic.PartitionProduceData(index=0, records=bytes(builder.build()))])
        ],
    )
    return client.request(request, ProduceResponse, 9).responses[0].partition_responses[0].error_code


def test_cordoned_log_dirs_is_altered_dynamically_as_kafka_43(tmp_path):
    """KIP-1066: `cordoned.log.dirs` per broker, refused below metadata.version 4.3-IV0 and at the cluster
    default, its entries the broker's log dirs or `*`; DescribeLogDirs v5 follows, new topics are refused
    with Kafka 4.4's placement error while existing partitions take records; kept across a restart."""
    data = tmp_path / "logs"
    broker = BrokerProcess(["--data-dir", str(data)]).start()
    try:
        with WireClient(broker.bootstrap) as client:
            assert _create_topic(client, "before") == NONE
            error, message = _alter_broker(client, "1", str(data))
            assert (error, message) == (
                INVALID_CONFIG,
                "The cordoned.log.dirs configuration value cannot be set because it requires "
                "metadata.version >= 4.3-IV0",
            )
            _upgrade_metadata_version(client, 30)
            assert _alter_broker(client, "", str(data))[0] == INVALID_REQUEST  # per broker only
            error, message = _alter_broker(client, "1", "/elsewhere")
            assert error == INVALID_REQUEST and message.startswith("Invalid entry in cordoned.log.dirs: /elsewhere.")
            assert _log_dirs(client, 5).is_cordoned is False
            assert _alter_broker(client, "1", str(data)) == (NONE, None)
            assert _log_dirs(client, 5).is_cordoned is True
            assert _create_topic(client, "refused") == INVALID_REPLICATION_FACTOR
            assert _produce_plain(client, "before") == NONE  # a cordoned log dir serves its partitions
    finally:
        assert broker.stop() == 0, broker.log()
    broker = BrokerProcess(["--data-dir", str(data)]).start()  # the dynamic config is in the metadata log
    try:
        with WireClient(broker.bootstrap) as client:
            assert _log_dirs(client, 5).is_cordoned is True
            assert _alter_broker(client, "1", None, operation=1) == (NONE, None)  # DELETE: uncordoned
            assert _log_dirs(client, 5).is_cordoned is False
            assert _create_topic(client, "taken") == NONE
    finally:
        assert broker.stop() == 0, broker.log()
