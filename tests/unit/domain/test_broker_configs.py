"""Dynamic broker configs (AlterConfigs / IncrementalAlterConfigs on a BROKER resource) against the
in-memory adapter: Kafka's precedence, its refusals, and the new defaults in effect at once."""

from __future__ import annotations

import pytest

from tests.batches import make_batch
from tests.unit.conftest import Cluster
from trafka.domain.configs import BrokerPolicy, ConfigSource
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.topics import TopicPartition

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
NOW = 1_700_000_000_000
TP = TopicPartition("t", 0)
Src = ConfigSource


def _refused(call, code: ErrorCode = ErrorCode.INVALID_REQUEST) -> str:
    with pytest.raises(KafkaError) as info:
        call()
    assert info.value.code == code
    return info.value.message or ""


def _broker(cluster: Cluster, name: str):
    return {e.name: e for e in cluster.policy.describe(None)}[name]


def test_precedence_per_broker_over_default_over_static_over_kafkas():
    cluster = Cluster(BrokerPolicy(topic_defaults={"retention.ms": "7200000"}))
    configs = cluster.catalog.broker_configs
    entry = _broker(cluster, "log.retention.ms")
    assert (entry.value, entry.source) == ("7200000", Src.STATIC_BROKER_CONFIG)

    configs.alter("", {"log.retention.ms": (SET, "3600000")})
    configs.alter("1", {"log.retention.ms": (SET, "60000")})
    entry = _broker(cluster, "log.retention.ms")
    assert (entry.value, entry.source, entry.read_only) == ("60000", Src.DYNAMIC_BROKER_CONFIG, False)
    assert [(s.name, s.value, s.source) for s in entry.synonyms] == [
        ("log.retention.ms", "60000", Src.DYNAMIC_BROKER_CONFIG),
        ("log.retention.ms", "3600000", Src.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("log.retention.ms", "7200000", Src.STATIC_BROKER_CONFIG),
        ("log.retention.hours", "168", Src.DEFAULT_CONFIG),
    ]
    assert cluster.policy.topic_config({}, "retention.ms") == "60000"

    configs.alter("1", {"log.retention.ms": (DELETE, None)})
    assert (_broker(cluster, "log.retention.ms").source, cluster.policy.topic_config({}, "retention.ms")) == (
        Src.DYNAMIC_DEFAULT_BROKER_CONFIG,
        "3600000",
    )
    configs.alter("", {"log.retention.ms": (DELETE, None)})
    assert _broker(cluster, "log.retention.ms").source is Src.STATIC_BROKER_CONFIG


def test_the_cluster_default_describes_only_its_dynamic_values(cluster: Cluster):
    assert cluster.policy.describe_cluster_default(None) == []
    cluster.catalog.broker_configs.alter("", {"log.segment.bytes": (SET, "2000000")})
    cluster.catalog.broker_configs.alter("1", {"message.max.bytes": (SET, "5000")})
    [entry] = cluster.policy.describe_cluster_default(None)
    assert (entry.name, entry.value, entry.source) == (
        "log.segment.bytes",
        "2000000",
        Src.DYNAMIC_DEFAULT_BROKER_CONFIG,
    )


def test_a_topic_describes_where_its_default_comes_from(cluster: Cluster):
    cluster.catalog.create("t", 1, 1, {"retention.ms": "1000"})
    cluster.catalog.broker_configs.alter("", {"message.max.bytes": (SET, "5000"), "log.retention.ms": (SET, "9")})
    described = {e.name: e for e in cluster.policy.describe_topic(cluster.catalog.get("t").configs, None)}
    assert (described["max.message.bytes"].value, described["max.message.bytes"].source) == (
        "5000",
        Src.DYNAMIC_DEFAULT_BROKER_CONFIG,
    )
    retention = described["retention.ms"]
    assert [(s.name, s.source) for s in retention.synonyms] == [
        ("retention.ms", Src.DYNAMIC_TOPIC_CONFIG),
        ("log.retention.ms", Src.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("log.retention.hours", Src.DEFAULT_CONFIG),
    ]
    assert described["segment.bytes"].source is Src.DEFAULT_CONFIG
    plain = {e.name: e for e in cluster.policy.describe_topic({}, ["retention.ms", "segment.ms"])}
    assert (plain["segment.ms"].value, plain["segment.ms"].source) == ("604800000", Src.DEFAULT_CONFIG)
    # Kafka's ConfigHelper drops the synonyms before the config's own name: log.roll.hours' default alone
    # is not shown
    assert plain["segment.ms"].synonyms == ()
    roll = _broker(cluster, "log.roll.ms")
    assert (roll.value, roll.source, roll.synonyms) == ("604800000", Src.DEFAULT_CONFIG, ())


def test_message_max_bytes_applies_to_produce_at_once(cluster: Cluster):
    cluster.catalog.create("t", 1, 1)
    big = make_batch([(1, None, b"x" * 300)])
    assert cluster.replicas.produce(TP, big, NOW).error == ErrorCode.NONE
    cluster.catalog.broker_configs.alter("", {"message.max.bytes": (SET, "200")})
    assert cluster.replicas.produce(TP, big, NOW).error == ErrorCode.MESSAGE_TOO_LARGE
    cluster.catalog.broker_configs.replace("", {})
    assert cluster.replicas.produce(TP, big, NOW).error == ErrorCode.NONE


def test_segment_bytes_reaches_the_open_logs(cluster: Cluster):
    cluster.catalog.create("t", 1, 1)
    cluster.catalog.create("own", 1, 1, {"segment.bytes": "3000000"})
    cluster.catalog.create("small", 1, 1, {"internal.segment.bytes": "500"})  # Kafka's tests' way below 1 MiB
    cluster.catalog.broker_configs.alter("1", {"log.segment.bytes": (SET, "2000000")})
    assert cluster.logs.get(TP).segment_bytes == 2000000
    assert cluster.logs.get(TopicPartition("own", 0)).segment_bytes == 3000000
    assert cluster.logs.get(TopicPartition("small", 0)).segment_bytes == 500
    cluster.catalog.create("later", 1, 1)
    assert cluster.logs.get(TopicPartition("later", 0)).segment_bytes == 2000000


def test_log_cleanup_policy_list_operations_and_retention(cluster: Cluster):
    configs = cluster.catalog.broker_configs
    configs.alter("", {"log.cleanup.policy": (APPEND, "compact")})
    assert configs.current("") == {"log.cleanup.policy": "delete,compact"}
    configs.alter("", {"log.cleanup.policy": (SUBTRACT, "delete")})
    assert cluster.policy.topic_config({}, "cleanup.policy") == "compact"
    message = _refused(lambda: configs.alter("", {"log.retention.ms": (APPEND, "1")}), ErrorCode.INVALID_CONFIG)
    assert message == "Config value append is not allowed for config key: log.retention.ms"


def test_legacy_alter_replaces_the_whole_set(cluster: Cluster):
    configs = cluster.catalog.broker_configs
    configs.alter("1", {"log.retention.ms": (SET, "1"), "log.segment.bytes": (SET, "2000000")})
    configs.replace("1", {"log.retention.bytes": "5"})
    assert configs.current("1") == {"log.retention.bytes": "5"}
    assert cluster.store.broker_configs() == {"1": {"log.retention.bytes": "5"}}


def test_validate_only_changes_nothing(cluster: Cluster):
    cluster.catalog.broker_configs.alter("1", {"message.max.bytes": (SET, "10")}, validate_only=True)
    cluster.catalog.broker_configs.replace("", {"message.max.bytes": "10"}, validate_only=True)
    assert cluster.store.broker_configs() == {}
    assert cluster.policy.max_message_bytes({}) == 1048588


def test_configs_survive_a_restart_on_the_same_store():
    first = Cluster()
    first.catalog.broker_configs.alter("", {"message.max.bytes": (SET, "4096")})
    first.catalog.broker_configs.alter("1", {"log.segment.bytes": (SET, "2097152")})
    again = Cluster(store=first.store)
    assert again.policy.max_message_bytes({}) == 4096
    assert _broker(again, "log.segment.bytes").source is Src.DYNAMIC_BROKER_CONFIG
    assert _broker(again, "message.max.bytes").source is Src.DYNAMIC_DEFAULT_BROKER_CONFIG


@pytest.mark.parametrize(
    ("resource", "configs", "message"),
    [
        ("1", {"broker.id": "2"}, "Cannot update these configs dynamically: Set(broker.id)"),
        ("", {"log.retention.hours": "1"}, "Cannot update these configs dynamically: Set(log.retention.hours)"),
        (
            "1",
            {"num.partitions": "3", "node.id": "1"},
            "Cannot update these configs dynamically: Set(node.id, num.partitions)",
        ),
        (
            "1",
            {"ssl.keystore.location": "/k"},
            "These security configs can be dynamically updated only per-listener using the listener prefix: "
            "Set(ssl.keystore.location)",
        ),
        (
            "",
            {"sasl.kerberos.min.time.before.relogin": "58000"},
            "Cannot update these configs at default cluster level, broker id must be specified: "
            "Set(sasl.kerberos.min.time.before.relogin)",
        ),
        (
            "",
            {"listener.name.plaintext.ssl.keystore.location": "/k"},
            "Cannot update these configs at default cluster level, broker id must be specified: "
            "Set(listener.name.plaintext.ssl.keystore.location)",
        ),
        ("2", {"message.max.bytes": "1"}, "Unexpected broker id, expected 1, but received 2"),
        ("one", {"message.max.bytes": "1"}, "Node id must be an integer, but it is: one"),
        ("1", {"message.max.bytes": "big"}, "Invalid value big for configuration message.max.bytes"),
    ],
)
def test_kafkas_refusals(cluster: Cluster, resource, configs, message):
    assert _refused(lambda: cluster.catalog.broker_configs.replace(resource, configs)).startswith(message)
    changes = {k: (SET, v) for k, v in configs.items()}
    assert _refused(lambda: cluster.catalog.broker_configs.alter(resource, changes)).startswith(message)
    assert cluster.store.broker_configs() == {}


@pytest.mark.parametrize(
    "configs",
    [
        {"log.cleaner.io.max.bytes.per.second": "1000"},
        {"log.cleaner.threads": "2"},
        {"max.connections": "10"},
        {"max.connections.per.ip": "5"},
        {"listener.name.plaintext.ssl.keystore.location": "/k"},
        {"compression.type": "lz4", "message.max.bytes": "5000"},
    ],
)
def test_dynamic_in_kafka_but_not_applied_by_trafka_is_refused_by_name(cluster: Cluster, configs):
    message = _refused(lambda: cluster.catalog.broker_configs.replace("1", configs))
    assert "trafka applies only the topic config defaults dynamically" in message
    refused = sorted(k for k in configs if k != "message.max.bytes")
    assert message.endswith("Set(" + ", ".join(refused) + ")")
    assert cluster.store.broker_configs() == {}
    assert cluster.policy.max_message_bytes({}) == 1048588


def test_null_values_are_refused_as_kafka_does(cluster: Cluster):
    message = _refused(lambda: cluster.catalog.broker_configs.alter("1", {"message.max.bytes": (SET, None)}))
    assert message == "Null value not supported for : message.max.bytes"


@pytest.mark.parametrize(
    ("name", "value"),
    [("background.threads", "9"), ("num.io.threads", "4"), ("sasl.kerberos.min.time.before.relogin", "58000")],
)
def test_dynamic_configs_of_machinery_trafka_lacks_are_recorded_and_described(cluster: Cluster, name, value):
    """Thread pools and Kerberos settings (librdkafka's test 0081 sets these): nothing to apply in trafka,
    so they are accepted as Kafka accepts them, recorded, and described with their dynamic source."""
    cluster.catalog.broker_configs.alter("1", {name: (SET, value)})
    assert cluster.store.broker_configs() == {"1": {name: value}}
    [entry] = cluster.policy.describe([name])
    assert (entry.value, entry.source) == (value, ConfigSource.DYNAMIC_BROKER_CONFIG)


def test_a_thread_count_below_one_is_refused(cluster: Cluster):
    message = _refused(lambda: cluster.catalog.broker_configs.alter("1", {"background.threads": (SET, "0")}))
    assert "background.threads" in message
    assert cluster.store.broker_configs() == {}


def test_a_default_given_under_another_name_shows_kafkas_synonyms():
    """Kafka's server.properties sets log.retention.hours: Kafka's DescribeConfigs then shows no synonym
    for a topic's retention.ms and calls its source DEFAULT_CONFIG (ConfigHelper.configSynonyms drops
    what comes before log.retention.ms); given as log.retention.ms, the static value and the hours'
    default show."""
    hours = BrokerPolicy(
        topic_defaults={"retention.ms": "604800000"}, static_names={"retention.ms": "log.retention.hours"}
    )
    [entry] = hours.describe_topic({}, ["retention.ms"])
    assert (entry.value, entry.source, entry.synonyms) == ("604800000", Src.DEFAULT_CONFIG, ())
    millis = BrokerPolicy(topic_defaults={"retention.ms": "3600000"})
    [entry] = millis.describe_topic({}, ["retention.ms"])
    assert (entry.value, entry.source) == ("3600000", Src.STATIC_BROKER_CONFIG)
    assert [(s.name, s.value, s.source) for s in entry.synonyms] == [
        ("log.retention.ms", "3600000", Src.STATIC_BROKER_CONFIG),
        ("log.retention.hours", "168", Src.DEFAULT_CONFIG),
    ]
    minutes = BrokerPolicy(
        topic_defaults={"retention.ms": "120000"}, static_names={"retention.ms": "log.retention.minutes"}
    )
    assert minutes.describe_topic({}, ["retention.ms"])[0].synonyms == ()
    assert minutes.topic_config({}, "retention.ms") == "120000"  # the value itself is the static one
