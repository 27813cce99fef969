"""Kafka config values parsed with Kafka's types and bounds: each parser takes the key and its text and
gives the value, or a `KafkaConfigError` naming the key and the value."""

from __future__ import annotations

from collections.abc import Callable

_INT_MAX = 2**31 - 1
_LONG_MAX = 2**63 - 1


class KafkaConfigError(ValueError):
    """A Kafka config that cannot be used; the message names the key (and the value)."""


def kafka_integer(low: int, high: int) -> Callable[[str, str], int]:
    def parse(key: str, value: str) -> int:
        try:
            number = int(value.strip())
        except ValueError:
            raise KafkaConfigError(f"invalid value {value!r} for {key}: not a number") from None
        if not low <= number <= high:
            raise KafkaConfigError(
                f"invalid value {value!r} for {key}: must be at least {low}"
                + (f" and at most {high}" if high not in (_INT_MAX, _LONG_MAX) else "")
            )
        return number

    return parse


def kafka_boolean(key: str, value: str) -> bool:
    lowered = value.strip().lower()
    if lowered not in ("true", "false"):
        raise KafkaConfigError(f"invalid value {value!r} for {key}: expected true or false")
    return lowered == "true"


def kafka_text(key: str, value: str) -> str:
    return value


def kafka_int(low: int = -_INT_MAX - 1) -> Callable[[str, str], int]:
    return kafka_integer(low, _INT_MAX)


def config_def_int(low: int) -> Callable[[str, str], int]:
    """An INT key refused with Kafka's own words (ConfigDef's ConfigException), for the keys whose
    message a test compares with Kafka's: `Invalid value V for configuration K: ...`."""

    def parse(key: str, value: str) -> int:
        try:
            number = int(value.strip())
        except ValueError:
            number = _INT_MAX + 1
        if not -_INT_MAX - 1 <= number <= _INT_MAX:  # Integer.parseInt's refusal, as a number too large
            raise KafkaConfigError(f"Invalid value {value} for configuration {key}: Not a number of type INT")
        if number < low:
            raise KafkaConfigError(f"Invalid value {value} for configuration {key}: Value must be at least {low}")
        return number

    return parse


def kafka_long(low: int = -_LONG_MAX - 1) -> Callable[[str, str], int]:
    return kafka_integer(low, _LONG_MAX)


def kafka_double(low: float) -> Callable[[str, str], float]:
    def parse(key: str, value: str) -> float:
        try:
            number = float(value)
        except ValueError:
            raise KafkaConfigError(f"invalid value {value!r} for {key}: expected a number") from None
        if number < low:
            raise KafkaConfigError(f"invalid value {value!r} for {key}: must be at least {low}")
        return number

    return parse
