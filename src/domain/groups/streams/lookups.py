"""What the streams coordinator asks of the rest of the broker: the topics that exist, and the ids the
other kinds of group hold (one namespace of group ids, as in Kafka)."""

from __future__ import annotations

from typing import Protocol

from ...errors import ErrorCode
from ...topics import Topic


class TopicLookup(Protocol):
    def get(self, name: str) -> Topic | None: ...


class ClassicGroupIds(Protocol):
    """The classic coordinator's group ids (and the share groups' it answers for): one namespace."""

    def is_classic_group(self, group_id: str) -> bool: ...

    def is_empty_classic_group(self, group_id: str) -> bool: ...

    def delete(self, group_id: str) -> ErrorCode: ...


class NoOtherGroups:
    def is_classic_group(self, group_id: str) -> bool:
        return False

    def is_empty_classic_group(self, group_id: str) -> bool:
        return False

    def delete(self, group_id: str) -> ErrorCode:
        return ErrorCode.GROUP_ID_NOT_FOUND
