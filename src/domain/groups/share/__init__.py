"""Share groups (KIP-932, queues for Kafka): membership on the modern group shape, the share-partition
state machine, share sessions."""

from .coordinator import ShareGroupCoordinator, ShareGroupSettings, ShareHeartbeat
from .fetched_records import PartitionFetch
from .partition import AckType, Acquired, Archived, RecordState, Run, SharePartition, ShareSettings
from .service import SHARE_GROUP_CONFIGS, ShareGroups
from .sessions import ShareSession

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
