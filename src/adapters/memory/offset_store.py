"""Committed offsets kept in memory, by group then partition."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from trafka.domain.groups.group_metadata import CommittedOffset, GroupMetadata
from trafka.domain.topics import TopicPartition

if TYPE_CHECKING:
    from trafka.domain.groups.modern.records import ConsumerGroupRecord, RecordKey
    from trafka.domain.groups.share.records import ShareGroupRecord, ShareRecordKey
    from trafka.domain.groups.streams.records import StreamsGroupRecord, StreamsRecordKey


class MemoryOffsetStore:
    def __init__(self) -> None:
        self._groups: dict[str, dict[TopicPartition, CommittedOffset]] = {}
        self._staged: dict[int, dict[str, dict[TopicPartition, CommittedOffset]]] = {}
        self._metadata: dict[str, GroupMetadata] = {}
        self._consumer_groups: dict[RecordKey, ConsumerGroupRecord] = {}
        self._share_groups: dict[ShareRecordKey, ShareGroupRecord] = {}
        self._streams_groups: dict[StreamsRecordKey, StreamsGroupRecord] = {}

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
        self._metadata.pop(group_id, None)

    def store_group(self, group_id: str, metadata: GroupMetadata | None) -> None:
        if metadata is None:
            self._metadata.pop(group_id, None)
        else:
            self._metadata[group_id] = metadata

    def group_metadata(self) -> Mapping[str, GroupMetadata]:
        return dict(self._metadata)

    def store_consumer_group_records(self, records: Iterable[ConsumerGroupRecord]) -> None:
        for record in records:
            if record.value is None:
                self._consumer_groups.pop(record.key, None)
            else:
                self._consumer_groups[record.key] = record

    def consumer_group_records(self) -> list[ConsumerGroupRecord]:
        return list(self._consumer_groups.values())

    def store_streams_group_records(self, records: Iterable[StreamsGroupRecord]) -> None:
        for record in records:
            if record.value is None:
                self._streams_groups.pop(record.key, None)
            else:
                self._streams_groups[record.key] = record

    def streams_group_records(self) -> list[StreamsGroupRecord]:
        return list(self._streams_groups.values())

    def store_share_group_records(self, records: Iterable[ShareGroupRecord]) -> None:
        for record in records:
            if record.value is None:
                self._share_groups.pop(record.key, None)
            else:
                self._share_groups[record.key] = record

    def share_group_records(self) -> list[ShareGroupRecord]:
        return list(self._share_groups.values())

    def groups(self) -> list[str]:
        return list(self._groups)

    def stage_transactional(
        self, producer_id: int, producer_epoch: int, group_id: str, offsets: Mapping[TopicPartition, CommittedOffset]
    ) -> None:
        self._staged.setdefault(producer_id, {}).setdefault(group_id, {}).update(offsets)

    def end_transactional(self, producer_id: int, producer_epoch: int, commit: bool) -> None:
        for group_id, offsets in self._staged.pop(producer_id, {}).items():
            if commit:
                self.commit(group_id, offsets)

    def has_pending(self, group_id: str, tp: TopicPartition | None = None) -> bool:
        if tp is None:
            return any(staged.get(group_id) for staged in self._staged.values())
        return any(tp in staged.get(group_id, {}) for staged in self._staged.values())
