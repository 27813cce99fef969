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
)
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse

from tests.kafka_python_messages import (
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)

from .broker import BrokerProcess
from .test_transactions_v2_wire import _batch, _end, _init, _produce
from .wire import WireClient

NONE, INVALID_REPLICATION_FACTOR, GROUP_ID_NOT_FOUND, UNKNOWN_TOPIC_ID = 0, 38, 69, 100


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
