"""Kafka's configuration, as Kafka writes it: server.properties files and KAFKA_* variables."""

from __future__ import annotations

from pathlib import Path

import pytest

from trafka.app.config.kafka_keys import KafkaConfigError, map_kafka_configs, overrides_from_config_names
from trafka.app.config.kafka_names import env_to_kafka_key, is_kafka_key, kafka_broker_keys
from trafka.app.config.settings import ConfigError, load_configuration, load_settings
from trafka.app.wiring.bootstrap import listeners_from, policy_from, topic_defaults_from
from trafka.domain.configs import ConfigSource

FIXTURES = next(p for p in Path(__file__).resolve().parents if p.name == "tests") / "fixtures"
KAFKA_SERVER_PROPERTIES = FIXTURES / "kafka-4.0-server.properties"


def write(tmp_path, text: str, name: str = "server.properties") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_kafkas_own_server_properties_loads_unchanged():
    loaded = load_configuration(str(KAFKA_SERVER_PROPERTIES))
    settings = loaded.settings
    [listener] = listeners_from(settings)  # PLAINTEXT://:9092; the CONTROLLER listener is left out
    assert (listener.name, listener.host, listener.port) == ("PLAINTEXT", "", 9092)
    assert (listener.advertised_host, listener.advertised_port) == ("localhost", 9092)
    assert settings.broker.node_id == 1
    assert settings.broker.num_partitions == 1
    assert (settings.storage.kind, settings.storage.data_dir) == ("filesystem", "/tmp/kraft-combined-logs")
    assert settings.log.retention_ms == 168 * 3_600_000
    assert settings.log.segment_bytes == 1073741824
    assert settings.storage.retention_check_interval_ms == 300000
    assert settings.server.max_request_bytes == 104857600
    # The KRaft quorum, threads, socket buffers and replication of internal topics are Kafka's, not ours.
    for ignored in (
        "controller.quorum.voters",
        "num.network.threads",
        "num.io.threads",
        "offsets.topic.replication.factor",
        "inter.broker.listener.name",
        "share.coordinator.state.topic.replication.factor",
        "socket.send.buffer.bytes",
    ):
        assert ignored in loaded.ignored_kafka_keys
    assert "listeners" not in loaded.ignored_kafka_keys and "log.dirs" not in loaded.ignored_kafka_keys
    assert loaded.sources["log.retention_ms"] == f"file {KAFKA_SERVER_PROPERTIES} (log.retention.hours)"


def test_the_generated_key_list_is_kafkas():
    keys = kafka_broker_keys()
    assert 250 < len(keys) < 500
    for key in (
        "listeners",
        "log.retention.hours",
        "process.roles",
        "controller.quorum.voters",
        "ssl.keystore.location",
        "group.initial.rebalance.delay.ms",
        "log.cleaner.min.cleanable.ratio",
    ):
        assert key in keys
    for not_broker in ("retention.ms", "bootstrap.servers", "zookeeper.connect", "consumer_byte_rate"):
        assert not_broker not in keys
    assert is_kafka_key("listener.name.internal.ssl.keystore.location")


@pytest.mark.parametrize(
    ("configs", "expected"),
    [
        ({"log.retention.hours": "2", "log.retention.minutes": "3"}, 3 * 60_000),
        ({"log.retention.hours": "2", "log.retention.minutes": "3", "log.retention.ms": "7"}, 7),
        ({"log.retention.hours": "2"}, 7_200_000),
        ({"log.retention.ms": "-5"}, -1),
        ({"log.retention.hours": "-1"}, -1),
    ],
)
def test_retention_ms_minutes_hours_precedence(configs, expected):
    assert map_kafka_configs(configs).overrides["log"]["retention_ms"] == expected


def test_roll_and_flush_precedence():
    assert map_kafka_configs({"log.roll.hours": "2", "log.roll.ms": "5"}).overrides["log"]["roll_ms"] == 5
    assert map_kafka_configs({"log.roll.hours": "2"}).overrides["log"]["roll_ms"] == 7_200_000
    flush = map_kafka_configs({"log.flush.scheduler.interval.ms": "9"}).overrides["log"]
    assert flush["flush_interval_ms"] == 9
    both = map_kafka_configs({"log.flush.scheduler.interval.ms": "9", "log.flush.interval.ms": "4"})
    assert both.overrides["log"]["flush_interval_ms"] == 4


