"""Share groups (KIP-932, queues for Kafka): membership on the modern group shape, the share-partition
state machine, share sessions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .coordinator import ShareGroupCoordinator, ShareGroupSettings, ShareHeartbeat
    from .fetched_records import PartitionFetch
    from .partition import AckType, Acquired, Archived, RecordState, Run, SharePartition, ShareSettings
    from .service import SHARE_GROUP_CONFIGS, ShareGroups
    from .sessions import ShareSession

# Each name's module, imported on first use (ADR 118, as streams groups' in ADR 110): the GROUP config
# keys (`configs`) load without the coordinator, which a broker builds at its first share group use.
_EXPORTS = {
    "SHARE_GROUP_CONFIGS": "service",
    "AckType": "partition",
    "Acquired": "partition",
    "Archived": "partition",
    "PartitionFetch": "fetched_records",
    "RecordState": "partition",
    "Run": "partition",
    "ShareGroupCoordinator": "coordinator",
    "ShareGroupSettings": "coordinator",
    "ShareGroups": "service",
    "ShareHeartbeat": "coordinator",
    "SharePartition": "partition",
    "ShareSession": "sessions",
    "ShareSettings": "partition",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "SHARE_GROUP_CONFIGS",
    "AckType",
    "Acquired",
    "Archived",
    "PartitionFetch",
    "RecordState",
    "Run",
    "ShareGroupCoordinator",
    "ShareGroupSettings",
    "ShareGroups",
    "ShareHeartbeat",
    "SharePartition",
    "ShareSession",
    "ShareSettings",
]
