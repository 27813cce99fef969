"""Topic and broker configuration as Kafka describes it.

`TOPIC_CONFIG_DEFAULTS` is the set of topic-level configs trafka knows, with Kafka's defaults; a
CreateTopics config outside it is INVALID_CONFIG, as in Kafka. `BrokerPolicy` is the part of the
broker's settings the domain acts on (the app layer builds it from the user's configuration). Its
`topic_defaults` are the broker's own defaults for topic configs (Kafka's `log.retention.ms` for
`retention.ms`...): a topic without an override of its own uses them, and DescribeConfigs reports them
as STATIC_BROKER_CONFIG, as Kafka does.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

import attrs

from .errors import ErrorCode, KafkaError

# The subject name strategies broker-side schema validation (`schema_validation.py`) serves: Confluent's
# class name, and Redpanda's short name. Only TopicNameStrategy, so these are the configs' only values.
TOPIC_NAME_STRATEGY = "io.confluent.kafka.serializers.subject.TopicNameStrategy"
SUBJECT_NAME_STRATEGIES = frozenset({TOPIC_NAME_STRATEGY, "TopicNameStrategy"})


class ConfigResourceType(enum.IntEnum):
    """What a config belongs to, as DescribeConfigs, AlterConfigs and the metadata log's ConfigRecord name
    it (Kafka's `ConfigResource.Type`)."""

    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


class ConfigSource(enum.IntEnum):
    """DescribeConfigs' config source (Kafka's `DescribeConfigsResponse.ConfigSource`)."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5


class ConfigType(enum.IntEnum):
    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


@attrs.frozen
class ConfigEntry:
    name: str
    value: str | None
    source: ConfigSource
    config_type: ConfigType
    read_only: bool = False
    is_sensitive: bool = False


# name -> (default, type). Defaults are Kafka 4.0's; the confluent.* and redpanda.* ones are Confluent
# Server's and Redpanda's broker-side schema validation (`schema_validation.py`).
TOPIC_CONFIG_DEFAULTS: Mapping[str, tuple[str, ConfigType]] = {
    "cleanup.policy": ("delete", ConfigType.LIST),
    "compression.type": ("producer", ConfigType.STRING),
    "confluent.key.schema.validation": ("false", ConfigType.BOOLEAN),
    "confluent.key.subject.name.strategy": (TOPIC_NAME_STRATEGY, ConfigType.STRING),
    "confluent.value.schema.validation": ("false", ConfigType.BOOLEAN),
    "confluent.value.subject.name.strategy": (TOPIC_NAME_STRATEGY, ConfigType.STRING),
    "delete.retention.ms": ("86400000", ConfigType.LONG),
    "file.delete.delay.ms": ("60000", ConfigType.LONG),
    "flush.messages": ("9223372036854775807", ConfigType.LONG),
    "flush.ms": ("9223372036854775807", ConfigType.LONG),
    "index.interval.bytes": ("4096", ConfigType.INT),
    "max.compaction.lag.ms": ("9223372036854775807", ConfigType.LONG),
    "max.message.bytes": ("1048588", ConfigType.INT),
    "message.timestamp.after.max.ms": ("3600000", ConfigType.LONG),
    "message.timestamp.before.max.ms": ("9223372036854775807", ConfigType.LONG),
    "message.timestamp.type": ("CreateTime", ConfigType.STRING),
    "min.cleanable.dirty.ratio": ("0.5", ConfigType.DOUBLE),
    "min.compaction.lag.ms": ("0", ConfigType.LONG),
    "min.insync.replicas": ("1", ConfigType.INT),
    "preallocate": ("false", ConfigType.BOOLEAN),
    "redpanda.key.schema.id.validation": ("false", ConfigType.BOOLEAN),
    "redpanda.value.schema.id.validation": ("false", ConfigType.BOOLEAN),
    "retention.bytes": ("-1", ConfigType.LONG),
    "retention.ms": ("604800000", ConfigType.LONG),
    "segment.bytes": ("1073741824", ConfigType.INT),
    "segment.index.bytes": ("10485760", ConfigType.INT),
    "segment.jitter.ms": ("0", ConfigType.LONG),
    "segment.ms": ("604800000", ConfigType.LONG),
    "unclean.leader.election.enable": ("false", ConfigType.BOOLEAN),
}

# Kafka's ranges (its ConfigDef validators) for the numeric topic configs trafka acts on.
_RANGES: Mapping[str, tuple[int, int]] = {
    "segment.bytes": (14, 2**31 - 1),
    "segment.ms": (1, 2**63 - 1),
    "index.interval.bytes": (0, 2**31 - 1),
    "max.message.bytes": (0, 2**31 - 1),
    "retention.ms": (-1, 2**63 - 1),
    "retention.bytes": (-1, 2**63 - 1),
    "flush.messages": (1, 2**63 - 1),
    "flush.ms": (0, 2**63 - 1),
    "segment.index.bytes": (8, 2**31 - 1),
    "min.insync.replicas": (1, 2**31 - 1),
}

_ENUMS = {
    "message.timestamp.type": {"CreateTime", "LogAppendTime"},
    "compression.type": {"producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"},
    "confluent.key.subject.name.strategy": SUBJECT_NAME_STRATEGIES,
    "confluent.value.subject.name.strategy": SUBJECT_NAME_STRATEGIES,
}


def _valid(name: str, value: str, config_type: ConfigType) -> bool:
    if name in _ENUMS:
        return value in _ENUMS[name]
    if name == "cleanup.policy":
        parts = [p.strip() for p in value.split(",")]
        return bool(parts) and all(p in ("delete", "compact") for p in parts)
    if config_type in (ConfigType.INT, ConfigType.LONG, ConfigType.SHORT):
        try:
            number = int(value)
        except ValueError:
            return False
        low, high = _RANGES.get(name, (-(2**63), 2**63 - 1))
        return low <= number <= high
    if config_type is ConfigType.DOUBLE:
        try:
            float(value)
        except ValueError:
            return False
        return True
    if config_type is ConfigType.BOOLEAN:
        return value.lower() in ("true", "false")
    return True


def validate_topic_configs(configs: Mapping[str, str | None]) -> dict[str, str]:
    """Check names and values against Kafka's topic configs; return the non-null ones."""
    out: dict[str, str] = {}
    for name, value in configs.items():
        if name not in TOPIC_CONFIG_DEFAULTS:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown topic config name: {name}")
        if value is None:
            continue
        if not _valid(name, value, TOPIC_CONFIG_DEFAULTS[name][1]):
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Invalid value {value} for configuration {name}")
        out[name] = value
    return out


# Topic config -> the broker config that sets its default (Kafka's ServerTopicConfigSynonyms).
TOPIC_CONFIG_SYNONYMS: Mapping[str, str] = {
    "retention.ms": "log.retention.ms",
    "retention.bytes": "log.retention.bytes",
    "segment.bytes": "log.segment.bytes",
    "segment.ms": "log.roll.ms",
    "flush.messages": "log.flush.interval.messages",
    "flush.ms": "log.flush.interval.ms",
    "index.interval.bytes": "log.index.interval.bytes",
    "max.message.bytes": "message.max.bytes",
}


def describe_topic_configs(
    overrides: Mapping[str, str], keys: list[str] | None, broker_defaults: Mapping[str, str] | None = None
) -> list[ConfigEntry]:
    broker_defaults = broker_defaults or {}
    entries = []
    for name, (default, config_type) in sorted(TOPIC_CONFIG_DEFAULTS.items()):
        if keys is not None and name not in keys:
            continue
        if name in overrides:
            entries.append(ConfigEntry(name, overrides[name], ConfigSource.DYNAMIC_TOPIC_CONFIG, config_type))
        elif name in broker_defaults:
            entries.append(ConfigEntry(name, broker_defaults[name], ConfigSource.STATIC_BROKER_CONFIG, config_type))
        else:
            entries.append(ConfigEntry(name, default, ConfigSource.DEFAULT_CONFIG, config_type))
    return entries


@attrs.frozen
class BrokerPolicy:
    """The broker-wide settings that decide domain behaviour."""

    node_id: int = 1
    cluster_id: str = "trafka-cluster-0000000"
    auto_create_topics_enable: bool = True
    num_partitions: int = 1
    default_replication_factor: int = 1
    message_max_bytes: int = 1048588
    fetch_max_bytes: int = 57671680
    topic_defaults: Mapping[str, str] = attrs.field(factory=dict)  # e.g. {"retention.ms": "3600000"}

    def topic_config(self, topic_configs: Mapping[str, str], name: str) -> str:
        """A topic's value of `name`: its own override, else the broker's default, else Kafka's."""
        if name in topic_configs:
            return topic_configs[name]
        return self.topic_defaults.get(name, TOPIC_CONFIG_DEFAULTS[name][0])

    def describe_topic(self, topic_configs: Mapping[str, str], keys: list[str] | None) -> list[ConfigEntry]:
        defaults = {**self.topic_defaults, "max.message.bytes": str(self.message_max_bytes)}
        if self.message_max_bytes == int(TOPIC_CONFIG_DEFAULTS["max.message.bytes"][0]):
            del defaults["max.message.bytes"]
        return describe_topic_configs(topic_configs, keys, defaults)

    def describe(self, keys: list[str] | None) -> list[ConfigEntry]:
        topic_level = {
            broker_name: (self.topic_config({}, topic_name), TOPIC_CONFIG_DEFAULTS[topic_name][1])
            for topic_name, broker_name in TOPIC_CONFIG_SYNONYMS.items()
            if topic_name != "max.message.bytes"
        }
        values = {
            **topic_level,
            "auto.create.topics.enable": (str(self.auto_create_topics_enable).lower(), ConfigType.BOOLEAN),
            "broker.id": (str(self.node_id), ConfigType.INT),
            "node.id": (str(self.node_id), ConfigType.INT),
            "default.replication.factor": (str(self.default_replication_factor), ConfigType.INT),
            "message.max.bytes": (str(self.message_max_bytes), ConfigType.INT),
            "num.partitions": (str(self.num_partitions), ConfigType.INT),
            "log.cleanup.policy": ("delete", ConfigType.LIST),
            "min.insync.replicas": ("1", ConfigType.INT),
        }
        return [
            ConfigEntry(name, value, ConfigSource.STATIC_BROKER_CONFIG, config_type, read_only=True)
            for name, (value, config_type) in sorted(values.items())
            if keys is None or name in keys
        ]

    def max_message_bytes(self, topic_configs: Mapping[str, str]) -> int:
        if "max.message.bytes" in topic_configs:
            return int(topic_configs["max.message.bytes"])
        return self.message_max_bytes
