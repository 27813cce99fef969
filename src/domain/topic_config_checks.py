"""Kafka's checks of topic config values (its LogConfig's ConfigDef validators): ranges, enumerations,
the message ConfigDef gives for a refused value, and the order it checks several values in. Used by
CreateTopics, the config alters and the broker's dynamic configs (their topic synonyms)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from .configs import (
    INTERNAL_TOPIC_CONFIGS,
    MIN_SEGMENT_BYTES,
    SUBJECT_NAME_STRATEGIES,
    TOPIC_CONFIG_DEFAULTS,
    ConfigType,
)
from .errors import ErrorCode, KafkaError

# Kafka's ranges (its ConfigDef validators) for the numeric topic configs trafka acts on.
_RANGES: Mapping[str, tuple[int, int]] = {
    "segment.bytes": (MIN_SEGMENT_BYTES, 2**31 - 1),
    "segment.ms": (1, 2**63 - 1),
    "index.interval.bytes": (0, 2**31 - 1),
    "max.message.bytes": (0, 2**31 - 1),
    "retention.ms": (-1, 2**63 - 1),
    "retention.bytes": (-1, 2**63 - 1),
    "flush.messages": (1, 2**63 - 1),
    "flush.ms": (0, 2**63 - 1),
    "segment.index.bytes": (8, 2**31 - 1),
    "min.insync.replicas": (1, 2**31 - 1),
    "compression.lz4.level": (1, 17),
    "compression.zstd.level": (-131072, 22),
    "local.retention.ms": (-2, 2**63 - 1),
    "local.retention.bytes": (-2, 2**63 - 1),
    "max.decompressed.message.bytes": (1, 2147483639),
}

_THROTTLED_REPLICAS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")
_NO_TIERED_STORAGE = (
    "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage."
)

_ENUMS = {
    "message.timestamp.type": {"CreateTime", "LogAppendTime"},
    "compression.type": {"producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"},
    "confluent.key.subject.name.strategy": SUBJECT_NAME_STRATEGIES,
    "confluent.value.subject.name.strategy": SUBJECT_NAME_STRATEGIES,
}


# Kafka's ValidString messages, its values in its order
_ENUM_MESSAGES = {
    "message.timestamp.type": "String must be one of: CreateTime, LogAppendTime",
    "compression.type": "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer",
}


def _invalid(name: str, value: str, config_type: ConfigType) -> str | None:
    """Why Kafka's ConfigDef refuses `value` for the topic config `name` (its message after "Invalid value V
    for configuration N", empty where trafka has none of Kafka's words), or None when it is valid."""
    if name in _ENUMS:
        if value in _ENUMS[name]:
            return None
        return _ENUM_MESSAGES.get(name, "")
    if name == "compression.gzip.level":
        try:
            level = int(value.strip())
        except ValueError:
            return "Not a number of type INT"
        return None if level == -1 or 1 <= level <= 9 else "Value must be between 1 and 9 or equal to -1"
    if name in _THROTTLED_REPLICAS:  # Kafka's ThrottledReplicaListValidator
        items = _kafka_list(value)
        if "".join(items) == "*" or all(re.fullmatch(r"([0-9]+:[0-9]+)?", item) for item in items):
            return None
        return (
            f"{name} must be the literal '*' or a list of replicas in the following format: "
            "[partitionId]:[brokerId],[partitionId]:[brokerId],..."
        )
    if name == "cleanup.policy":
        parts = [p.strip() for p in value.split(",")]
        return (
            None
            if parts and all(p in ("delete", "compact") for p in parts)
            else "String must be one of: compact, delete"
        )
    if config_type in (ConfigType.INT, ConfigType.LONG, ConfigType.SHORT):
        try:
            number = int(value.strip())
        except ValueError:
            return f"Not a number of type {config_type.name}"
        low, high = _RANGES.get(name, (-(2**63), 2**63 - 1))
        if number < low:
            return f"Value must be at least {low}"
        return None if number <= high else f"Value must be no more than {high}"
    if config_type is ConfigType.DOUBLE:
        try:
            float(value)
        except ValueError:
            return f"Not a number of type {config_type.name}"
        return None
    if config_type is ConfigType.BOOLEAN:
        return None if value.strip().lower() in ("true", "false") else "Expected value to be either true or false"
    return None


