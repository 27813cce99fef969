"""Share-partition state in `__share_group_state-0`, in Kafka's share coordinator record format.

Kafka's ShareCoordinatorShard writes a share-partition's state as a ShareSnapshot (key type 0: group
id, topic id, partition; value: start offset, state and snapshot epochs, create and write timestamps,
every in-flight state batch, KIP-1226's DeliveryCompleteCount), then ShareUpdates (key type 1, the
same key; value: the start offset and only the state batches that changed) until
`share.coordinator.snapshot.update.records.per.snapshot` (500) updates have been written, when the
next write is a whole snapshot again (snapshot epoch + 1). Replay takes each key's snapshot and lays
its later updates over it (`domain.groups.share.state`); a tombstone deletes. All the records of one
broker request go in one batch, fsynced once. Once every live share-partition has a snapshot past
some offset, the records before it are redundant and the log start moves there (Kafka's share
coordinator deletes them the same way), so the log does not grow without bound.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

import attrs

from trafka.domain.groups.share.state import (
    SNAPSHOT_UPDATE_RECORDS_PER_SNAPSHOT,
    apply_update,
    delivery_complete_count,
)
from trafka.domain.groups.share.state import delta as state_delta
from trafka.domain.ports import ShareSnapshot, StateBatch

from .internal_log import InternalLog
from .metadata_records import (
    ShareSnapshotKey,
    ShareSnapshotValue,
    ShareUpdateKey,
    ShareUpdateValue,
    decode_versioned,
    encode_versioned,
)

SNAPSHOT_RECORD_TYPE = 0
SEGMENT_BYTES = 100 * 1024 * 1024  # Kafka's share.coordinator.state.topic.segment.bytes
COLD_SNAPSHOT_INTERVAL_MS = 300_000  # Kafka's share.coordinator.cold.partition.snapshot.interval.ms
UPDATE_RECORD_TYPE = 1
Where = tuple[str, uuid.UUID, int]


@attrs.define
class _Kept:
    """What the log says of one share-partition: its state and the snapshot it was built from."""

    start_offset: int
    batches: list[StateBatch]
    state_epoch: int
    snapshot_epoch: int
    create_timestamp: int
    snapshot_timestamp: int  # when its snapshot was written
    updates: int = 0  # written since the snapshot


class FileShareStateStore:
    def __init__(
        self,
        state_log: InternalLog,
        clock_ms: Callable[[], int],
        updates_per_snapshot: int = SNAPSHOT_UPDATE_RECORDS_PER_SNAPSHOT,
        segment_bytes: int = SEGMENT_BYTES,
    ) -> None:
        self._log = state_log
        self._segment_bytes = segment_bytes
        self._clock_ms = clock_ms
        self._updates_per_snapshot = updates_per_snapshot
        self._kept: dict[Where, _Kept] = {}
        self._snapshot_at: dict[Where, int] = {}  # the offset of each live share-partition's snapshot
        self.cold_snapshot_interval_ms = COLD_SNAPSHOT_INTERVAL_MS
        self._next_cold_check = 0

    def load(self) -> list[ShareSnapshot]:
        kept: dict[Where, _Kept] = {}
        snapshot_at: dict[Where, int] = {}
        for offset, key, value in self._log.records():
            if key is None or len(key) < 2:
                continue
            record_type = int.from_bytes(key[:2], "big")
            if record_type == SNAPSHOT_RECORD_TYPE:
                k = decode_versioned(ShareSnapshotKey, key)
            elif record_type == UPDATE_RECORD_TYPE:
                k = decode_versioned(ShareUpdateKey, key)
            else:
                continue
            where = (k.group_id, k.topic_id, k.partition)
            if value is None:
                kept.pop(where, None)
                snapshot_at.pop(where, None)
            elif record_type == SNAPSHOT_RECORD_TYPE:
                v = decode_versioned(ShareSnapshotValue, value)
                kept[where] = _Kept(
                    v.start_offset, _batches(v), v.state_epoch, v.snapshot_epoch, v.create_timestamp, v.write_timestamp
                )
                snapshot_at[where] = offset
            elif where in kept:  # an update lays over its snapshot; without one it has nothing to say
                u = decode_versioned(ShareUpdateValue, value)
                state = kept[where]
                state.start_offset, state.batches = apply_update(
                    state.start_offset, state.batches, u.start_offset, _batches(u)
                )
                state.updates += 1
        self._kept = kept
        self._snapshot_at = snapshot_at
        return [
            ShareSnapshot(g, t, p, s.start_offset, tuple(s.batches), s.state_epoch) for (g, t, p), s in kept.items()
        ]

    def write(self, snapshots: Sequence[ShareSnapshot], deleted: Sequence[Where]) -> None:
        now = self._clock_ms()
        base = self._log.log.log_end_offset  # the offset the first record written gets
        records: list[tuple[bytes | None, bytes | None]] = []
        snapshots_moved = False
        for where in deleted:
            if self._kept.pop(where, None) is not None:  # as Kafka: a tombstone of the snapshot's key
                records.append((_key(ShareSnapshotKey, SNAPSHOT_RECORD_TYPE, where), None))
                self._snapshot_at.pop(where, None)
                snapshots_moved = True
        for s in snapshots:
            where = (s.group_id, s.topic_id, s.partition)
            batches = list(s.batches)
            kept = self._kept.get(where)
            changed = None
            if kept is not None and kept.updates < self._updates_per_snapshot and kept.state_epoch == s.state_epoch:
                changed = state_delta(kept.start_offset, kept.batches, s.start_offset, batches)
            if kept is not None and changed is not None:
                if not changed and kept.start_offset == s.start_offset:
                    continue  # nothing to say
                records.append((_key(ShareUpdateKey, UPDATE_RECORD_TYPE, where), _update(kept, s, changed)))
                kept.start_offset, kept.batches = s.start_offset, batches
                kept.updates += 1
                continue
            epoch = 0 if kept is None else kept.snapshot_epoch + 1
            created = now if kept is None else kept.create_timestamp
            self._kept[where] = _Kept(s.start_offset, batches, s.state_epoch, epoch, created, now)
            self._snapshot_at[where] = base + len(records)
            snapshots_moved = True
            records.append((_key(ShareSnapshotKey, SNAPSHOT_RECORD_TYPE, where), _snapshot(s, epoch, created, now)))
        written = {(s.group_id, s.topic_id, s.partition) for s in snapshots}
        cold = self._cold(now, written)
        for where, state in cold:
            self._snapshot_at[where] = base + len(records)
            records.append((_key(ShareSnapshotKey, SNAPSHOT_RECORD_TYPE, where), _resnapshot(where, state, now)))
        if records:
            self._log.append(records)
        if snapshots_moved or cold:
            self._prune()

    def _cold(self, now: int, written: set[Where]) -> list[tuple[Where, _Kept]]:
        """Share-partitions whose snapshot is older than the cold interval: snapshotted again (same
        state, next snapshot epoch), so that an idle share-partition does not hold the log's start
        back, as Kafka's cold-partition snapshots. Looked for at most every tenth of the interval."""
        if now < self._next_cold_check:
            return []
        self._next_cold_check = now + self.cold_snapshot_interval_ms // 10
        cold = []
        for where, state in self._kept.items():
            if where not in written and state.snapshot_timestamp <= now - self.cold_snapshot_interval_ms:
                state.snapshot_epoch += 1
                state.snapshot_timestamp = now
                state.updates = 0
                cold.append((where, state))
        return cold

    def _prune(self) -> None:
        """Drop what no replay needs any more: everything before the oldest of the live share-partitions'
        latest snapshots (Kafka's share coordinator deletes records up to its last redundant offset).
        Segments roll at Kafka's 100 MB, so whole redundant segments are deleted."""
        log = self._log.log
        if log.segments[-1].size >= self._segment_bytes:
            log.roll()
        redundant = min(self._snapshot_at.values(), default=log.log_end_offset)
        if redundant > log.log_start_offset:
            log.advance_log_start_offset(redundant)


