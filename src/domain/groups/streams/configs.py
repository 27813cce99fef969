"""A streams group's configs on the GROUP config resource (DescribeConfigs, IncrementalAlterConfigs,
resource type 32): Kafka 4.2's GroupConfig keys for streams groups, validated as its
`GroupConfig.validate` does against the broker's `group.streams.*` bounds, and the values each group
gets (its override, else the broker's setting). The coordinator holds one and asks it for a group's
session timeout, heartbeat interval, standby replicas and initial rebalance delay; the values are made
durable by the adapter's config store (ADR 59), as the consumer groups' are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ...configs import ConfigEntry, ConfigSource, ConfigType
from ...errors import ErrorCode, KafkaError
from .model import StreamsGroupSettings

SESSION_TIMEOUT = "streams.session.timeout.ms"
HEARTBEAT_INTERVAL = "streams.heartbeat.interval.ms"
NUM_STANDBY_REPLICAS = "streams.num.standby.replicas"
INITIAL_REBALANCE_DELAY = "streams.initial.rebalance.delay.ms"
KEYS = (SESSION_TIMEOUT, HEARTBEAT_INTERVAL, NUM_STANDBY_REPLICAS, INITIAL_REBALANCE_DELAY)
_AT_LEAST = {SESSION_TIMEOUT: 1, HEARTBEAT_INTERVAL: 1, NUM_STANDBY_REPLICAS: 0, INITIAL_REBALANCE_DELAY: 0}


def is_streams_key(name: str) -> bool:
    return name.startswith("streams.")


class StreamsGroupConfigs:
    def __init__(self, settings: StreamsGroupSettings) -> None:
        self.settings = settings
        self.overrides: dict[str, dict[str, int]] = {}  # group id -> its overrides

    def _defaults(self) -> dict[str, int]:
        s = self.settings
        return {
            SESSION_TIMEOUT: s.session_timeout_ms,
            HEARTBEAT_INTERVAL: s.heartbeat_interval_ms,
            NUM_STANDBY_REPLICAS: s.num_standby_replicas,
            INITIAL_REBALANCE_DELAY: s.initial_rebalance_delay_ms,
        }

    def describe(self, group_id: str, keys: Iterable[str] | None) -> list[ConfigEntry]:
        overrides = self.overrides.get(group_id, {})
        wanted = None if keys is None else set(keys)
        entries = []
        for name, default in sorted(self._defaults().items()):
            if wanted is not None and name not in wanted:
                continue
            if name in overrides:
                entries.append(ConfigEntry(name, str(overrides[name]), ConfigSource.GROUP_CONFIG, ConfigType.INT))
            else:
                entries.append(ConfigEntry(name, str(default), ConfigSource.DEFAULT_CONFIG, ConfigType.INT))
        return entries

    def alter(self, group_id: str, changes: Mapping[str, tuple[int, str | None]], validate_only: bool) -> None:
        """SET (0) or DELETE (1) a group's streams configs; INVALID_CONFIG with Kafka's words otherwise."""
        configs = dict(self.overrides.get(group_id, {}))
        for name, (op, value) in changes.items():
            if name not in _AT_LEAST:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown group config name: {name}")
            if op == 1:
                configs.pop(name, None)
                continue
            if op != 0:
                raise KafkaError(
                    ErrorCode.INVALID_CONFIG, f"Config {name} is not a list: it can only be set or deleted"
                )
            configs[name] = _parse(name, value)
        self._validate(configs)
        if not validate_only:
            if configs:
                self.overrides[group_id] = configs
            else:
                self.overrides.pop(group_id, None)

    def _validate(self, configs: Mapping[str, int]) -> None:
        """Kafka's GroupConfig.validate for the streams keys, in its order, with its messages."""
        s = self.settings
        merged = {**self._defaults(), **configs}
        heartbeat, session = merged[HEARTBEAT_INTERVAL], merged[SESSION_TIMEOUT]
        checks = (
            (heartbeat < s.min_heartbeat_interval_ms, f"{HEARTBEAT_INTERVAL} must be greater than or equal to group.streams.min.heartbeat.interval.ms"),
            (heartbeat > s.max_heartbeat_interval_ms, f"{HEARTBEAT_INTERVAL} must be less than or equal to group.streams.max.heartbeat.interval.ms"),
            (session < s.min_session_timeout_ms, f"{SESSION_TIMEOUT} must be greater than or equal to group.streams.min.session.timeout.ms"),
            (session > s.max_session_timeout_ms, f"{SESSION_TIMEOUT} must be less than or equal to group.streams.max.session.timeout.ms"),
            (
                merged[NUM_STANDBY_REPLICAS] > s.max_standby_replicas,
                f"{NUM_STANDBY_REPLICAS} must be less than or equal to group.streams.max.standby.replicas",
            ),
            (session <= heartbeat, f"{SESSION_TIMEOUT} must be greater than {HEARTBEAT_INTERVAL}"),
        )  # fmt: skip
        for failed, message in checks:
            if failed:
                raise KafkaError(ErrorCode.INVALID_CONFIG, message)

    def value(self, group_id: str, name: str) -> int:
        override = self.overrides.get(group_id, {}).get(name)
        return self._defaults()[name] if override is None else override

    def session_timeout_ms(self, group_id: str) -> int:
        return self.value(group_id, SESSION_TIMEOUT)

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self.value(group_id, HEARTBEAT_INTERVAL)

    def num_standby_replicas(self, group_id: str) -> int:
        return self.value(group_id, NUM_STANDBY_REPLICAS)

    def initial_rebalance_delay_ms(self, group_id: str) -> int:
        return self.value(group_id, INITIAL_REBALANCE_DELAY)


def _parse(name: str, value: str | None) -> int:
    """Kafka's ConfigDef for the key: an INT, at least its minimum."""
    try:
        number = int((value or "").strip())
    except ValueError:
        raise KafkaError(
            ErrorCode.INVALID_CONFIG, f"Invalid value {value} for configuration {name}: Not a number of type INT"
        ) from None
    if not -(2**31) <= number < 2**31:
        raise KafkaError(
            ErrorCode.INVALID_CONFIG, f"Invalid value {value} for configuration {name}: Not a number of type INT"
        )
    low = _AT_LEAST[name]
    if number < low:
        raise KafkaError(
            ErrorCode.INVALID_CONFIG, f"Invalid value {number} for configuration {name}: Value must be at least {low}"
        )
    return number
