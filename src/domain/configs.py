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
import itertools
from collections.abc import Mapping

import attrs

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
    GROUP_CONFIG = 8


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
class ConfigSynonym:
    """One of the places a config's value may come from, as DescribeConfigs lists them (include_synonyms)."""

    name: str
    value: str | None
    source: ConfigSource


@attrs.frozen
class ConfigEntry:
    name: str
    value: str | None
    source: ConfigSource
    config_type: ConfigType
    read_only: bool = False
    is_sensitive: bool = False
    # In precedence order, the entry's own first; empty: the entry alone is its synonym.
    synonyms: tuple[ConfigSynonym, ...] = ()


# name -> (default, type). Defaults are Kafka 4.0's; the confluent.* and redpanda.* ones are Confluent
# Server's and Redpanda's broker-side schema validation (`schema_validation.py`).
TOPIC_CONFIG_DEFAULTS: Mapping[str, tuple[str, ConfigType]] = {
    "cleanup.policy": ("delete", ConfigType.LIST),
    "compression.gzip.level": ("-1", ConfigType.INT),  # KIP-390 (Kafka 3.8)
    "compression.lz4.level": ("9", ConfigType.INT),
    "compression.type": ("producer", ConfigType.STRING),
    "compression.zstd.level": ("3", ConfigType.INT),
    "confluent.key.schema.validation": ("false", ConfigType.BOOLEAN),
    "confluent.key.subject.name.strategy": (TOPIC_NAME_STRATEGY, ConfigType.STRING),
    "confluent.value.schema.validation": ("false", ConfigType.BOOLEAN),
    "confluent.value.subject.name.strategy": (TOPIC_NAME_STRATEGY, ConfigType.STRING),
    "delete.retention.ms": ("86400000", ConfigType.LONG),
    "errors.deadletterqueue.group.enable": ("false", ConfigType.BOOLEAN),  # KIP-1191: may be a dead-letter topic
    "file.delete.delay.ms": ("60000", ConfigType.LONG),
    "flush.messages": ("9223372036854775807", ConfigType.LONG),
    "flush.ms": ("9223372036854775807", ConfigType.LONG),
    "follower.replication.throttled.replicas": ("", ConfigType.LIST),
    "index.interval.bytes": ("4096", ConfigType.INT),
    "leader.replication.throttled.replicas": ("", ConfigType.LIST),
    "local.retention.bytes": ("-2", ConfigType.LONG),  # tiered storage (KIP-405): -2 is retention.bytes
    "local.retention.ms": ("-2", ConfigType.LONG),
    "max.compaction.lag.ms": ("9223372036854775807", ConfigType.LONG),
    "max.decompressed.message.bytes": ("2147483639", ConfigType.INT),
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
    "remote.log.copy.disable": ("false", ConfigType.BOOLEAN),
    "remote.log.delete.on.disable": ("false", ConfigType.BOOLEAN),
    "remote.storage.enable": ("false", ConfigType.BOOLEAN),  # refused true: no tiered storage here
    "retention.bytes": ("-1", ConfigType.LONG),
    "retention.ms": ("604800000", ConfigType.LONG),
    "segment.bytes": ("1073741824", ConfigType.INT),
    "segment.index.bytes": ("10485760", ConfigType.INT),
    "segment.jitter.ms": ("0", ConfigType.LONG),
    "segment.ms": ("604800000", ConfigType.LONG),
    "unclean.leader.election.enable": ("false", ConfigType.BOOLEAN),
}

# Kafka's internal topic configs (LogConfig's defineInternal): accepted by CreateTopics and
# IncrementalAlterConfigs, described only when a topic sets them, with no default. `internal.segment.bytes`
# is how Kafka's own tests roll segments below segment.bytes' 1 MiB minimum: when set, it is the segment
# size (LogConfig.segmentSize), and it has no lower bound. trafka's tests use it the same way (ADR 99).
INTERNAL_SEGMENT_BYTES = "internal.segment.bytes"
INTERNAL_TOPIC_CONFIGS: Mapping[str, ConfigType] = {INTERNAL_SEGMENT_BYTES: ConfigType.INT}

# Kafka 4.1+ (KIP-1030): segment.bytes and log.segment.bytes are at least 1 MiB.
MIN_SEGMENT_BYTES = 1024 * 1024


def segment_size(configs: Mapping[str, str], segment_bytes: int | str) -> int:
    """The size a topic's segments roll at: its `internal.segment.bytes` when set, else `segment_bytes`
    (its segment.bytes, already resolved against the broker's defaults), as Kafka's LogConfig.segmentSize."""
    return int(configs.get(INTERNAL_SEGMENT_BYTES, segment_bytes))