def test_log_dirs_wins_over_log_dir_and_one_dir_only():
    mapped = map_kafka_configs({"log.dir": "/a", "log.dirs": "/b"})
    assert mapped.overrides["storage"] == {"data_dir": "/b", "kind": "filesystem"}
    assert map_kafka_configs({"log.dir": "/a"}).overrides["storage"]["data_dir"] == "/a"
    with pytest.raises(KafkaConfigError, match="log.dirs"):
        map_kafka_configs({"log.dirs": "/a,/b"})


def test_broker_id_is_node_id_and_must_agree():
    assert map_kafka_configs({"broker.id": "3"}).overrides["broker"]["node_id"] == 3
    with pytest.raises(KafkaConfigError, match="broker.id 3 must equal node.id 4"):
        map_kafka_configs({"broker.id": "3", "node.id": "4"})


@pytest.mark.parametrize(
    ("configs", "needle"),
    [
        ({"num.partitions": "many"}, "'many' for num.partitions"),
        ({"num.partitions": "0"}, "'0' for num.partitions"),
        ({"auto.create.topics.enable": "yes"}, "'yes' for auto.create.topics.enable"),
        ({"default.replication.factor": "3"}, "'3' for default.replication.factor"),
        (
            {"log.segment.bytes": "13"},
            "Invalid value 13 for configuration log.segment.bytes: Value must be at least 1048576",
        ),
        # Kafka 4.1+'s minimum (KIP-1030), in its words
        (
            {"log.segment.bytes": "1048575"},
            "Invalid value 1048575 for configuration log.segment.bytes: Value must be at least 1048576",
        ),
        (
            {"log.segment.bytes": "big"},
            "Invalid value big for configuration log.segment.bytes: Not a number of type INT",
        ),
        ({"node.id": "99999999999"}, "for node.id"),
        ({"listeners": "PLAINTEXT://nohost"}, "for listeners"),
        ({"process.roles": "controller"}, "process.roles"),
        ({"advertised.listeners": "nohost", "listeners": "PLAINTEXT://:9092"}, "advertised.listeners"),
    ],
)
def test_a_bad_value_names_key_and_value(configs, needle):
    with pytest.raises(KafkaConfigError, match=needle.replace(".", r"\.").replace("(", r"\(")):
        map_kafka_configs(configs)


def test_an_unknown_key_is_an_error_but_a_kafka_key_we_do_not_implement_is_ignored(tmp_path):
    with pytest.raises(ConfigError, match="num.partition'"):
        load_settings(write(tmp_path, "num.partition=3\n"))
    loaded = load_configuration(write(tmp_path, "num.partitions=3\nreplica.lag.time.max.ms=1\n"))
    assert loaded.settings.broker.num_partitions == 3
    assert loaded.ignored_kafka_keys == ("replica.lag.time.max.ms",)


def test_a_bad_value_in_a_file_names_the_file_key_and_value(tmp_path):
    path = write(tmp_path, "num.partitions = lots\n")
    with pytest.raises(ConfigError) as info:
        load_settings(path)
    assert path in str(info.value) and "'lots' for num.partitions" in str(info.value)


def test_listeners_map_onto_trafkas_listeners_with_controller_listeners_left_out():
    mapped = map_kafka_configs(
        {
            "listeners": "PLAINTEXT://127.0.0.1:19092,CONTROLLER://:9093,SECURE://:9094",
            "advertised.listeners": "PLAINTEXT://broker.example:29092,CONTROLLER://localhost:9093,SECURE://b:9094",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SECURE:SASL_SSL",
            "listener.name.secure.sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "super.users": "User:admin",
        }
    )
    assert mapped.overrides["server"] == {
        "listeners": "PLAINTEXT://127.0.0.1:19092,SECURE://:9094",
        "advertised_listeners": "PLAINTEXT://broker.example:29092,SECURE://b:9094",
        "listener_security_protocol_map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SECURE:SASL_SSL",
    }
    assert mapped.overrides["security"] == {
        "super_users": "User:admin",
        "listener_name": {"secure": {"sasl_enabled_mechanisms": "SCRAM-SHA-512"}},
    }
    assert mapped.ignored == ()


