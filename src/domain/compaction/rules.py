"""Which records survive a cleaning, by the rules of Kafka's Cleaner (LogCleaner.scala).

- The offset map holds, for each key in the dirty section, its last offset; a record at or below
  the map's latest offset survives only if it is its key's last (`record.offset >= map[key]`).
  Records past the mapped range are kept as they are.
- A tombstone (null value) that is its key's last survives until the batch's delete horizon: the
  first cleaning that keeps it stamps the batch with `now + delete.retention.ms` (KIP-534); a later
  cleaning past that time removes it.
- Records of aborted transactions go at once (the aborted transaction index says which); their
  abort marker stays while any of the transaction's batches was seen in this pass, and once none is,
  it gets a delete horizon and goes after it, as a commit marker does whose transaction's batches
  are all gone.
- The batch holding a producer's last data offset (or, when it has none, its marker of the current
  epoch) is kept, empty if need be, so sequence and epoch checks survive; so is the batch that ends
  the cleaning round, so the log end is not lost.

Nothing here reads a clock or a file: `now_ms` and the records come in as arguments.
"""

from __future__ import annotations

import enum
import heapq
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from ..batch import BatchHeader
from ..control import ABORT, COMMIT, AbortedTxn
from .records import CleanerRecord, delete_horizon

# What a key costs in the map: Kafka's SkimpyOffsetMap takes 24 bytes per entry (an MD5 hash and an
# offset); a Python dict entry with its bytes key and int costs about this much beyond the key.
MAP_ENTRY_OVERHEAD = 120
MAP_LOAD_FACTOR = 0.9  # log.cleaner.io.buffer.load.factor


class OffsetMap:
    """Key -> last offset over the dirty section, bounded by the dedupe buffer (in bytes)."""

    def __init__(self, buffer_bytes: int, load_factor: float = MAP_LOAD_FACTOR) -> None:
        self.capacity_bytes = int(buffer_bytes * load_factor)
        self._offsets: dict[bytes, int] = {}
        self.used_bytes = 0
        self.latest_offset = -1

    def __len__(self) -> int:
        return len(self._offsets)

    def full_for(self, key: bytes) -> bool:
        return key not in self._offsets and self.used_bytes + len(key) + MAP_ENTRY_OVERHEAD > self.capacity_bytes

    def put(self, key: bytes, offset: int) -> None:
        if key not in self._offsets:
            self.used_bytes += len(key) + MAP_ENTRY_OVERHEAD
        self._offsets[key] = offset

    def put_all(self, pairs: Sequence[tuple[bytes, int]]) -> bool:
        """Put (key, offset) pairs in order, all at once (the per-record loop costs more than the
        scan); False, with nothing put, if they do not all fit."""
        batch = dict(pairs)
        new = set(batch).difference(self._offsets)  # iterates the batch's keys, not the map
        cost = sum(map(len, new)) + len(new) * MAP_ENTRY_OVERHEAD
        if self.used_bytes + cost > self.capacity_bytes:
            return False
        self._offsets.update(batch)
        self.used_bytes += cost
        return True

    def get(self, key: bytes) -> int:
        return self._offsets.get(key, -1)

    def retained_offsets(self) -> list[int]:
        """Every key's last offset, sorted: the only records of the mapped dirty section that can
        survive, so a batch there holding none of them need not be decoded."""
        return sorted(self._offsets.values())

    def update_latest_offset(self, offset: int) -> None:
        self.latest_offset = max(self.latest_offset, offset)

    @property
    def utilization(self) -> float:
        return self.used_bytes / self.capacity_bytes if self.capacity_bytes else 1.0


class LastRecord(NamedTuple):
    """An active producer's last data offset (None when it has only markers) and epoch."""

    last_data_offset: int | None
    producer_epoch: int


class CleanedTransactions:
    """Kafka's CleanedTransactionMetadata: aborted transactions met while walking the log in offset
    order, to say which batches are aborted and which markers may go. `kept_aborted` collects the
    aborted transaction index entries of markers that stay, for the cleaned segment's `.txnindex`."""

    def __init__(self, aborted: Iterable[AbortedTxn] = ()) -> None:
        self._pending: list[tuple[int, int, AbortedTxn]] = []
        self._sequence = 0
        self._committed: set[int] = set()
        self._aborted: dict[int, tuple[AbortedTxn, list[int]]] = {}  # pid -> (txn, [last batch offset seen])
        self.kept_aborted: list[AbortedTxn] = []
        self.add_aborted(aborted)

    def add_aborted(self, aborted: Iterable[AbortedTxn]) -> None:
        for txn in aborted:
            heapq.heappush(self._pending, (txn.first_offset, self._sequence, txn))
            self._sequence += 1

    def _consume_up_to(self, offset: int) -> None:
        while self._pending and self._pending[0][0] <= offset:
            txn = heapq.heappop(self._pending)[2]
            self._aborted.setdefault(txn.producer_id, (txn, []))

    def on_control_batch(self, header: BatchHeader, control_type: int | None) -> bool:
        """A marker (control_type None: an already emptied control batch); True if it may go."""
        self._consume_up_to(header.last_offset)
        if control_type is None:
            return True
        pid = header.producer_id
        if control_type == ABORT:
            entry = self._aborted.pop(pid, None)
            if entry is not None and entry[1]:
                self.kept_aborted.append(entry[0])
                return False
            return True
        if control_type == COMMIT:
            if pid in self._committed:
                self._committed.discard(pid)
                return False
            return True
        return False

    def on_batch(self, header: BatchHeader) -> bool:
        """A data batch; True if it belongs to an aborted transaction."""
        self._consume_up_to(header.last_offset)
        if not header.is_transactional:
            return False
        entry = self._aborted.get(header.producer_id)
        if entry is not None:
            entry[1][:] = [header.last_offset]
            return True
        self._committed.add(header.producer_id)
        return False


