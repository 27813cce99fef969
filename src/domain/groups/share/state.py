"""Share-partition state as Kafka's share coordinator keeps it in `__share_group_state`: a ShareSnapshot
(the start offset and every in-flight state batch), then ShareUpdates that carry only what changed
since (the start offset and the state batches that differ), a new snapshot every
`share.coordinator.snapshot.update.records.per.snapshot` updates. Replay takes the snapshot and lays
each later update over it: an update's batches replace the state of the offsets they cover, batches
below the (new) start offset are dropped.

Pure functions on state batches (first offset, last offset, delivery state, delivery count).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...ports import StateBatch

ACKNOWLEDGED = 2
ARCHIVED = 4
SNAPSHOT_UPDATE_RECORDS_PER_SNAPSHOT = 500  # Kafka's share.coordinator.snapshot.update.records.per.snapshot


def delta(
    old_start: int, old: Sequence[StateBatch], new_start: int, new: Sequence[StateBatch]
) -> list[StateBatch] | None:
    """The batches of `new` an update must carry so that replaying it over `old` gives `new`; None
    when no update can say it (the start offset moved back, or the in-flight records end earlier than
    before: the state was reset) and a snapshot must be written."""
    old_end = old[-1][1] if old else old_start - 1
    new_end = new[-1][1] if new else new_start - 1
    if new_start < old_start or new_end < old_end:
        return None
    unchanged = set(old)
    return [b for b in new if b not in unchanged]


def apply_update(
    start: int, batches: Sequence[StateBatch], update_start: int, update: Sequence[StateBatch]
) -> tuple[int, list[StateBatch]]:
    """The state after an update: its batches replace the state of the offsets they cover (old
    batches are cut around them), then everything below the start offset (the update's unless -1) is
    dropped."""
    if update_start >= 0:
        start = update_start
    laid = sorted(update)
    result: list[StateBatch] = []
    j = 0
    for first, last, state, count in sorted(batches):
        while j < len(laid) and laid[j][1] < first:
            j += 1
        offset, k = first, j
        while k < len(laid) and laid[k][0] <= last:
            if laid[k][0] > offset:
                result.append((offset, laid[k][0] - 1, state, count))
            offset = max(offset, laid[k][1] + 1)
            k += 1
        if offset <= last:
            result.append((offset, last, state, count))
    result.extend(laid)
    result.sort()
    return start, [(max(f, start), last, s, c) for f, last, s, c in result if last >= start]


def delivery_complete_count(start: int, batches: Sequence[StateBatch]) -> int:
    """KIP-1226's DeliveryCompleteCount: offsets at or past the start offset whose delivery is done
    (acknowledged or archived)."""
    return sum(
        last - max(first, start) + 1
        for first, last, state, _ in batches
        if state in (ACKNOWLEDGED, ARCHIVED) and last >= start
    )
