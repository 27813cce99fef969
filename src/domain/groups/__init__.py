"""Consumer groups: the classic group coordinator state machine and committed offsets."""

from .coordinator import GroupCoordinator, GroupSettings
from .group_metadata import CommittedOffset
from .model import Completion, JoinRequest, JoinResult, Protocol, SyncRequest, SyncResult
from .offsets import CommitRequest, OffsetManager
from .state import GroupEvent, GroupState, IllegalTransition

__all__ = [
    "CommitRequest",
    "CommittedOffset",
    "Completion",
    "GroupCoordinator",
    "GroupEvent",
    "GroupSettings",
    "GroupState",
    "IllegalTransition",
    "JoinRequest",
    "JoinResult",
    "OffsetManager",
    "Protocol",
    "SyncRequest",
    "SyncResult",
]