def map_batch(
    offset_map: OffsetMap,
    header: BatchHeader,
    keys: Sequence[tuple[bytes, int]] | None,
    start_offset: int,
    transactions: CleanedTransactions,
    control_type: int | None = None,
) -> bool:
    """Add a batch's (key, offset) pairs to the map (Kafka's buildOffsetMapForSegment); True if the
    map filled up before the batch was done (the batch's offsets then stay outside the mapped range).
    `keys` may be None for a control batch, which maps nothing."""
    if header.is_control:
        transactions.on_control_batch(header, control_type)
    elif not transactions.on_batch(header) and keys:
        if keys[0][1] < start_offset:
            keys = [pair for pair in keys if pair[1] >= start_offset]
        if not offset_map.put_all(keys):  # the map fills within this batch: up to which record
            for key, offset in keys:
                if offset_map.full_for(key):
                    return True
                offset_map.put(key, offset)
    if header.last_offset >= start_offset:
        offset_map.update_latest_offset(header.last_offset)
    return False


class Retention(enum.Enum):
    DELETE = "delete"  # the whole batch goes
    DELETE_EMPTY = "delete-empty"  # kept if any record is
    RETAIN_EMPTY = "retain-empty"  # kept, with no records if none is


class BatchOutcome(NamedTuple):
    """What becomes of one batch: its kept records, and whether it is written as it was, rebuilt
    (with a delete horizon when `horizon_ms` is set), left out, or kept as an empty header."""

    kept: tuple[CleanerRecord, ...]
    unchanged: bool
    horizon_ms: int | None
    empty: bool  # written as an empty batch (RETAIN_EMPTY with nothing kept)
    dropped: bool


_DROPPED = BatchOutcome((), False, None, False, True)
_EMPTY = BatchOutcome((), False, None, True, False)


def is_last_batch_of_producer(header: BatchHeader, last_records: Mapping[int, LastRecord]) -> bool:
    last = last_records.get(header.producer_id)
    if last is None:
        return False
    if last.last_data_offset is not None:
        return header.last_offset == last.last_data_offset
    return header.is_control and header.producer_epoch == last.producer_epoch


def filter_batch(
    header: BatchHeader,
    records: Sequence[CleanerRecord] | None,
    control_type: int | None,
    offset_map: OffsetMap,
    transactions: CleanedTransactions,
    last_records: Mapping[int, LastRecord],
    round_end_offset: int,
    now_ms: int,
    delete_retention_ms: int,
) -> BatchOutcome:
    """Kafka's cleanInto filter (checkBatchRetention, shouldRetainRecord) and MemoryRecords.filterTo
    for one batch of the segments being recopied. `records` None: a data batch the caller knows
    keeps every record and holds no tombstone (every offset is its key's last), not decoded; it is
    written as it is unless it belongs to an aborted transaction."""
    if header.is_control:
        can_discard = transactions.on_control_batch(header, control_type)
        horizon = delete_horizon(header)
        discard_records = can_discard and horizon is not None and horizon <= now_ms
    else:
        can_discard = transactions.on_batch(header)
        discard_records = can_discard
    if header.producer_id >= 0 and is_last_batch_of_producer(header, last_records):
        retention = Retention.RETAIN_EMPTY
    elif header.next_offset == round_end_offset:
        retention = Retention.RETAIN_EMPTY
    elif discard_records:
        retention = Retention.DELETE
    else:
        retention = Retention.DELETE_EMPTY
    if retention is Retention.DELETE:
        return _DROPPED
    marker_for_empty_txn = can_discard and header.is_control
    horizon = delete_horizon(header)
    if records is None:  # every record kept, none a tombstone: the batch as it is
        if not discard_records:
            return BatchOutcome((), True, horizon, False, False)
        return _EMPTY if retention is Retention.RETAIN_EMPTY else _DROPPED
    kept: list[CleanerRecord] = []
    tombstones = False
    if not discard_records:
        if header.is_control:
            kept = list(records)
        else:
            latest = offset_map.latest_offset
            for record in records:
                if record.offset > latest:
                    kept.append(record)
                elif record.key is None:
                    continue
                elif record.offset >= offset_map.get(record.key) and (
                    record.has_value or horizon is None or now_ms < horizon
                ):
                    kept.append(record)
        tombstones = any(not r.has_value for r in kept)
    if kept:
        set_horizon = (tombstones or marker_for_empty_txn) and horizon is None
        if set_horizon:
            return BatchOutcome(tuple(kept), False, now_ms + delete_retention_ms, False, False)
        if len(kept) == len(records):
            return BatchOutcome(tuple(kept), True, horizon, False, False)
        return BatchOutcome(tuple(kept), False, horizon, False, False)
    if retention is Retention.RETAIN_EMPTY:
        return BatchOutcome((), False, None, True, False)
    return _DROPPED
