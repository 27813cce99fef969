"""Topics and partitions, named the way Kafka names them.

A topic name is what Kafka's `Topic.validate` allows: 1-249 characters of `[a-zA-Z0-9._-]`, and not
`.` or `..`. Topic ids are random UUIDs chosen by the caller (the domain does not read entropy).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from typing import NamedTuple

import attrs

from .errors import ErrorCode, KafkaError

MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_NAME = re.compile(r"[a-zA-Z0-9._-]+")
ZERO_UUID = uuid.UUID(int=0)
_RESERVED = (ZERO_UUID, uuid.UUID(int=1))  # Kafka's ZERO_UUID and METADATA_TOPIC_ID


def kafka_random_uuid(draw: Callable[[], uuid.UUID]) -> uuid.UUID:
    """A UUID from `draw` as Kafka's `Uuid.randomUuid` picks one: not reserved, and its text form (URL-safe
    base64) not starting with `-`, which Kafka's tools would read as an option (`kafka-storage format
    --cluster-id -x...`). Draws again when it would (one draw in 64)."""
    while True:
        value = draw()
        if value not in _RESERVED and value.bytes[0] >> 2 != 62:  # 62 is '-' in the URL-safe alphabet
            return value


def _invalid_topic_name(name: str | None) -> str | None:
    """Why Kafka's `Topic.validate` refuses `name`, in its words, or None."""
    if not name:
        return "the empty string is not allowed"
    if name in (".", ".."):
        return f"'{name}' is not allowed"
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        return f"the length of '{name}' is longer than the max allowed length {MAX_TOPIC_NAME_LENGTH}"
    if not _LEGAL_NAME.fullmatch(name):
        return f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    return None


def validate_topic_name(name: str | None) -> str:
    """Return `name` if Kafka would accept it as a topic name, else raise INVALID_TOPIC_EXCEPTION."""
    reason = _invalid_topic_name(name)
    if reason is not None or name is None:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic name is invalid: {reason}")
    return name


INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__cluster_metadata"})


def is_internal_topic(name: str) -> bool:
    return name in INTERNAL_TOPICS


class TopicPartition(NamedTuple):
    """A topic's partition. A named tuple rather than an attrs class: the produce and fetch paths
    build one per partition per request and use it as a dict key several times, and a tuple's hash
    and equality are the interpreter's own (ordered by topic, then partition)."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@attrs.frozen
class Topic:
    """A topic as the catalog knows it: its id, partition count and the configs set on it."""

    name: str
    topic_id: uuid.UUID
    partition_count: int
    configs: Mapping[str, str] = attrs.field(factory=dict)

    @property
    def partitions(self) -> range:
        return range(self.partition_count)

    def topic_partitions(self) -> list[TopicPartition]:
        return [TopicPartition(self.name, p) for p in self.partitions]

    @property
    def is_internal(self) -> bool:
        return is_internal_topic(self.name)

    def with_partition_count(self, count: int) -> Topic:
        return attrs.evolve(self, partition_count=count)