# The topic configs the broker acts on; the others are validated, stored and described as Kafka does,
# with nothing to act on (one broker, one replica, no compaction yet). docs/COVERAGE.md shows both.
HONOURED_TOPIC_CONFIGS = frozenset(
    {
        "cleanup.policy",  # "delete" (retention), "compact" (the log cleaner), or both
        "delete.retention.ms",  # how long the cleaner keeps tombstones (KIP-534's delete horizon)
        "errors.deadletterqueue.group.enable",  # share groups' dead-letter copies go only to such a topic
        "max.compaction.lag.ms",
        "min.cleanable.dirty.ratio",
        "min.compaction.lag.ms",
        "confluent.key.schema.validation",
        "confluent.key.subject.name.strategy",
        "confluent.value.schema.validation",
        "confluent.value.subject.name.strategy",
        "flush.messages",
        "flush.ms",
        "index.interval.bytes",
        "max.message.bytes",
        "message.timestamp.after.max.ms",
        "message.timestamp.type",
        "redpanda.key.schema.id.validation",
        "redpanda.value.schema.id.validation",
        "retention.bytes",
        "retention.ms",
        "segment.bytes",
        "segment.ms",
    }
)


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
    "cleanup.policy": "log.cleanup.policy",
    "min.insync.replicas": "min.insync.replicas",  # cluster-wide while eligible leader replicas are on (KIP-966)
}

# The broker configs Kafka gives other names in other units (DynamicBrokerConfig.brokerConfigSynonyms),
# the name itself first: each other name with its unit in ms and its Kafka default (the first name has
# none: log.retention.ms is null and log.retention.hours' 168 applies).
BROKER_CONFIG_NAMES: Mapping[str, tuple[tuple[str, int, str | None], ...]] = {
    "log.retention.ms": (
        ("log.retention.ms", 1, None),
        ("log.retention.minutes", 60_000, None),
        ("log.retention.hours", 3_600_000, "168"),
    ),
    "log.roll.ms": (("log.roll.ms", 1, None), ("log.roll.hours", 3_600_000, "168")),
    "log.flush.interval.ms": (
        ("log.flush.interval.ms", 1, None),
        ("log.flush.scheduler.interval.ms", 1, "9223372036854775807"),
    ),
}


@attrs.define(eq=False)
class DynamicBrokerConfigs:
    """The broker configs set while the broker runs (AlterConfigs / IncrementalAlterConfigs on a BROKER
    resource), by broker config name: this broker's own (resource "<node id>") and the cluster-wide
    default (resource ""). `version` counts the changes, so what caches a derived value can tell."""

    per_broker: dict[str, str] = attrs.field(factory=dict)
    cluster_default: dict[str, str] = attrs.field(factory=dict)
    version: int = 0

    def replace(self, per_broker: bool, configs: Mapping[str, str]) -> None:
        if per_broker:
            self.per_broker = dict(configs)
        else:
            self.cluster_default = dict(configs)
        self.version += 1


_BROKER_SYNONYMS = frozenset(TOPIC_CONFIG_SYNONYMS.values())


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
    return sorted(entries + _internal_entries(overrides, keys), key=lambda entry: entry.name)


def _internal_entries(topic_configs: Mapping[str, str], keys: list[str] | None) -> list[ConfigEntry]:
    """The internal configs a topic sets: Kafka describes a topic's own overrides whatever they are
    (ConfigHelper lists the LogConfig's originals beside its public values)."""
    return [
        ConfigEntry(
            name,
            topic_configs[name],
            ConfigSource.DYNAMIC_TOPIC_CONFIG,
            config_type,
            synonyms=(ConfigSynonym(name, topic_configs[name], ConfigSource.DYNAMIC_TOPIC_CONFIG),),
        )
        for name, config_type in INTERNAL_TOPIC_CONFIGS.items()
        if name in topic_configs and (keys is None or name in keys)
    ]


CORDONED_LOG_DIRS = "cordoned.log.dirs"  # KIP-1066 (Kafka 4.3): log dirs that take no new partitions
CORDON_ALL = "*"


