"""A consumer group's configs: the GROUP config resource (DescribeConfigs, IncrementalAlterConfigs,
resource type 32), validated as Kafka's GroupConfig, and the session timeout and heartbeat interval
each group gets (its override, else the broker's `group.consumer.*`). The coordinator holds one and
asks it; the values are durable through the adapter's config store (ADR 59), not here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ...configs import ConfigEntry, ConfigSource, ConfigType
from ...errors import ErrorCode, KafkaError
from .settings import ConsumerGroupSettings

SESSION_TIMEOUT_CONFIG = "consumer.session.timeout.ms"
HEARTBEAT_INTERVAL_CONFIG = "consumer.heartbeat.interval.ms"


class ConsumerGroupConfigs:
    def __init__(self, settings: ConsumerGroupSettings) -> None:
        self.settings = settings
        self.overrides: dict[str, dict[str, int]] = {}  # group id -> its overrides

    def _bounds(self) -> dict[str, tuple[int, int, int]]:
        """name -> (broker default, min, max), Kafka's GroupConfig for consumer groups."""
        s = self.settings
        return {
            SESSION_TIMEOUT_CONFIG: (s.session_timeout_ms, s.min_session_timeout_ms, s.max_session_timeout_ms),
            HEARTBEAT_INTERVAL_CONFIG: (
                s.heartbeat_interval_ms,
                s.min_heartbeat_interval_ms,
                s.max_heartbeat_interval_ms,
            ),
        }

    def describe(self, group_id: str, keys: Iterable[str] | None) -> list[ConfigEntry]:
        overrides = self.overrides.get(group_id, {})
        entries = []
        for name, (default, _, _) in sorted(self._bounds().items()):
            if keys is not None and name not in keys:
                continue
            if name in overrides:
                entries.append(ConfigEntry(name, str(overrides[name]), ConfigSource.GROUP_CONFIG, ConfigType.INT))
            else:
                entries.append(ConfigEntry(name, str(default), ConfigSource.DEFAULT_CONFIG, ConfigType.INT))
        return entries

    def alter(self, group_id: str, changes: Mapping[str, tuple[int, str | None]], validate_only: bool) -> None:
        """SET (0) or DELETE (1) a group's consumer configs; INVALID_CONFIG as Kafka's GroupConfig.validate."""
        bounds = self._bounds()
        configs = dict(self.overrides.get(group_id, {}))
        for name, (op, value) in changes.items():
            if name not in bounds:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown group config name: {name}")
            if op == 1:
                configs.pop(name, None)
                continue
            if op != 0:
                raise KafkaError(
                    ErrorCode.INVALID_CONFIG, f"Config {name} is not a list: it can only be set or deleted"
                )
            try:
                number = int(value or "")
            except ValueError:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Invalid value {value} for configuration {name}") from None
            _, low, high = bounds[name]
            if not low <= number <= high:
                raise KafkaError(
                    ErrorCode.INVALID_CONFIG,
                    f"Invalid value {number} for configuration {name}: it must be between {low} and {high}.",
                )
            configs[name] = number
        session = configs.get(SESSION_TIMEOUT_CONFIG, self.settings.session_timeout_ms)
        interval = configs.get(HEARTBEAT_INTERVAL_CONFIG, self.settings.heartbeat_interval_ms)
        if interval >= session:
            raise KafkaError(
                ErrorCode.INVALID_CONFIG,
                f"{HEARTBEAT_INTERVAL_CONFIG} must be less than {SESSION_TIMEOUT_CONFIG}",
            )
        if not validate_only:
            if configs:
                self.overrides[group_id] = configs
            else:
                self.overrides.pop(group_id, None)

    def session_timeout_ms(self, group_id: str) -> int:
        return self.overrides.get(group_id, {}).get(SESSION_TIMEOUT_CONFIG, self.settings.session_timeout_ms)

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self.overrides.get(group_id, {}).get(HEARTBEAT_INTERVAL_CONFIG, self.settings.heartbeat_interval_ms)
