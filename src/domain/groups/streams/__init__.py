"""Streams groups (KIP-1071): the group Kafka Streams applications join with `group.protocol=streams`."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


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
