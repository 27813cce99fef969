"""ShareGroupStatePartitionMetadata as the share groups keep it in `__consumer_offsets`: which topic
partitions each group holds share-group state for. A group whose set of share-partitions changed is
marked (`changed`); `take_records` writes its value again if it differs from the last written, and a
tombstone once the group is gone."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Container, Iterable

from ...topics import TopicPartition
from . import records as share_records
from .records import ShareGroupRecord, ShareRecordKind, StatePartitionMetadata


class StatePartitions:
    def __init__(self) -> None:
        self.changed: set[str] = set()  # groups whose set of share-partitions changed
        self._written: dict[str, StatePartitionMetadata] = {}

    def take_records(
        self,
        groups: Container[str],
        partitions: Iterable[tuple[str, TopicPartition]],
        topic_id: Callable[[str], uuid.UUID | None],
    ) -> list[ShareGroupRecord]:
        """The records of the groups changed since the last call; `groups`: the share groups that exist,
        `partitions`: every (group, topic partition) with a share-partition."""
        records: list[ShareGroupRecord] = []
        changed, self.changed = self.changed, set()
        if not changed:
            return records
        keys = list(partitions)
        for group_id in sorted(changed):
            if group_id not in groups:
                if self._written.pop(group_id, None) is not None:
                    records.append(ShareGroupRecord(ShareRecordKind.STATE_PARTITION_METADATA, group_id, None, None))
                continue
            by_topic: dict[str, list[int]] = {}
            for g, tp in keys:
                if g == group_id:
                    by_topic.setdefault(tp.topic, []).append(tp.partition)
            value = share_records.state_partitions(by_topic, topic_id)
            if self._written.get(group_id) != value:
                self._written[group_id] = value
                records.append(ShareGroupRecord(ShareRecordKind.STATE_PARTITION_METADATA, group_id, None, value))
        return records

    def load(self, records: Iterable[ShareGroupRecord]) -> None:
        """What `__consumer_offsets` kept: the last value written for each group."""
        for (kind, group_id, _), value in share_records.latest(records).items():
            if kind is ShareRecordKind.STATE_PARTITION_METADATA and isinstance(value, StatePartitionMetadata):
                self._written[group_id] = value
