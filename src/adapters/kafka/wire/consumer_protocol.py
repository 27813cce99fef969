"""The ConsumerProtocol bytes classic consumers embed in JoinGroup and SyncGroup, for the domain's
online migration between the group protocols (`EmbeddedProtocol`, ADR 50): Kafka's
ConsumerProtocolSubscription and ConsumerProtocolAssignment schemas (versions 0-3), after their int16 version, as Kafka's
ConsumerProtocol reads them: a version above 3 is read as 3, a negative one or short bytes are
malformed (ValueError)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trafka.domain.groups.modern.migration import ClassicSubscription
from trafka.schema_codec.messages import ConsumerProtocolAssignment, ConsumerProtocolSubscription

HIGHEST_VERSION = 3


def _version(data: bytes) -> int:
    if len(data) < 2:
        raise ValueError("the ConsumerProtocol header is missing")
    version = int.from_bytes(data[:2], "big", signed=True)
    if version < 0:
        raise ValueError(f"unsupported ConsumerProtocol version {version}")
    return min(version, HIGHEST_VERSION)


def _decode(cls: Any, data: bytes) -> Any:
    version = _version(data)
    try:
        return cls.decode(data[2:], version, exact=False)  # bytes after the struct are ignored, as Kafka does
    except Exception as exc:  # short or bad bytes
        raise ValueError(f"malformed {cls.__name__}: {exc}") from None


class KafkaPythonConsumerProtocol:
    """`EmbeddedProtocol` with the ConsumerProtocol schemas' classes."""

    def subscription(self, metadata: bytes) -> ClassicSubscription:
        decoded = _decode(ConsumerProtocolSubscription, metadata)
        owned: dict[str, frozenset[int]] = {}
        for tp in getattr(decoded, "owned_partitions", None) or ():
            owned[tp.topic] = owned.get(tp.topic, frozenset()) | frozenset(tp.partitions)
        return ClassicSubscription(tuple(decoded.topics or ()), owned, getattr(decoded, "rack_id", None))

    def assignment(self, data: bytes) -> dict[str, frozenset[int]]:
        decoded = _decode(ConsumerProtocolAssignment, data)
        assigned: dict[str, frozenset[int]] = {}
        for tp in decoded.assigned_partitions or ():
            assigned[tp.topic] = assigned.get(tp.topic, frozenset()) | frozenset(tp.partitions)
        return assigned

    def encode_assignment(self, partitions: Mapping[str, frozenset[int]], subscription: bytes) -> bytes:
        try:
            version = _version(subscription)
        except ValueError:
            version = 0
        cls = ConsumerProtocolAssignment
        assignment = cls(
            version=version,
            assigned_partitions=[
                cls.TopicPartition(version=version, topic=topic, partitions=sorted(ps))
                for topic, ps in sorted(partitions.items())
                if ps
            ],
            user_data=None,
        )
        return version.to_bytes(2, "big") + assignment.encode(version)
