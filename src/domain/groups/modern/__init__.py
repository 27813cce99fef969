"""Modern group protocols (KIP-848 consumer groups; share groups build on the same shape)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .assignors import ASSIGNORS, AssignmentMember, assignor_names
    from .consumer import (
        ConsumerGroupCoordinator,
        ConsumerGroupSettings,
        ConsumerHeartbeat,
        HeartbeatAnswer,
        TopicLookup,
    )
    from .model import (
        LEAVE_GROUP_MEMBER_EPOCH,
        LEAVE_GROUP_STATIC_MEMBER_EPOCH,
        ConsumerGroup,
        ConsumerMember,
        ModernGroupState,
    )
    from .reconciliation import MemberState

# Each name's module, imported on first use (ADR 118): the records a store keeps load without the
# coordinator, which a broker builds at its first consumer group use.
_EXPORTS = {
    "ASSIGNORS": "assignors",
    "AssignmentMember": "assignors",
    "assignor_names": "assignors",
    "ConsumerGroupCoordinator": "consumer",
    "ConsumerGroupSettings": "consumer",
    "ConsumerHeartbeat": "consumer",
    "HeartbeatAnswer": "consumer",
    "TopicLookup": "consumer",
    "LEAVE_GROUP_MEMBER_EPOCH": "model",
    "LEAVE_GROUP_STATIC_MEMBER_EPOCH": "model",
    "ConsumerGroup": "model",
    "ConsumerMember": "model",
    "ModernGroupState": "model",
    "MemberState": "reconciliation",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "ASSIGNORS",
    "LEAVE_GROUP_MEMBER_EPOCH",
    "LEAVE_GROUP_STATIC_MEMBER_EPOCH",
    "AssignmentMember",
    "ConsumerGroup",
    "ConsumerGroupCoordinator",
    "ConsumerGroupSettings",
    "ConsumerHeartbeat",
    "ConsumerMember",
    "HeartbeatAnswer",
    "MemberState",
    "ModernGroupState",
    "TopicLookup",
    "assignor_names",
]