def test_a_toml_file_stays_toml_and_properties_then_flags(tmp_path):
    toml = write(tmp_path, "[broker]\nnum_partitions = 5\n", "trafka.toml")
    assert load_settings(toml).broker.num_partitions == 5
    props = write(tmp_path, "num.partitions=4\nlisteners=PLAINTEXT://:9999\n")
    settings = load_settings(props, {}, {"server": {"port": 0}})
    assert (settings.broker.num_partitions, settings.server.listeners) == (4, "PLAINTEXT://:0")


def test_topic_defaults_reach_the_broker_policy(tmp_path):
    props = write(
        tmp_path,
        "log.retention.minutes=5\nlog.segment.bytes=1048576\nlog.roll.hours=1\n"
        "log.flush.interval.messages=10\nlog.retention.bytes=999\n",
    )
    policy = policy_from(load_settings(props))
    assert (
        topic_defaults_from(load_settings(props))
        == policy.topic_defaults
        == {
            "retention.ms": "300000",
            "segment.bytes": "1048576",
            "segment.ms": "3600000",
            "flush.messages": "10",
            "retention.bytes": "999",
        }
    )
    entries = {e.name: e for e in policy.describe_topic({"retention.ms": "7"}, None)}
    assert (entries["retention.ms"].value, entries["retention.ms"].source) == ("7", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    assert (entries["segment.bytes"].value, entries["segment.bytes"].source) == (
        "1048576",
        ConfigSource.STATIC_BROKER_CONFIG,
    )
    assert (entries["flush.ms"].source) == ConfigSource.DEFAULT_CONFIG
    broker = {e.name: e.value for e in policy.describe(None)}
    assert broker["log.retention.ms"] == "300000" and broker["log.roll.ms"] == "3600000"
    assert policy.topic_config({}, "retention.ms") == "300000"
    assert policy.topic_config({"retention.ms": "1"}, "retention.ms") == "1"


# --- KAFKA_* environment variables, as the apache/kafka image reads them ---------------------------


def test_env_names_convert_as_the_image_converts_them():
    assert env_to_kafka_key("KAFKA_ADVERTISED_LISTENERS") == "advertised.listeners"
    assert env_to_kafka_key("KAFKA_LISTENER_NAME_INTERNAL_SSL__KEYSTORE") == "listener.name.internal.ssl_keystore"
    assert env_to_kafka_key("KAFKA_SOME___DASHED") == "some-dashed"


# Kafka's docker examples: docker/examples/docker-compose-files/single-node/plaintext/docker-compose.yml
# (apache/kafka@1eb7644), the environment of its `broker` service as compose passes it.
KAFKA_EXAMPLE_COMPOSE_ENV = {
    "KAFKA_NODE_ID": "1",
    "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,PLAINTEXT_HOST:PLAINTEXT",
    "KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT_HOST://localhost:9092,PLAINTEXT://broker:19092",
    "KAFKA_PROCESS_ROLES": "broker,controller",
    "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@broker:29093",
    "KAFKA_LISTENERS": "CONTROLLER://:29093,PLAINTEXT_HOST://:9092,PLAINTEXT://:19092",
    "KAFKA_INTER_BROKER_LISTENER_NAME": "PLAINTEXT",
    "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
    "CLUSTER_ID": "4L6g3nShT-eMCtK--X86sw",
    "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
    "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
    "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
    "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
    "KAFKA_LOG_DIRS": "/tmp/kraft-combined-logs",
}
# The one-listener quickstart of the apache/kafka image's documentation (docker run -e ... / compose).
KAFKA_QUICKSTART_ENV = {
    "KAFKA_NODE_ID": "1",
    "KAFKA_PROCESS_ROLES": "broker,controller",
    "KAFKA_LISTENERS": "PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093",
    "KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT://localhost:9092",
    "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
    "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@localhost:9093",
    "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
    "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
    "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
    "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
    "KAFKA_NUM_PARTITIONS": "3",
    "KAFKA_HEAP_OPTS": "-Xmx1G",  # read by the image's scripts, never a config
    "KAFKA_JMX_PORT": "9101",
    "KAFKA_HOME": "/opt/kafka",
}


def test_the_quickstart_environment_loads_through_the_real_loader():
    loaded = load_configuration(None, KAFKA_QUICKSTART_ENV)
    settings = loaded.settings
    [listener] = listeners_from(settings)
    assert (listener.port, listener.advertised_host, listener.advertised_port) == (9092, "localhost", 9092)
    assert settings.broker.num_partitions == 3
    assert settings.groups.initial_rebalance_delay_ms == 0
    assert set(loaded.ignored_kafka_keys) == {
        "controller.quorum.voters",
        "offsets.topic.replication.factor",
        "transaction.state.log.replication.factor",
        "transaction.state.log.min.isr",
    }
    assert loaded.sources["broker.num_partitions"] == "env KAFKA_NUM_PARTITIONS"


def test_the_example_compose_with_two_broker_listeners_loads_unchanged():
    settings = load_settings(None, KAFKA_EXAMPLE_COMPOSE_ENV)
    names = sorted(listener.name for listener in listeners_from(settings))
    assert names == sorted(
        n.split("://")[0]
        for n in KAFKA_EXAMPLE_COMPOSE_ENV["KAFKA_LISTENERS"].split(",")
        if not n.startswith("CONTROLLER")
    )
    assert settings.storage.data_dir == "/tmp/kraft-combined-logs"


def test_env_overrides_the_file_and_kafkas_precedence_holds_across_them(tmp_path):
    props = write(tmp_path, "log.retention.ms=1000\nnum.partitions=2\n")
    loaded = load_configuration(props, {"KAFKA_LOG_RETENTION_HOURS": "5", "KAFKA_NUM_PARTITIONS": "7"})
    assert loaded.settings.log.retention_ms == 1000  # ms beats hours, wherever each came from
    assert loaded.settings.broker.num_partitions == 7
    assert loaded.sources["broker.num_partitions"] == "env KAFKA_NUM_PARTITIONS"


def test_listeners_default_to_the_advertised_ones_on_all_interfaces():
    settings = load_settings(None, {"KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT://kafka.example:9094"})
    [listener] = listeners_from(settings)
    assert (listener.host, listener.port) == ("0.0.0.0", 9094)
    assert (listener.advertised_host, listener.advertised_port) == ("kafka.example", 9094)


def test_trafka_env_and_flags_win_over_kafka_env():
    settings = load_settings(None, {"KAFKA_NUM_PARTITIONS": "2", "TRAFKA_BROKER_NUM_PARTITIONS": "3"})
    assert settings.broker.num_partitions == 3
    settings = load_settings(
        None, {"KAFKA_LISTENERS": "PLAINTEXT://:9093"}, {"server": {"listeners": "PLAINTEXT://:0"}}
    )
    assert settings.server.listeners == "PLAINTEXT://:0"


def test_an_unknown_kafka_variable_is_named():
    with pytest.raises(ConfigError, match="env KAFKA_NUM_PARTITION: unknown Kafka config 'num.partition'"):
        load_settings(None, {"KAFKA_NUM_PARTITION": "3"})


# --- Kafka config names for the embeddable broker ------------------------------------------------


def test_overrides_from_config_names_takes_dots_or_underscores():
    overrides = overrides_from_config_names(
        {
            "num_partitions": 3,
            "group.initial.rebalance.delay.ms": 0,
            "auto_create_topics_enable": False,
            "log_retention_hours": 1,
        }
    )
    assert overrides == {
        "broker": {"num_partitions": 3, "auto_create_topics_enable": False},
        "groups": {"initial_rebalance_delay_ms": 0},
        "log": {"retention_ms": 3_600_000, "retention_ms_key": "log.retention.hours"},
    }
    assert load_settings(overrides=overrides).broker.num_partitions == 3
    with pytest.raises(KafkaConfigError, match="num.partitionz"):
        overrides_from_config_names({"num_partitionz": 3})
    with pytest.raises(KafkaConfigError, match="does not implement replica.lag.time.max.ms"):
        overrides_from_config_names({"replica_lag_time_max_ms": 3})
    seen = []
    assert overrides_from_config_names({"offsets.topic.replication.factor": 1, "num.partitions": 2}, seen.append) == {
        "broker": {"num_partitions": 2}
    }
    assert seen == [("offsets.topic.replication.factor",)]
    with pytest.raises(KafkaConfigError, match="'x' for num.partitions"):
        overrides_from_config_names({"num_partitions": "x"})


def test_transaction_max_timeout_reaches_the_coordinator():
    from trafka.domain.errors import ErrorCode, KafkaError
    from trafka.domain.transactions import TransactionCoordinator

    settings = load_settings(None, {"KAFKA_TRANSACTION_MAX_TIMEOUT_MS": "1000"})
    assert settings.broker.transaction_max_timeout_ms == 1000
    coordinator = TransactionCoordinator(
        iter(range(100)).__next__, lambda txn: None, (), max_timeout_ms=settings.broker.transaction_max_timeout_ms
    )
    coordinator.init_producer_id("short", 1000, now=0)
    with pytest.raises(KafkaError) as info:
        coordinator.init_producer_id("long", 1001, now=0)
    assert info.value.code is ErrorCode.INVALID_TRANSACTION_TIMEOUT


def test_flags_win_over_the_listeners_of_a_properties_file():
    # `trafka serve --port P server.properties`: the file's PLAINTEXT://:9092 moves to P, and its
    # advertised localhost:9092 with it; before, --port was silently ignored once `listeners` was set.
    loaded = load_configuration(str(KAFKA_SERVER_PROPERTIES), None, {"server": {"port": 0}})
    settings = loaded.settings
    assert (loaded.sources["server.listeners"], loaded.sources["server.port"], settings.server.port) == (
        "flag",
        "flag",
        0,
    )
    [listener] = listeners_from(settings)
    assert (listener.host, listener.port) == ("", 0)
    assert (listener.advertised_host, listener.advertised_port) == ("localhost", 0)
    settings = load_settings(
        str(KAFKA_SERVER_PROPERTIES),
        None,
        {"server": {"host": "127.0.0.1", "port": 19092, "advertised_host": "broker.example", "advertised_port": 29092}},
    )
    [listener] = listeners_from(settings)
    assert (listener.host, listener.port) == ("127.0.0.1", 19092)
    assert (listener.advertised_host, listener.advertised_port) == ("broker.example", 29092)


def test_port_flag_moves_only_the_first_listener_and_keeps_a_distinct_advertised_port():
    env = {
        "KAFKA_LISTENERS": "PLAINTEXT://:9092,INTERNAL://[::1]:9094",
        "KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT://proxy:443,INTERNAL://[::1]:9094",
        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
    }
    settings = load_settings(None, env, {"server": {"port": 0}})
    first, internal = listeners_from(settings)
    assert (first.port, first.advertised_host, first.advertised_port) == (0, "proxy", 443)
    assert (internal.host, internal.port) == ("::1", 9094)
    settings = load_settings(None, {"KAFKA_LISTENERS": "PLAINTEXT://:9092"}, {"server": {"advertised_port": 7}})
    [listener] = listeners_from(settings)
    assert (listener.port, listener.advertised_host, listener.advertised_port) == (9092, "localhost", 7)


def test_no_configuration_starts_as_kafkas_single_node_server_properties(tmp_path):
    # `docker run apache/kafka`: a first group does not wait group.initial.rebalance.delay.ms's 3 s.
    assert (
        load_configuration(None, {}).settings.groups.initial_rebalance_delay_ms == 3000
    )  # a library call: code defaults
    loaded = load_configuration(None, {}, single_node=True)
    assert loaded.settings.groups.initial_rebalance_delay_ms == 0
    assert loaded.sources["groups.initial_rebalance_delay_ms"] == (
        "default (Kafka's single-node server.properties) (group.initial.rebalance.delay.ms)"
    )
    assert loaded.ignored_kafka_keys == ()
    flag = {"groups": {"initial_rebalance_delay_ms": 5}}
    assert load_settings(None, {}, flag, single_node=True).groups.initial_rebalance_delay_ms == 5
    # A properties file or KAFKA_* variables replace the shipped file, as in the image: Kafka's code default.
    assert load_settings(str(KAFKA_SERVER_PROPERTIES), single_node=True).groups.initial_rebalance_delay_ms == 3000
    kafka_env = {"KAFKA_NUM_PARTITIONS": "2"}
    assert load_settings(None, kafka_env, single_node=True).groups.initial_rebalance_delay_ms == 3000
    toml = write(tmp_path, "[broker]\nnum_partitions = 2\n", "trafka.toml")
    assert load_settings(toml, {}, single_node=True).groups.initial_rebalance_delay_ms == 0
