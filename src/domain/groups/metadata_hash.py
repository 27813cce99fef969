"""A group's metadata hash (KIP-1101), as Kafka 4.1+ writes it beside the group epoch in the consumer,
share and streams groups' metadata records: a hash of the subscribed topics' ids, names, partition
counts and partition racks, which Kafka compares on load and at each heartbeat to tell whether the
group needs a new epoch. A data dir trafka wrote is read by Kafka without that extra epoch (one
rebalance per group) only when the hash is Kafka's.

Kafka (`coordinator.group.Utils`) hashes with XXH3-64 (seed 0) over hash4j's stream of:
- a topic: the byte 0, the topic id's most and least significant longs, the name, the partition
  count, then for each partition its number and its racks sorted, each as its length then itself;
- a group: its existing topics' hashes, in name order; 0 when it has none.
hash4j writes ints and longs little-endian and a string as its UTF-16 code units (little-endian)
followed by its length in code units as an int. This module lays those bytes out; the XXH3-64 function
itself is a port (`Hash64`): the composition root passes a library's.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable, Mapping, Sequence

Hash64 = Callable[[bytes], int]  # XXH3-64 with seed 0 over bytes, unsigned


def _string(text: str) -> bytes:
    units = text.encode("utf-16-le")
    return units + struct.pack("<i", len(units) // 2)


def topic_hash_input(
    name: str, topic_id: uuid.UUID, partitions: int, racks: Callable[[int], Sequence[str]] = lambda _: ()
) -> bytes:
    """The bytes Kafka's computeTopicHash streams for a topic."""
    id_bits = topic_id.int
    parts = [struct.pack("<bqq", 0, _signed(id_bits >> 64), _signed(id_bits & (2**64 - 1))), _string(name)]
    parts.append(struct.pack("<i", partitions))
    for partition in range(partitions):
        parts.append(struct.pack("<i", partition))
        for rack in sorted(racks(partition), key=lambda r: r.encode("utf-16-be")):  # Java's String order
            parts.append(struct.pack("<i", len(rack.encode("utf-16-le")) // 2))
            parts.append(_string(rack))
    return b"".join(parts)


def group_hash_input(topic_hashes: Mapping[str, int]) -> bytes:
    """The bytes Kafka's computeGroupHash streams: the topics' hashes in name order (Java's)."""
    ordered = sorted(topic_hashes.items(), key=lambda item: item[0].encode("utf-16-be"))
    return struct.pack(f"<{len(ordered)}q", *(h for _, h in ordered))


def _signed(value: int) -> int:
    return value - 2**64 if value >= 2**63 else value


def topic_hash(
    hash64: Hash64, name: str, topic_id: uuid.UUID, partitions: int, racks: Sequence[Sequence[str]] = ()
) -> int:
    """A topic's hash, signed as Kafka's long; `racks[p]`: partition p's racks (none past the list)."""
    return _signed(hash64(topic_hash_input(name, topic_id, partitions, lambda p: racks[p] if p < len(racks) else ())))


def group_hash(hash64: Hash64, topic_hashes: Mapping[str, int]) -> int:
    """A group's hash from its existing topics' hashes by name, signed; 0 for none (as Kafka)."""
    return _signed(hash64(group_hash_input(topic_hashes))) if topic_hashes else 0


class MetadataHasher:
    """Group hashes from the subscribed topics' (id, partition count) by name, with each topic's hash
    kept while its id and count stay the same (as Kafka's topic hash cache). `hash64` None: no hash is
    computed and every group's is 0 (for coordinators built without one, in tests)."""

    def __init__(self, hash64: Hash64 | None = None) -> None:
        self._hash64 = hash64
        self._topics: dict[tuple[str, str, int], int] = {}

    def group_hash(self, topics: Mapping[str, tuple[str, int]]) -> int:
        """The hash of a group subscribed to `topics` (name -> (topic id, partition count)), signed."""
        if self._hash64 is None or not topics:
            return 0
        return group_hash(self._hash64, {name: self._topic_hash(name, *topic) for name, topic in topics.items()})

    def _topic_hash(self, name: str, topic_id: str, partitions: int) -> int:
        key = (name, topic_id, partitions)
        cached = self._topics.get(key)
        if cached is None:
            assert self._hash64 is not None
            if len(self._topics) > 10_000:  # bounded: topics deleted or grown leave their old keys
                self._topics.clear()
            cached = topic_hash(self._hash64, name, uuid.UUID(topic_id), partitions)
            self._topics[key] = cached
        return cached
