"""A streams group's topology description (KIP-1331, Kafka 4.4): what Kafka Streams' `Topology#describe()`
says, pushed by a member with StreamsGroupTopologyDescriptionUpdate when the heartbeat asks for it, kept
by the broker per group and topology epoch, and returned by StreamsGroupDescribe v1 on request.

Kafka hands the description to a broker-side plugin (`group.streams.topology.description.plugin.class`);
without one the broker neither asks for nor keeps descriptions. trafka's store is Kafka's reference
`InMemoryTopologyDescriptionPlugin`: one description per group, served only for the epoch it was pushed
at, gone when the group is deleted or the broker stops.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

import attrs

from ...errors import ErrorCode, KafkaError

# Kafka's plugin class that trafka's in-memory store stands for (the only value the setting takes)
IN_MEMORY_PLUGIN = "org.apache.kafka.server.streams.InMemoryTopologyDescriptionPlugin"


class NodeType(enum.IntEnum):
    SOURCE = 1
    PROCESSOR = 2
    SINK = 3


class DescriptionStatus(enum.IntEnum):
    """StreamsGroupDescribe v1's TopologyDescriptionStatus."""

    NOT_REQUESTED = 0
    NOT_STORED = 1
    ERROR = 2
    AVAILABLE = 3


@attrs.frozen
class Node:
    """A node as Kafka's StreamsGroupTopologyDescription keeps it: a source has its topics, a processor
    its stores, a sink its topic; what the wire carries for another kind of node is dropped, and
    repeated names are kept once, in order (Kafka's converter builds Source, Processor and Sink nodes
    over LinkedHashSets)."""

    name: str
    node_type: int
    source_topics: tuple[str, ...] = ()
    sink_topic: str | None = None
    stores: tuple[str, ...] = ()
    successors: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        name: str,
        node_type: int,
        source_topics: Iterable[str],
        sink_topic: str | None,
        stores: Iterable[str],
        successors: Iterable[str],
    ) -> Node:
        after = _once(successors)
        if node_type == NodeType.SOURCE:
            return cls(name, node_type, source_topics=_once(source_topics), successors=after)
        if node_type == NodeType.PROCESSOR:
            return cls(name, node_type, stores=_once(stores), successors=after)
        if node_type == NodeType.SINK:
            return cls(name, node_type, sink_topic=sink_topic, successors=after)
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown node type {node_type} for node {name}.")


def _once(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


@attrs.frozen
class DescribedSubtopology:
    subtopology_id: str
    nodes: tuple[Node, ...]


@attrs.frozen
class GlobalStore:
    source: Node
    processor: Node

    def __attrs_post_init__(self) -> None:
        if self.source.node_type != NodeType.SOURCE or self.processor.node_type != NodeType.PROCESSOR:
            raise KafkaError(
                ErrorCode.INVALID_REQUEST, "Global store must be composed of a source and a processor node."
            )


@attrs.frozen
class TopologyDescription:
    subtopologies: tuple[DescribedSubtopology, ...]
    global_stores: tuple[GlobalStore, ...] = ()
