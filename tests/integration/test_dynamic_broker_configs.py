"""Dynamic broker configs through real admin clients on the filesystem store: altered on this broker
(BROKER "1") and on the cluster default (BROKER ""), described with their source and synonyms, in
effect at once, refused as Kafka refuses them, and still there after a restart.

Neither confluent-kafka (librdkafka wants an int32 broker id) nor kafka-python can name the cluster
default (Kafka's Java admin client and `kafka-configs.sh --entity-default` can): its requests are sent
with kafka-python's protocol classes over the wire client.
"""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewTopic,
    ResourceType,
)
from kafka.protocol.admin import (
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)

from .broker import running
from .wire import WireClient

TIMEOUT = 10
BROKER = ConfigResource(ResourceType.BROKER, "1")


def _admin(broker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap, "log_level": 0})


def _set(resource_name: str, **configs: str | None) -> ConfigResource:
    """IncrementalAlterConfigs on a broker resource: SET each name (dots as underscores), DELETE on None."""
    entries = [
        ConfigEntry(
            name.replace("_", "."),
            value,
            incremental_operation=AlterConfigOpType.SET if value is not None else AlterConfigOpType.DELETE,
        )
        for name, value in configs.items()
    ]
    return ConfigResource(ResourceType.BROKER, resource_name, incremental_configs=entries)


def _alter_default(broker, resource_name: str = "", **configs: str | None) -> tuple[int, str | None]:
    """IncrementalAlterConfigs on the cluster default (BROKER ""), or another broker resource, over the wire."""
    Resource = IncrementalAlterConfigsRequest[1].AlterConfigsResource
    Config = Resource.AlterableConfig
    entries = [
        Config(name=name.replace("_", "."), config_operation=0 if value is not None else 1, value=value)
        for name, value in configs.items()
    ]
    request = IncrementalAlterConfigsRequest[1](
        resources=[Resource(resource_type=4, resource_name=resource_name, configs=entries)], validate_only=False
    )
    with WireClient(broker.bootstrap) as client:
        [answer] = client.request(request, IncrementalAlterConfigsResponse, 1).responses
    return answer.error_code, answer.error_message


def _describe_wire(broker, resource_name: str):
    """DescribeConfigs of a broker resource with synonyms, over the wire (in order, duplicates kept)."""
    Resource = DescribeConfigsRequest[4].DescribeConfigsResource
    request = DescribeConfigsRequest[4](
        resources=[Resource(resource_type=4, resource_name=resource_name, configuration_keys=None)],
        include_synonyms=True,
        include_documentation=False,
    )
    with WireClient(broker.bootstrap) as client:
        [result] = client.request(request, DescribeConfigsResponse, 4).results
    assert result.error_code == 0, result.error_message
    return {c.name: c for c in result.configs}


def _describe_default(broker) -> dict[str, tuple[str, ConfigSource]]:
    return {name: (c.value, ConfigSource(c.config_source)) for name, c in _describe_wire(broker, "").items()}


def _alter(admin: AdminClient, resource: ConfigResource) -> None:
    admin.incremental_alter_configs([resource])[resource].result(TIMEOUT)


def _describe(admin: AdminClient, resource: ConfigResource) -> dict[str, ConfigEntry]:
    plain = ConfigResource(resource.restype, resource.name)
    return admin.describe_configs([plain])[plain].result(TIMEOUT)


def _source(entry: ConfigEntry) -> tuple[str, ConfigSource]:
    return entry.value, ConfigSource(entry.source)


def _produce(broker, topic: str, size: int) -> KafkaError | None:
    """The delivery error of one record of `size` bytes (None when it was appended)."""
    errors: list[KafkaError | None] = []
    producer = Producer({"bootstrap.servers": broker.bootstrap, "log_level": 0, "message.timeout.ms": 5000})
    producer.produce(topic, value=b"x" * size, on_delivery=lambda err, msg: errors.append(err))
    producer.flush(TIMEOUT)
    return errors[0]


