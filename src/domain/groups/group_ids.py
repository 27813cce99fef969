"""Who owns a group id. Kafka keeps one namespace of group ids for classic, consumer, share and
streams groups: an id one kind holds is refused to the others (a consumer heartbeat for a share group's id
answers as for a classic group's, GROUP_ID_NOT_FOUND). `ClassicOrShareGroupIds` is the KIP-848
coordinator's `ClassicGroups` port over the classic coordinator, answering for share groups too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ErrorCode
from .coordinator import GroupCoordinator
from .model import Completion, Group

if TYPE_CHECKING:
    from .share import ShareGroupCoordinator
    from .streams import StreamsGroupCoordinator


class ClassicOrShareGroupIds:
    """What the KIP-848 coordinator asks of the classic one (which ids are taken), answering for share
    groups too: a consumer heartbeat for a share group's id is refused as for a classic group's."""

    def __init__(self, classic: GroupCoordinator) -> None:
        self.classic = classic
        self.share: ShareGroupCoordinator | None = None  # set once share groups are wired
        self.streams: StreamsGroupCoordinator | None = None  # set once streams groups are wired

    def _is_share(self, group_id: str) -> bool:
        """A share or streams group's id: refused to the consumer coordinator as a classic group's is."""
        return (self.share is not None and group_id in self.share.groups) or (
            self.streams is not None and group_id in self.streams.groups
        )

    def is_classic_group(self, group_id: str) -> bool:
        return self.classic.is_classic_group(group_id) or self._is_share(group_id)

    def is_empty_classic_group(self, group_id: str) -> bool:
        return not self._is_share(group_id) and self.classic.is_empty_classic_group(group_id)

    def delete(self, group_id: str) -> ErrorCode:
        return self.classic.delete(group_id)

    # the online migration between the classic and consumer protocols (ADR 50): classic groups only
    def group(self, group_id: str) -> Group | None:
        return None if self._is_share(group_id) else self.classic.group(group_id)

    def accepts_session_timeout(self, session_timeout_ms: int) -> bool:
        return self.classic.accepts_session_timeout(session_timeout_ms)

    def release(self, group_id: str) -> list[Completion]:
        return self.classic.release(group_id)

    def adopt(self, group: Group, now: int, rebalance: bool) -> list[Completion]:
        return self.classic.adopt(group, now, rebalance)
