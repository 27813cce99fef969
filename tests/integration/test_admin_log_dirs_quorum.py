"""DescribeLogDirs, AlterReplicaLogDirs, ElectLeaders and DescribeQuorum through real admin clients:
kafka-python's KafkaAdminClient (all four) and confluent-kafka's AdminClient (elect_leaders), on the
filesystem store."""

from __future__ import annotations

import os

import pytest
from confluent_kafka import ElectionType, KafkaError, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaAdminClient, KafkaProducer, TopicPartitionReplica
from kafka.admin import NewTopic as KafkaPythonNewTopic
from kafka.errors import LogDirNotFoundError, NoError, UnknownTopicOrPartitionError

from .broker import BrokerProcess

ELECTION_NOT_NEEDED = 84


@pytest.fixture(scope="module")
def fs_broker(tmp_path_factory):
    data = tmp_path_factory.mktemp("logs")
    broker = BrokerProcess(["--data-dir", str(data)]).start()
    broker.data_dir = os.path.abspath(data)
    yield broker
    assert broker.stop() == 0, broker.log()


@pytest.fixture
def admin(fs_broker):
    client = KafkaAdminClient(bootstrap_servers=fs_broker.bootstrap)
    yield client
    client.close()


def _node_id(admin: KafkaAdminClient) -> int:
    return admin.describe_cluster()["controller_id"]


def _produce(broker, topic: str, count: int) -> None:
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=0)
    for _ in range(count):
        producer.send(topic, value=b"x" * 200, partition=0)
    producer.flush(10)
    producer.close()


def _sizes(admin: KafkaAdminClient, topics) -> tuple[dict, dict]:
    (broker,) = admin.describe_log_dirs(topics)
    (log_dir,) = broker["log_dirs"]
    sizes = {
        (topic["name"], partition["partition_index"]): partition
        for topic in log_dir["topics"]
        for partition in topic["partitions"]
    }
    return log_dir, sizes


def test_kafka_python_describe_log_dirs_sizes_grow_with_produced_records(fs_broker, admin, topic_name):
    admin.create_topics([KafkaPythonNewTopic(topic_name, 2, 1)])
    _produce(fs_broker, topic_name, 5)
    log_dir, sizes = _sizes(admin, {topic_name: [0, 1]})
    assert log_dir["error_code"] == 0 and log_dir["log_dir"] == fs_broker.data_dir
    assert log_dir["total_bytes"] >= log_dir["usable_bytes"] > 0
    assert set(sizes) == {(topic_name, 0), (topic_name, 1)}
    first = sizes[(topic_name, 0)]["partition_size"]
    assert first > 5 * 200 and sizes[(topic_name, 1)]["partition_size"] == 0
    assert sizes[(topic_name, 0)]["offset_lag"] == 0 and not sizes[(topic_name, 0)]["is_future_key"]
    _produce(fs_broker, topic_name, 5)
    assert _sizes(admin, [topic_name])[1][(topic_name, 0)]["partition_size"] > first
    _, everything = _sizes(admin, None)
    assert (topic_name, 0) in everything


def test_kafka_python_alter_replica_log_dirs_to_its_own_log_dir_only(fs_broker, admin, topic_name):
    admin.create_topics([KafkaPythonNewTopic(topic_name, 1, 1)])
    node = _node_id(admin)
    here = TopicPartitionReplica(topic_name, 0, node)
    assert admin.alter_replica_log_dirs({here: fs_broker.data_dir}) == {here: NoError}
    assert admin.alter_replica_log_dirs({here: "/no/such/dir"}) == {here: LogDirNotFoundError}
    unknown = TopicPartitionReplica(topic_name, 3, node)
    assert admin.alter_replica_log_dirs({unknown: fs_broker.data_dir}) == {unknown: UnknownTopicOrPartitionError}


def test_kafka_python_elect_leaders_is_never_needed(fs_broker, admin, topic_name):
    admin.create_topics([KafkaPythonNewTopic(topic_name, 2, 1)])
    response = admin.elect_leaders(0, {topic_name: [0, 1]})
    assert response.error_code == 0
    (result,) = response.replica_election_results
    assert result.topic == topic_name
    assert [(p.partition_id, p.error_code) for p in result.partition_result] == [
        (0, ELECTION_NOT_NEEDED),
        (1, ELECTION_NOT_NEEDED),
    ]
    with pytest.raises(UnknownTopicOrPartitionError):
        admin.elect_leaders(1, {topic_name: [7]})


def test_kafka_python_describe_metadata_quorum_is_led_by_this_broker(fs_broker, admin):
    quorum = admin.describe_metadata_quorum()
    node = _node_id(admin)
    (topic,) = quorum["topics"]
    (partition,) = topic["partitions"]
    assert (topic["topic_name"], partition["partition_index"], partition["error"]) == ("__cluster_metadata", 0, None)
    assert partition["leader_id"] == node and partition["leader_epoch"] == 1
    (voter,) = partition["current_voters"]
    assert voter["replica_id"] == node
    assert voter["log_end_offset"] == partition["high_watermark"] > 0  # the metadata log holds the topics
    assert voter["last_fetch_timestamp"] > 0 and partition["observers"] == []
    (described,) = quorum["nodes"]
    host, port = fs_broker.bootstrap.split(":")
    assert described["node_id"] == node
    assert [(lst["host"], lst["port"]) for lst in described["listeners"]] == [(host, int(port))]


def test_confluent_elect_leaders_answers_election_not_needed_per_partition(fs_broker, topic_name):
    admin = AdminClient({"bootstrap.servers": fs_broker.bootstrap, "log_level": 0})
    admin.create_topics([NewTopic(topic_name, 2, 1)])[topic_name].result(10)
    partitions = [TopicPartition(topic_name, 0), TopicPartition(topic_name, 1)]
    results = admin.elect_leaders(ElectionType.PREFERRED, partitions).result(10)
    assert sorted((tp.topic, tp.partition) for tp in results) == [(topic_name, 0), (topic_name, 1)]
    for error in results.values():
        assert error is not None and error.code() == KafkaError.ELECTION_NOT_NEEDED
    unknown = admin.elect_leaders(ElectionType.UNCLEAN, [TopicPartition(topic_name, 9)]).result(10)
    assert [e.code() for e in unknown.values()] == [KafkaError.UNKNOWN_TOPIC_OR_PART]
    assert admin.elect_leaders(ElectionType.PREFERRED, None).result(10) == {}


def test_the_memory_store_describes_one_log_dir_named_memory_and_an_empty_metadata_log(broker, topic_name):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([KafkaPythonNewTopic(topic_name, 1, 1)])
        _produce(broker, topic_name, 3)
        log_dir, sizes = _sizes(admin, [topic_name])
        assert (log_dir["log_dir"], log_dir["total_bytes"], log_dir["usable_bytes"]) == ("memory", -1, -1)
        assert sizes[(topic_name, 0)]["partition_size"] > 3 * 200
        (partition,) = admin.describe_metadata_quorum()["topics"][0]["partitions"]
        assert (partition["leader_id"], partition["high_watermark"]) == (_node_id(admin), 0)
    finally:
        admin.close()