@pytest.mark.filterwarnings("ignore:alter_configs has been deprecated")
def test_dynamic_broker_configs_apply_describe_and_survive_a_restart(tmp_path):
    data_dir = tmp_path / "logs"
    with running(data_dir) as broker:
        admin = _admin(broker)
        admin.create_topics([NewTopic("plain", 1, 1), NewTopic("own", 1, 1, config={"max.message.bytes": "100000"})])[
            "plain"
        ].result(TIMEOUT)
        assert _produce(broker, "plain", 5000) is None

        assert _alter_default(broker, message_max_bytes="2000", log_retention_ms="7200000") == (0, None)
        _alter(admin, _set("1", log_retention_ms="3600000"))

        configs = _describe(admin, BROKER)
        assert _source(configs["message.max.bytes"]) == ("2000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
        retention = configs["log.retention.ms"]
        assert _source(retention) == ("3600000", ConfigSource.DYNAMIC_BROKER_CONFIG)
        assert not retention.is_read_only
        synonyms = _describe_wire(broker, "1")["log.retention.ms"].synonyms
        assert [(s.name, s.value, ConfigSource(s.source)) for s in synonyms] == [
            ("log.retention.ms", "3600000", ConfigSource.DYNAMIC_BROKER_CONFIG),
            ("log.retention.ms", "7200000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
            ("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG),
        ]
        assert _describe_default(broker) == {
            "message.max.bytes": ("2000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
            "log.retention.ms": ("7200000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
            # set with the log dir, as Kafka 4.2 sets it with eligible leader replicas on (KIP-966)
            "min.insync.replicas": ("1", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        }
        topic = _describe(admin, ConfigResource(ResourceType.TOPIC, "plain"))
        assert _source(topic["max.message.bytes"]) == ("2000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
        assert _source(topic["retention.ms"]) == ("3600000", ConfigSource.DYNAMIC_BROKER_CONFIG)

        error = _produce(broker, "plain", 5000)
        assert error is not None and error.code() == KafkaError.MSG_SIZE_TOO_LARGE
        assert _produce(broker, "own", 5000) is None  # the topic's own override wins

        # The legacy AlterConfigs replaces this broker's whole dynamic set: log.retention.ms goes.
        legacy = ConfigResource(ResourceType.BROKER, "1", set_config={"log.segment.bytes": "2000000"})
        admin.alter_configs([legacy])[legacy].result(TIMEOUT)
        configs = _describe(admin, BROKER)
        assert _source(configs["log.segment.bytes"]) == ("2000000", ConfigSource.DYNAMIC_BROKER_CONFIG)
        assert _source(configs["log.retention.ms"]) == ("7200000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
        assert broker.stop() == 0, broker.log()

    with running(data_dir) as broker:
        admin = _admin(broker)
        configs = _describe(admin, BROKER)
        assert _source(configs["message.max.bytes"]) == ("2000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
        assert _source(configs["log.segment.bytes"]) == ("2000000", ConfigSource.DYNAMIC_BROKER_CONFIG)
        error = _produce(broker, "plain", 5000)
        assert error is not None and error.code() == KafkaError.MSG_SIZE_TOO_LARGE

        assert _alter_default(broker, message_max_bytes=None) == (0, None)
        assert _describe_default(broker) == {
            "log.retention.ms": ("7200000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
            "min.insync.replicas": ("1", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        }
        topic = _describe(admin, ConfigResource(ResourceType.TOPIC, "plain"))
        assert _source(topic["max.message.bytes"]) == ("1048588", ConfigSource.DEFAULT_CONFIG)
        assert _produce(broker, "plain", 5000) is None
        assert broker.stop() == 0, broker.log()


@pytest.mark.parametrize(
    ("resource", "configs", "message"),
    [
        ("1", {"broker_id": "2"}, "Cannot update these configs dynamically: Set(broker.id)"),
        ("1", {"log_cleaner_threads": "2"}, "trafka applies only the topic config defaults dynamically"),
    ],
)
@pytest.mark.filterwarnings("ignore:alter_configs has been deprecated")
def test_refused_as_invalid_request(broker, bootstrap, resource, configs, message):
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    with pytest.raises(KafkaException) as info:
        _alter(admin, _set(resource, **configs))
    assert info.value.args[0].code() == KafkaError.INVALID_REQUEST
    assert message in info.value.args[0].str()
    legacy = ConfigResource(
        ResourceType.BROKER, resource, set_config={k.replace("_", "."): v for k, v in configs.items()}
    )
    with pytest.raises(KafkaException) as info:
        admin.alter_configs([legacy])[legacy].result(TIMEOUT)
    assert info.value.args[0].code() == KafkaError.INVALID_REQUEST


def test_kafka_python_alters_and_resets_a_broker_config(broker, bootstrap):
    from kafka.admin import ConfigResource as KpResource
    from kafka.admin import ConfigResourceType, KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        result = admin.alter_configs([KpResource(ConfigResourceType.BROKER, "1", {"log.roll.ms": "3600000"})])
        assert result == {"broker": {"1": None}} or "1" in str(result), result
        described = admin.describe_configs([KpResource(ConfigResourceType.BROKER, "1")], include_synonyms=True)
        roll = described["broker"]["1"]["log.roll.ms"]
        assert (roll["value"], roll["config_source"]) == ("3600000", "DYNAMIC_BROKER_CONFIG")
        admin.reset_configs([KpResource(ConfigResourceType.BROKER, "1", ["log.roll.ms"])])
        described = admin.describe_configs([KpResource(ConfigResourceType.BROKER, "1")], config_filter="all")
        assert described["broker"]["1"]["log.roll.ms"]["config_source"] == "DEFAULT_CONFIG"
    finally:
        admin.close()


def test_per_broker_configs_at_the_cluster_default_and_other_brokers_are_refused(broker):
    code, message = _alter_default(broker, sasl_kerberos_min_time_before_relogin="58000")
    assert code == KafkaError.INVALID_REQUEST
    assert message == (
        "Cannot update these configs at default cluster level, broker id must be specified: "
        "Set(sasl.kerberos.min.time.before.relogin)"
    )
    code, message = _alter_default(broker, log_retention_hours="1")
    assert (code, message) == (
        KafkaError.INVALID_REQUEST,
        "Cannot update these configs dynamically: Set(log.retention.hours)",
    )
    code, message = _alter_default(broker, "2", message_max_bytes="2000")
    assert (code, message) == (KafkaError.INVALID_REQUEST, "Unexpected broker id, expected 1, but received 2")


def test_librdkafka_0081s_broker_configs_are_accepted_and_described(broker, bootstrap):
    """librdkafka's test 0081 alters `background.threads` and `sasl.kerberos.min.time.before.relogin` on the
    broker: Kafka updates both dynamically; trafka has no thread pool or Kerberos to apply them to, so it
    records them and describes them with their dynamic source, as Kafka does."""
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    _alter(admin, _set("1", background_threads="9", sasl_kerberos_min_time_before_relogin="58000"))
    described = _describe(admin, ConfigResource(ResourceType.BROKER, "1"))
    assert _source(described["background.threads"]) == ("9", ConfigSource.DYNAMIC_BROKER_CONFIG)
    assert _source(described["sasl.kerberos.min.time.before.relogin"]) == (
        "58000",
        ConfigSource.DYNAMIC_BROKER_CONFIG,
    )
    _alter(admin, _set("1", background_threads=None, sasl_kerberos_min_time_before_relogin=None))
    assert "background.threads" not in _describe(admin, ConfigResource(ResourceType.BROKER, "1"))