def _batches(value: ShareSnapshotValue | ShareUpdateValue) -> list[StateBatch]:
    return [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in value.state_batches]


def _snapshot(s: ShareSnapshot, epoch: int, created: int, now: int) -> bytes:
    value = ShareSnapshotValue(
        version=0,
        snapshot_epoch=epoch,
        state_epoch=s.state_epoch,
        leader_epoch=0,
        start_offset=s.start_offset,
        delivery_complete_count=delivery_complete_count(s.start_offset, s.batches),
        create_timestamp=created,
        write_timestamp=now,
        state_batches=[
            ShareSnapshotValue.StateBatch(first_offset=f, last_offset=last, delivery_state=st, delivery_count=c)
            for f, last, st, c in s.batches
        ],
    )
    return encode_versioned(value, 0)


def _resnapshot(where: Where, state: _Kept, now: int) -> bytes:
    group_id, topic_id, partition = where
    again = ShareSnapshot(group_id, topic_id, partition, state.start_offset, tuple(state.batches), state.state_epoch)
    return _snapshot(again, state.snapshot_epoch, state.create_timestamp, now)


def _update(kept: _Kept, s: ShareSnapshot, changed: Sequence[StateBatch]) -> bytes:
    value = ShareUpdateValue(
        version=0,
        snapshot_epoch=kept.snapshot_epoch,
        leader_epoch=0,
        start_offset=s.start_offset,
        delivery_complete_count=delivery_complete_count(s.start_offset, s.batches),
        state_batches=[
            ShareUpdateValue.StateBatch(first_offset=f, last_offset=last, delivery_state=st, delivery_count=c)
            for f, last, st, c in changed
        ],
    )
    return encode_versioned(value, 0)


def _key(cls: type, record_type: int, where: Where) -> bytes:
    group_id, topic_id, partition = where
    key = cls(version=record_type, group_id=group_id, topic_id=topic_id, partition=partition)
    return encode_versioned(key, record_type)
