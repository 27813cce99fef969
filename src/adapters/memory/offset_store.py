"""Committed offsets kept in memory, by group then partition."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from domain.groups.offsets import CommittedOffset
from domain.topics import TopicPartition


class MemoryOffsetStore:
    def __init__(self) -> None:
        self._groups: dict[str, dict[TopicPartition, CommittedOffset]] = {}

    def commit(self, group_id: str, offsets: Mapping[TopicPartition, CommittedOffset]) -> None:
        self._groups.setdefault(group_id, {}).update(offsets)

    def fetch(self, group_id: str) -> Mapping[TopicPartition, CommittedOffset]:
        return dict(self._groups.get(group_id, {}))

    def delete(self, group_id: str, partitions: Iterable[TopicPartition]) -> None:
        committed = self._groups.get(group_id, {})
        for tp in partitions:
            committed.pop(tp, None)

    def delete_group(self, group_id: str) -> None:
        self._groups.pop(group_id, None)

    def groups(self) -> list[str]:
        return list(self._groups)
