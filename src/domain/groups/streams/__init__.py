"""Streams groups (KIP-1071): the group Kafka Streams applications join with `group.protocol=streams`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .assignor import MemberSpec, assign
    from .coordinator import StreamsGroupCoordinator
    from .model import (
        Endpoint,
        EndpointPartitions,
        StreamsAnswer,
        StreamsGroup,
        StreamsGroupSettings,
        StreamsGroupState,
        StreamsHeartbeat,
        StreamsMember,
    )
    from .tasks import EMPTY, MemberState, TasksTuple
    from .topology import ConfiguredTopology, Status, StreamsStatus, Subtopology, TopicInfo, Topology, configure

# Each name's module, imported on first use (ADR 110): the records a store keeps, the configs and the
# model load without the coordinator, which a broker builds at its first streams group request.
_EXPORTS = {
    "ConfiguredTopology": "topology",
    "EMPTY": "tasks",
    "Endpoint": "model",
    "EndpointPartitions": "model",
    "MemberSpec": "assignor",
    "MemberState": "tasks",
    "Status": "topology",
    "StreamsAnswer": "model",
    "StreamsGroup": "model",
    "StreamsGroupCoordinator": "coordinator",
    "StreamsGroupSettings": "model",
    "StreamsGroupState": "model",
    "StreamsHeartbeat": "model",
    "StreamsMember": "model",
    "StreamsStatus": "topology",
    "Subtopology": "topology",
    "TasksTuple": "tasks",
    "TopicInfo": "topology",
    "Topology": "topology",
    "assign": "assignor",
    "configure": "topology",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "EMPTY",
    "ConfiguredTopology",
    "Endpoint",
    "EndpointPartitions",
    "MemberSpec",
    "MemberState",
    "Status",
    "StreamsAnswer",
    "StreamsGroup",
    "StreamsGroupCoordinator",
    "StreamsGroupSettings",
    "StreamsGroupState",
    "StreamsHeartbeat",
    "StreamsMember",
    "StreamsStatus",
    "Subtopology",
    "TasksTuple",
    "TopicInfo",
    "Topology",
    "assign",
    "configure",
]
