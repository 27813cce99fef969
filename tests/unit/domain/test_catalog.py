"""The topic catalog against the in-memory adapter."""

from __future__ import annotations

import pytest

from tests.unit.conftest import Cluster
from trafka.domain.catalog import AlterOp
from trafka.domain.configs import BrokerPolicy
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.topics import TopicPartition, validate_topic_name


@pytest.mark.parametrize("name", ["", ".", "..", "a" * 250, "bad/name", "sp ace", "ü"])
def test_illegal_topic_names(name):
    with pytest.raises(KafkaError) as info:
        validate_topic_name(name)
    assert info.value.code == ErrorCode.INVALID_TOPIC_EXCEPTION


@pytest.mark.parametrize("name", ["a", "A-b_c.d", "a" * 249, "...", "_x"])
def test_legal_topic_names(name):
    assert validate_topic_name(name) == name


def test_create_makes_partition_logs_and_records_the_topic(cluster: Cluster):
    topic = cluster.catalog.create("orders", 3, 1, {"retention.ms": "1000"})
    assert topic.partition_count == 3
    assert cluster.catalog.get("orders") == topic
    assert cluster.catalog.by_id(topic.topic_id) == topic
    assert [t.name for t in cluster.store.load()] == ["orders"]
    assert all(cluster.logs.get(TopicPartition("orders", p)) is not None for p in range(3))
    assert cluster.logs.get(TopicPartition("orders", 3)) is None


def test_minus_one_means_the_broker_default():
    cluster = Cluster(BrokerPolicy(num_partitions=4))
    assert cluster.catalog.create("t", -1, -1).partition_count == 4


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("t", 0, 1), ErrorCode.INVALID_PARTITIONS),
        (("t", 1, 3), ErrorCode.INVALID_REPLICATION_FACTOR),
        (("t", 1, 0), ErrorCode.INVALID_REPLICATION_FACTOR),
        (("bad name", 1, 1), ErrorCode.INVALID_TOPIC_EXCEPTION),
    ],
)
def test_create_errors(cluster: Cluster, args, code):
    with pytest.raises(KafkaError) as info:
        cluster.catalog.create(*args)
    assert info.value.code == code
    assert cluster.catalog.topics() == []


def test_unknown_or_bad_configs_are_invalid_config(cluster: Cluster):
    for configs in ({"no.such.config": "1"}, {"retention.ms": "soon"}, {"cleanup.policy": "forever"}):
        with pytest.raises(KafkaError) as info:
            cluster.catalog.create("t", 1, 1, configs)
        assert info.value.code == ErrorCode.INVALID_CONFIG


def test_create_twice_is_topic_already_exists(cluster: Cluster):
    cluster.catalog.create("t", 1, 1)
    with pytest.raises(KafkaError) as info:
        cluster.catalog.create("t", 1, 1)
    assert info.value.code == ErrorCode.TOPIC_ALREADY_EXISTS


def test_validate_only_creates_nothing(cluster: Cluster):
    topic = cluster.catalog.create("t", 2, 1, validate_only=True)
    assert topic.partition_count == 2
    assert cluster.catalog.get("t") is None and cluster.store.load() == []


def test_auto_create_uses_num_partitions_and_respects_the_switch():
    cluster = Cluster(BrokerPolicy(num_partitions=2))
    assert cluster.catalog.auto_create("auto").partition_count == 2
    off = Cluster(BrokerPolicy(auto_create_topics_enable=False))
    with pytest.raises(KafkaError) as info:
        off.catalog.auto_create("auto")
    assert info.value.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_create_partitions_grows_only(cluster: Cluster):
    cluster.catalog.create("t", 2, 1)
    assert cluster.catalog.create_partitions("t", 5).partition_count == 5
    assert cluster.logs.get(TopicPartition("t", 4)) is not None
    for count in (5, 3):
        with pytest.raises(KafkaError) as info:
            cluster.catalog.create_partitions("t", count)
        assert info.value.code == ErrorCode.INVALID_PARTITIONS
    with pytest.raises(KafkaError) as info:
        cluster.catalog.create_partitions("missing", 3)
    assert info.value.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_delete_by_name_and_by_id(cluster: Cluster):
    a = cluster.catalog.create("a", 1, 1)
    b = cluster.catalog.create("b", 2, 1)
    cluster.catalog.delete("a")
    cluster.catalog.delete_by_id(b.topic_id)
    assert cluster.catalog.topics() == [] and cluster.store.load() == []
    assert cluster.logs.get(TopicPartition("b", 1)) is None
    with pytest.raises(KafkaError) as info:
        cluster.catalog.delete_by_id(a.topic_id)
    assert info.value.code == ErrorCode.UNKNOWN_TOPIC_ID


def test_a_catalog_rebuilt_from_its_store_has_the_same_topics(cluster: Cluster):
    cluster.catalog.create("kept", 3, 1, {"retention.ms": "5"})
    cluster.catalog.create("gone", 1, 1)
    cluster.catalog.delete("gone")
    reopened = Cluster(store=cluster.store)
    assert reopened.catalog.topics() == cluster.catalog.topics()
    assert reopened.logs.get(TopicPartition("kept", 2)) is not None