def _kafka_list(value: str) -> list[str]:
    """ConfigDef's parse of a LIST: trimmed, split on commas with the spaces around them."""
    trimmed = value.strip()
    return re.split(r"\s*,\s*", trimmed) if trimmed else []


def _shown(name: str, value: str) -> str:
    """The value as ConfigDef's message shows it: a throttled-replicas list as the parsed list."""
    return f"[{', '.join(_kafka_list(value))}]" if name in _THROTTLED_REPLICAS else value


def valid_config_value(topic_config: str, value: str) -> bool:
    """Whether `value` is one Kafka accepts for the topic config (or its broker synonym)."""
    return _invalid(topic_config, value, _config_type(topic_config)) is None


def _config_type(name: str) -> ConfigType:
    internal = INTERNAL_TOPIC_CONFIGS.get(name)
    return internal if internal is not None else TOPIC_CONFIG_DEFAULTS[name][1]


def is_topic_config(name: str) -> bool:
    """A topic config name Kafka's LogConfig knows (validateNames): a public one or an internal one."""
    return name in TOPIC_CONFIG_DEFAULTS or name in INTERNAL_TOPIC_CONFIGS


# The order Kafka's LogConfig defines its topic configs, which is the order ConfigDef.parse checks the
# values in: of several invalid values, Kafka names the first in this order.
_KAFKA_CHECK_ORDER = {
    name: i
    for i, name in enumerate(
        (
            "segment.bytes segment.ms segment.jitter.ms segment.index.bytes flush.messages flush.ms "
            "retention.bytes retention.ms max.message.bytes index.interval.bytes delete.retention.ms "
            "min.compaction.lag.ms max.compaction.lag.ms file.delete.delay.ms min.cleanable.dirty.ratio "
            "cleanup.policy unclean.leader.election.enable min.insync.replicas compression.type "
            "compression.gzip.level compression.lz4.level compression.zstd.level preallocate "
            "message.format.version message.timestamp.type message.timestamp.difference.max.ms "
            "message.timestamp.before.max.ms message.timestamp.after.max.ms "
            "leader.replication.throttled.replicas follower.replication.throttled.replicas "
            "message.downconversion.enable remote.storage.enable local.retention.ms local.retention.bytes "
            "remote.log.copy.disable remote.log.delete.on.disable"
        ).split()
    )
}


def validate_topic_configs(
    configs: Mapping[str, str | None], merged: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Check names, then values, against Kafka's topic configs (LogConfig.validate: validateNames, then
    ConfigDef.parse in definition order); return the non-null ones."""
    for name in configs:
        if not is_topic_config(name):
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown topic config name: {name}")
    out: dict[str, str] = {}
    for name in sorted(configs, key=lambda n: _KAFKA_CHECK_ORDER.get(n, len(_KAFKA_CHECK_ORDER))):
        value = configs[name]
        if value is None:
            continue
        reason = _invalid(name, value, _config_type(name))
        if reason is not None:
            message = f"Invalid value {_shown(name, value)} for configuration {name}"
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"{message}: {reason}" if reason else message)
        out[name] = value
    # LogConfig.validateTopicLogConfigValues, once every value parses (Kafka's words): validateValues, then
    # the remote storage checks
    whole = {**out, **(merged or {})}  # an alter's: the topic's configs once altered
    lags = ("min.compaction.lag.ms", "max.compaction.lag.ms")
    min_lag, max_lag = (int(whole.get(n, TOPIC_CONFIG_DEFAULTS[n][0])) for n in lags)
    if min_lag > max_lag:
        raise KafkaError(
            ErrorCode.INVALID_CONFIG,
            f"conflict topic config setting min.compaction.lag.ms ({min_lag}) > max.compaction.lag.ms ({max_lag})",
        )
    if out.get("remote.storage.enable", "false").strip().lower() == "true":
        raise KafkaError(ErrorCode.INVALID_CONFIG, _NO_TIERED_STORAGE)
    return out
