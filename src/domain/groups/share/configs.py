"""A share group's own configs (the GROUP config resource, type 32), Kafka's GroupConfig `share.*` keys:
`share.auto.offset.reset` (`latest`, `earliest`, or `by_duration:<ISO-8601 duration>`: the first
record written that long ago), `share.isolation.level`, `share.session.timeout.ms`,
`share.heartbeat.interval.ms` and `share.record.lock.duration.ms` (within the broker's
`group.share.min/max.record.lock.duration.ms`); and KIP-1191's `errors.deadletterqueue.topic.name` (empty: none), the
topic that records archived by REJECT or the delivery count limit are copied to (not one starting with
`__`, as Kafka 4.4's GroupConfig refuses), and `errors.deadletterqueue.copy.record.enable` (false: the
copy carries only the context headers, true: the original key and value too).

`alter` applies IncrementalAlterConfigs' SET and DELETE (APPEND and SUBTRACT are for list configs:
INVALID_CONFIG), validated first, all or nothing; `describe` gives every key with its value and
whether it is the default.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from ...errors import ErrorCode, KafkaError

SET, DELETE = 0, 1
AUTO_OFFSET_RESET = "share.auto.offset.reset"
ISOLATION_LEVEL = "share.isolation.level"
SESSION_TIMEOUT = "share.session.timeout.ms"
HEARTBEAT_INTERVAL = "share.heartbeat.interval.ms"
RECORD_LOCK_DURATION = "share.record.lock.duration.ms"
DEAD_LETTER_TOPIC = "errors.deadletterqueue.topic.name"  # KIP-1191: archived records are copied there
DEAD_LETTER_COPY_RECORD = "errors.deadletterqueue.copy.record.enable"  # KIP-1191: key and value copied too
DEFAULTS = {
    AUTO_OFFSET_RESET: "latest",
    ISOLATION_LEVEL: "read_uncommitted",
    DEAD_LETTER_TOPIC: "",
    DEAD_LETTER_COPY_RECORD: "false",
}
INT_KEYS = (SESSION_TIMEOUT, HEARTBEAT_INTERVAL, RECORD_LOCK_DURATION)
LOCK_BOUNDS = (15_000, 60_000)  # Kafka 4.2's group.share.min/max.record.lock.duration.ms defaults
_DURATION = re.compile(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?")


def duration_ms(text: str) -> int | None:
    """An ISO-8601 duration (PnDTnHnMnS, as Java's Duration.parse) in milliseconds, None if malformed."""
    match = _DURATION.fullmatch(text)
    if match is None or text in ("P", "PT") or text.endswith("T"):
        return None
    days, hours, minutes, seconds = match.groups()
    total = (int(days or 0) * 86400 + int(hours or 0) * 3600 + int(minutes or 0) * 60) * 1000
    return total + int(float(seconds or 0) * 1000)


def start_offset(reset: str, log_start: int, high_watermark: int, written_since: Callable[[int], int | None]) -> int:
    """Where a new share-partition starts by its `share.auto.offset.reset`: the high watermark (`latest`),
    the log start offset (`earliest`), or the first offset written within the duration (`by_duration:`;
    `written_since(ms)`, None if there is none: then the high watermark)."""
    if reset == "earliest":
        return log_start
    if reset.startswith("by_duration:"):
        found = written_since(duration_ms(reset.removeprefix("by_duration:")) or 0)
        return high_watermark if found is None else found
    return high_watermark


def _check(name: str, value: str | None, bounds: Mapping[str, tuple[int, int]]) -> None:
    def invalid(message: str) -> KafkaError:
        return KafkaError(ErrorCode.INVALID_CONFIG, message)

    if value is None:
        raise invalid(f"Null value not supported for group config {name}")
    if name == AUTO_OFFSET_RESET:
        ok = value in ("latest", "earliest") or (
            value.startswith("by_duration:") and duration_ms(value.removeprefix("by_duration:")) is not None
        )
        if not ok:
            raise invalid(
                f"Invalid value {value} for configuration {name}: must be latest, earliest or by_duration:<ISO-8601>"
            )
    elif name == ISOLATION_LEVEL:
        if value not in ("read_committed", "read_uncommitted"):
            raise invalid(
                f"Invalid value {value} for configuration {name}: String must be one of: read_committed, read_uncommitted"
            )
    elif name == DEAD_LETTER_TOPIC:
        if len(value) > 249 or not re.fullmatch(r"[a-zA-Z0-9._-]*", value):
            raise invalid(f"Invalid value {value} for configuration {name}: not a valid topic name")
        if value.startswith("__"):
            raise invalid(f"{name}: DLQ topic name must not start with '__'")
    elif name == DEAD_LETTER_COPY_RECORD:
        if value.strip().lower() not in ("true", "false"):
            raise invalid(f"Invalid value {value} for configuration {name}: Expected value to be either true or false")
    elif name in INT_KEYS:
        try:
            number = int(value)
        except ValueError:
            raise invalid(f"Invalid value {value} for configuration {name}: Not a number of type INT") from None
        if number < 1:
            raise invalid(f"Invalid value {value} for configuration {name}: Value must be at least 1")
        low, high = bounds.get(name, (1, 2**31 - 1))
        # Kafka's GroupConfig.validateValues: each share.* int key within the broker's group.share.min/max.*
        if number < low:
            raise invalid(f"{name} must be greater than or equal to {name.replace('share.', 'group.share.min.', 1)}")
        if number > high:
            raise invalid(f"{name} must be less than or equal to {name.replace('share.', 'group.share.max.', 1)}")
    else:
        raise invalid(f"Unknown group config name: {name}")


def alter(
    current: Mapping[str, str],
    changes: Mapping[str, tuple[int, str | None]],
    bounds: Mapping[str, tuple[int, int]] | None = None,
) -> dict[str, str]:
    """The group's overrides after `changes` (name -> (operation, value)); KafkaError if any is invalid.
    `bounds`: the (min, max) of the int keys, from the broker's group.share.min/max.* (Kafka's GroupConfig);
    share.record.lock.duration.ms defaults to Kafka 4.2's 15-60 s."""
    bounds = {RECORD_LOCK_DURATION: LOCK_BOUNDS, **(bounds or {})}
    result = dict(current)
    for name, (operation, value) in changes.items():
        if operation == SET:
            _check(name, value, bounds)
            assert value is not None
            result[name] = value
        elif operation == DELETE:
            if name not in DEFAULTS and name not in INT_KEYS:
                _check(name, "", bounds)
            result.pop(name, None)
        else:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Config {name} is not a list: APPEND and SUBTRACT do not apply")
    return result


def describe(overrides: Mapping[str, str], broker_ints: Mapping[str, int]) -> list[tuple[str, str, bool]]:
    """(name, value, is default) for every share config of a group."""
    values = {**DEFAULTS, **{k: str(v) for k, v in broker_ints.items()}}
    return [(name, overrides.get(name, value), name not in overrides) for name, value in sorted(values.items())]