@pytest.mark.parametrize(
    "configs",
    [
        {"segment.bytes": "3000000000"},
        {"segment.bytes": "10"},
        {"index.interval.bytes": "-1"},
        {"retention.ms": "-2"},
        {"flush.messages": "0"},
    ],
)
def test_config_values_outside_kafkas_ranges_are_invalid_config(cluster: Cluster, configs):
    with pytest.raises(KafkaError) as info:
        cluster.catalog.create("t", 1, 1, configs)
    assert info.value.code == ErrorCode.INVALID_CONFIG


@pytest.mark.parametrize(
    ("configs", "message"),
    [
        ({"retention.ms": "soon"}, "Invalid value soon for configuration retention.ms: Not a number of type LONG"),
        ({"segment.bytes": "big"}, "Invalid value big for configuration segment.bytes: Not a number of type INT"),
        ({"retention.ms": "-2"}, "Invalid value -2 for configuration retention.ms: Value must be at least -1"),
        (
            {"segment.bytes": "3000000000"},
            "Invalid value 3000000000 for configuration segment.bytes: Value must be no more than 2147483647",
        ),
        (  # Kafka 4.1+ (KIP-1030): segments of at least 1 MiB
            {"segment.bytes": "1048575"},
            "Invalid value 1048575 for configuration segment.bytes: Value must be at least 1048576",
        ),
        (
            {"internal.segment.bytes": "small"},
            "Invalid value small for configuration internal.segment.bytes: Not a number of type INT",
        ),
        (
            {"unclean.leader.election.enable": "maybe"},
            "Invalid value maybe for configuration unclean.leader.election.enable: "
            "Expected value to be either true or false",
        ),
    ],
)
def test_bad_config_values_are_refused_in_kafkas_words(cluster: Cluster, configs, message):
    """Kafka's ConfigException text, as Kafka 4.2's Admin client shows it (tests/java's AdminTest)."""
    with pytest.raises(KafkaError) as info:
        cluster.catalog.create("t", 1, 1, configs)
    assert info.value.code == ErrorCode.INVALID_CONFIG
    assert str(info.value.message) == message


def test_internal_segment_bytes_sizes_segments_below_a_mebibyte(cluster: Cluster):
    """Kafka's internal.segment.bytes (LogConfig's internal config, how its tests roll small segments):
    accepted at any size, the segment size when set, described only on the topics that set it."""
    cluster.catalog.create("small", 1, 1, {"internal.segment.bytes": "100", "segment.bytes": "1048576"})
    assert cluster.logs.get(TopicPartition("small", 0)).segment_bytes == 100
    described = {e.name: e.value for e in cluster.policy.describe_topic(cluster.catalog.get("small").configs, None)}
    assert (described["internal.segment.bytes"], described["segment.bytes"]) == ("100", "1048576")
    cluster.catalog.create("plain", 1, 1)
    assert "internal.segment.bytes" not in {e.name for e in cluster.policy.describe_topic({}, None)}
    altered = cluster.catalog.alter_configs("plain", {"internal.segment.bytes": (AlterOp.SET, "300")})
    assert altered.configs == {"internal.segment.bytes": "300"}
    assert cluster.logs.get(TopicPartition("plain", 0)).segment_bytes == 300


def test_internal_and_colliding_topic_names_are_refused(cluster: Cluster):
    for name in ("__consumer_offsets", "__transaction_state", "__cluster_metadata"):
        with pytest.raises(KafkaError) as info:
            cluster.catalog.create(name, 1, 1)
        assert info.value.code == ErrorCode.INVALID_REQUEST
    cluster.catalog.create("a.b", 1, 1)
    with pytest.raises(KafkaError) as info:
        cluster.catalog.create("a_b", 1, 1)
    assert info.value.code == ErrorCode.INVALID_TOPIC_EXCEPTION


class _FailingLogs:
    """The in-memory logs, failing the creation of the `fail_at`-th log (as a broker out of descriptors)."""

    def __init__(self, logs, fail_at: int) -> None:
        self._logs, self._left = logs, fail_at

    def __getattr__(self, name):
        return getattr(self._logs, name)

    def create(self, tp, topic):
        self._left -= 1
        if self._left == 0:
            raise OSError(24, "Too many open files")
        return self._logs.create(tp, topic)


def test_a_topic_whose_logs_fail_halfway_is_not_created_and_its_logs_are_gone():
    """Issue 27 row 9: all or nothing, so the broker never records a topic without its partitions."""
    cluster = Cluster()
    cluster.catalog._logs = _FailingLogs(cluster.logs, fail_at=4)
    with pytest.raises(KafkaError) as info:
        cluster.catalog.create("half", 6)
    assert info.value.code == ErrorCode.KAFKA_STORAGE_ERROR and "Too many open files" in info.value.message
    assert cluster.catalog.get("half") is None
    assert all(cluster.logs.get(TopicPartition("half", p)) is None for p in range(6))
    assert not [t for t in cluster.store.load() if t.name == "half"], "nothing recorded"


def test_partitions_whose_logs_fail_halfway_are_not_added():
    cluster = Cluster()
    cluster.catalog.create("grows", 2)
    cluster.catalog._logs = _FailingLogs(cluster.logs, fail_at=3)
    with pytest.raises(KafkaError):
        cluster.catalog.create_partitions("grows", 6)
    assert cluster.catalog.get("grows").partition_count == 2
    assert [p for p in range(6) if cluster.logs.get(TopicPartition("grows", p)) is not None] == [0, 1]
