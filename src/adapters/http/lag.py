"""Consumer lag: a group's committed offsets against the partitions' high watermarks.

Computed when asked (a scrape, a page) from the offset manager and the replica manager, as Kafka's
tools do (kafka-consumer-groups.sh: LAG = LOG-END-OFFSET - CURRENT-OFFSET).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from trafka.domain.topics import TopicPartition

if TYPE_CHECKING:
    from .view import BrokerView


@attrs.frozen
class PartitionLag:
    tp: TopicPartition
    committed: int
    log_end_offset: int

    @property
    def lag(self) -> int:
        return max(self.log_end_offset - self.committed, 0)


def group_lag(view: BrokerView, group_id: str) -> list[PartitionLag]:
    """Every partition the group has committed an offset for, that still exists, by topic and partition."""
    rows = []
    for tp, committed in sorted(view.offsets.fetch(group_id, None).items()):
        marks = view.replicas.watermarks(tp)
        if committed is None or marks is None:
            continue
        rows.append(PartitionLag(tp, committed.offset, marks[1]))
    return rows


def all_group_lag(view: BrokerView) -> dict[str, list[PartitionLag]]:
    return {listing.group_id: group_lag(view, listing.group_id) for listing in view.coordinator.list_groups()}
