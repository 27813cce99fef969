"""Streams groups (KIP-1071): the group Kafka Streams applications join with `group.protocol=streams`."""

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