@attrs.frozen
class BrokerPolicy:
    """The broker-wide settings that decide domain behaviour: the static ones (the user's configuration)
    and, in `dynamic`, the broker configs altered at run time, which take precedence for the topic
    config defaults (Kafka's order: DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG,
    STATIC_BROKER_CONFIG, DEFAULT_CONFIG)."""

    node_id: int = 1
    cluster_id: str = "trafka-cluster-0000000"
    auto_create_topics_enable: bool = True
    num_partitions: int = 1
    default_replication_factor: int = 1
    message_max_bytes: int = 1048588
    fetch_max_bytes: int = 57671680
    topic_defaults: Mapping[str, str] = attrs.field(factory=dict)  # e.g. {"retention.ms": "3600000"}
    log_dir_cordoned: bool = False  # the static cordoned.log.dirs names the log dir (KIP-1066)
    # the spellings of the log dir an entry of cordoned.log.dirs may use (as given, absolute)
    log_dir_names: frozenset[str] = frozenset()
    # can broker-side schema validation run: is the Schema Registry installed (trafka's registry extra)?
    schema_validation_available: bool = True
    # the Kafka key each static default of `topic_defaults` was given as, where it is not the broker
    # config's own name: {"retention.ms": "log.retention.hours"} (Kafka's server.properties does so)
    static_names: Mapping[str, str] = attrs.field(factory=dict)
    dynamic: DynamicBrokerConfigs = attrs.field(factory=DynamicBrokerConfigs, eq=False, repr=False)

    def is_log_dir_cordoned(self) -> bool:
        """Does the log dir take no new partitions (KIP-1066)? This broker's dynamic `cordoned.log.dirs`
        (Kafka 4.3 alters it per broker) wins over the configuration's."""
        value = self.dynamic.per_broker.get(CORDONED_LOG_DIRS)
        if value is None:
            return self.log_dir_cordoned
        entries = {entry.strip() for entry in value.split(",") if entry.strip()}
        return CORDON_ALL in entries or bool(entries & self.log_dir_names)

    def _static_default(self, topic_name: str) -> str | None:
        """The configuration's default for a topic config (STATIC_BROKER_CONFIG), None if it sets none."""
        if topic_name == "max.message.bytes":
            if self.message_max_bytes == int(TOPIC_CONFIG_DEFAULTS["max.message.bytes"][0]):
                return None
            return str(self.message_max_bytes)
        return self.topic_defaults.get(topic_name)

    def _broker_synonyms(self, topic_name: str) -> list[ConfigSynonym]:
        """Where a topic config's default comes from, highest precedence first; the last always applies."""
        broker_name = TOPIC_CONFIG_SYNONYMS.get(topic_name)
        out = []
        if broker_name is not None:
            if broker_name in self.dynamic.per_broker:
                out.append(
                    ConfigSynonym(broker_name, self.dynamic.per_broker[broker_name], ConfigSource.DYNAMIC_BROKER_CONFIG)
                )
            if broker_name in self.dynamic.cluster_default:
                out.append(
                    ConfigSynonym(
                        broker_name,
                        self.dynamic.cluster_default[broker_name],
                        ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
                    )
                )
        static = self._static_default(topic_name)
        names = BROKER_CONFIG_NAMES.get(broker_name or "")
        if names is None:
            if static is not None:
                out.append(ConfigSynonym(broker_name or topic_name, static, ConfigSource.STATIC_BROKER_CONFIG))
            out.append(
                ConfigSynonym(
                    broker_name or topic_name, TOPIC_CONFIG_DEFAULTS[topic_name][0], ConfigSource.DEFAULT_CONFIG
                )
            )
            return out
        if static is not None:
            given = self.static_names.get(topic_name, names[0][0])
            unit = next((unit for name, unit, _ in names if name == given), 1)
            value = static if unit == 1 or int(static) < 0 else str(int(static) // unit)
            out.append(ConfigSynonym(given, value, ConfigSource.STATIC_BROKER_CONFIG))
        out += [ConfigSynonym(name, default, ConfigSource.DEFAULT_CONFIG) for name, _, default in names if default]
        # Kafka's ConfigHelper.configSynonyms drops every synonym before the config's own name: one set
        # only under another name (log.retention.hours in Kafka's server.properties) shows no synonym
        return list(itertools.dropwhile(lambda synonym: synonym.name != broker_name, out))

    def broker_default(self, topic_name: str) -> tuple[str, ConfigSource]:
        """The value a topic without its own `topic_name` gets, and where it comes from."""
        broker_name = TOPIC_CONFIG_SYNONYMS.get(topic_name)
        if broker_name is not None:
            if broker_name in self.dynamic.per_broker:
                return self.dynamic.per_broker[broker_name], ConfigSource.DYNAMIC_BROKER_CONFIG
            if broker_name in self.dynamic.cluster_default:
                return self.dynamic.cluster_default[broker_name], ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
        static = self._static_default(topic_name)
        if static is not None:
            return static, ConfigSource.STATIC_BROKER_CONFIG
        return TOPIC_CONFIG_DEFAULTS[topic_name][0], ConfigSource.DEFAULT_CONFIG

    def effective_topic_defaults(self) -> dict[str, str]:
        """The broker's defaults for topic configs now (static and dynamic), where they differ from
        Kafka's: what the log stores apply to a topic without an override."""
        out = {}
        for topic_name in TOPIC_CONFIG_SYNONYMS:
            value, source = self.broker_default(topic_name)
            if source is not ConfigSource.DEFAULT_CONFIG:
                out[topic_name] = value
        return out

    def topic_config(self, topic_configs: Mapping[str, str], name: str) -> str:
        """A topic's value of `name`: its own override, else the broker's default, else Kafka's."""
        if name in topic_configs:
            return topic_configs[name]
        return self.broker_default(name)[0]

    def describe_topic(self, topic_configs: Mapping[str, str], keys: list[str] | None) -> list[ConfigEntry]:
        entries = []
        for name, (_, config_type) in sorted(TOPIC_CONFIG_DEFAULTS.items()):
            if keys is not None and name not in keys:
                continue
            synonyms = self._broker_synonyms(name)
            if name in topic_configs:
                synonyms.insert(0, ConfigSynonym(name, topic_configs[name], ConfigSource.DYNAMIC_TOPIC_CONFIG))
                value, source = topic_configs[name], ConfigSource.DYNAMIC_TOPIC_CONFIG
            else:
                value = self.broker_default(name)[0]  # in the topic config's unit (ms, not hours)
                # Kafka: the first synonym's source (DEFAULT_CONFIG when Kafka shows none, see above)
                source = synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG
            entries.append(ConfigEntry(name, value, source, config_type, synonyms=tuple(synonyms)))
        return sorted(entries + _internal_entries(topic_configs, keys), key=lambda entry: entry.name)

    def describe(self, keys: list[str] | None) -> list[ConfigEntry]:
        """This broker's configs (DescribeConfigs of BROKER "<node id>"): the dynamic ones by precedence."""
        dynamic = {}
        for topic_name, broker_name in TOPIC_CONFIG_SYNONYMS.items():
            value, source = self.broker_default(topic_name)  # in ms where Kafka's default is in hours
            dynamic[broker_name] = ConfigEntry(
                broker_name,
                value,
                source,
                TOPIC_CONFIG_DEFAULTS[topic_name][1],
                synonyms=tuple(self._broker_synonyms(topic_name)),
            )
        values = {
            "auto.create.topics.enable": (str(self.auto_create_topics_enable).lower(), ConfigType.BOOLEAN),
            "broker.id": (str(self.node_id), ConfigType.INT),
            "node.id": (str(self.node_id), ConfigType.INT),
            "default.replication.factor": (str(self.default_replication_factor), ConfigType.INT),
            "num.partitions": (str(self.num_partitions), ConfigType.INT),
            "min.insync.replicas": ("1", ConfigType.INT),
        }
        static = {
            name: ConfigEntry(name, value, ConfigSource.STATIC_BROKER_CONFIG, config_type, read_only=True)
            for name, (value, config_type) in values.items()
        }
        for name, (value, source) in self._inert().items():  # thread pools, Kerberos...: nothing to apply
            synonyms = [ConfigSynonym(name, value, source)]
            if source is ConfigSource.DYNAMIC_BROKER_CONFIG and name in self.dynamic.cluster_default:
                synonyms.append(
                    ConfigSynonym(name, self.dynamic.cluster_default[name], ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
                )
            dynamic[name] = ConfigEntry(name, value, source, ConfigType.STRING, synonyms=tuple(synonyms))
        every = {**static, **dynamic}
        return [every[name] for name in sorted(every) if keys is None or name in keys]

    def _inert(self) -> dict[str, tuple[str, ConfigSource]]:
        """The dynamic configs set that are not topic defaults, each with its value by precedence."""
        found = {n: (v, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG) for n, v in self.dynamic.cluster_default.items()}
        found.update((n, (v, ConfigSource.DYNAMIC_BROKER_CONFIG)) for n, v in self.dynamic.per_broker.items())
        return {n: found[n] for n in found if n not in _BROKER_SYNONYMS}

    def describe_cluster_default(self, keys: list[str] | None) -> list[ConfigEntry]:
        """DescribeConfigs of BROKER "" (the cluster-wide default): only the dynamic default values."""
        types = {broker: TOPIC_CONFIG_DEFAULTS[topic][1] for topic, broker in TOPIC_CONFIG_SYNONYMS.items()}
        return [
            ConfigEntry(
                name,
                value,
                ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
                types.get(name, ConfigType.STRING),
                synonyms=(ConfigSynonym(name, value, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),),
            )
            for name, value in sorted(self.dynamic.cluster_default.items())
            if keys is None or name in keys
        ]

    def max_message_bytes(self, topic_configs: Mapping[str, str]) -> int:
        return int(self.topic_config(topic_configs, "max.message.bytes"))
