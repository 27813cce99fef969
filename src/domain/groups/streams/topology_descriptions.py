"""A streams group's topology descriptions as the coordinator keeps them (KIP-1331, Kafka 4.4): when a
heartbeat asks a member to push one, what a push must match, and what StreamsGroupDescribe v1 returns.
The description itself is `description.py`'s."""

from __future__ import annotations

from collections.abc import Callable

from ...errors import ErrorCode, KafkaError
from .description import DescriptionStatus, TopologyDescription
from .model import StreamsGroup
from .topology import Status, StreamsStatus

DESCRIPTION_BACKOFF_MS = 30_000  # Kafka 4.4's StreamsGroupTopologyDescriptionBackoff
DESCRIPTION_MAX_BACKOFF_MS = 3_600_000


def asks_for_description(group: StreamsGroup, statuses: list[Status], now: int) -> bool:
    """Kafka 4.4's maybeSetTopologyDescriptionRequired: a heartbeat asks for a push while the broker
    keeps no description of the group's current topology epoch, unless the member itself is behind
    that topology; then not again for that epoch until a back-off has passed (Kafka's
    StreamsGroupTopologyDescriptionBackoff: 30 s, doubling to an hour; its 20 % jitter left out, as
    the domain takes no randomness), so one member of many pushes. Only with a description plugin."""
    if group.topology is None:
        return False
    epoch = group.topology.epoch
    if group.description_epoch == epoch or any(s.code == StreamsStatus.STALE_TOPOLOGY for s in statuses):
        return False
    asked = group.description_asked
    if asked is not None and asked[0] == epoch and now < asked[2]:
        return False
    attempts = asked[1] if asked is not None and asked[0] == epoch else 0
    backoff = min(DESCRIPTION_BACKOFF_MS * 2**attempts, DESCRIPTION_MAX_BACKOFF_MS)
    group.description_asked = (epoch, attempts + 1, now + backoff)
    return True


def update_description(
    group: StreamsGroup, member_id: str, topology_epoch: int, description: Callable[[], TopologyDescription]
) -> None:
    """StreamsGroupTopologyDescriptionUpdate to an existing group, checked as Kafka 4.4's
    validateStreamsGroupTopologyDescriptionUpdate (its member, the topology epoch), then
    `description()` (the request's, converted: it may refuse it) kept for the group at that epoch."""
    if member_id not in group.members:
        raise KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}.")
    current = group.topology.epoch if group.topology is not None else -1
    if topology_epoch != current:
        raise KafkaError(
            ErrorCode.INVALID_REQUEST,
            f"Topology epoch {topology_epoch} does not match the group's current topology epoch {current}.",
        )
    group.topology_description = description()
    group.description_epoch = topology_epoch
    group.description_asked = None


def stored_description(group: StreamsGroup | None) -> tuple[DescriptionStatus, TopologyDescription | None]:
    """What StreamsGroupDescribe v1 returns when asked: the description of the current topology epoch."""
    if group is None or group.topology is None or group.topology_description is None:
        return DescriptionStatus.NOT_STORED, None
    if group.description_epoch != group.topology.epoch:
        return DescriptionStatus.NOT_STORED, None
    return DescriptionStatus.AVAILABLE, group.topology_description
