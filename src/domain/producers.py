"""Idempotent producers: per-partition sequence tracking, as Kafka's ProducerStateManager does it.

For each producer id a partition keeps its epoch and the sequence and offset ranges of its last five
batches. A batch whose sequences match one of them is a duplicate (a retry): it is answered with the
original offsets and not appended again. A batch must otherwise continue the sequence (wrapping at
2^31 - 1 to 0), or it gets OUT_OF_ORDER_SEQUENCE_NUMBER; an epoch older than the known one gets
INVALID_PRODUCER_EPOCH; a new epoch must start at sequence 0. All of this reads batch headers only.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import attrs

from .batch import BatchHeader
from .errors import ErrorCode, KafkaError

MAX_SEQUENCE = 2**31 - 1
BATCHES_KEPT = 5


def next_sequence(sequence: int, increment: int = 1) -> int:
    """Sequence arithmetic that wraps past 2^31 - 1 to 0, as Kafka's DefaultRecordBatch does."""
    if sequence > MAX_SEQUENCE - increment:
        return increment - (MAX_SEQUENCE - sequence) - 1
    return sequence + increment


@attrs.frozen
class BatchMetadata:
    first_sequence: int
    last_sequence: int
    first_offset: int
    last_offset: int
    max_timestamp: int


@attrs.define
class ProducerEntry:
    producer_id: int
    epoch: int
    batches: deque[BatchMetadata] = attrs.field(factory=lambda: deque(maxlen=BATCHES_KEPT))
    current_txn_first_offset: int | None = None  # set while a transaction of this producer is open
    last_timestamp: int = -1  # of its last batch or marker: what producer.id.expiration.ms counts from
    # the coordinator epoch of its last transaction marker, -1 until one (Kafka's ProducerStateEntry)
    coordinator_epoch: int = -1

    @property
    def last_sequence(self) -> int | None:
        return self.batches[-1].last_sequence if self.batches else None

    def duplicate_of(self, first_sequence: int, last_sequence: int) -> BatchMetadata | None:
        for batch in self.batches:
            if batch.first_sequence == first_sequence and batch.last_sequence == last_sequence:
                return batch
        return None


def batch_last_sequence(header: BatchHeader) -> int:
    return next_sequence(header.base_sequence, header.last_offset_delta)


@attrs.frozen
class ProducerSnapshotEntry:
    """One producer in a snapshot: its last batch and open transaction (Kafka's ProducerSnapshot)."""

    producer_id: int
    epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int


class PartitionProducerState:
    """The producers of one partition, rebuilt from batch headers and kept as batches are appended."""

    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}
        # producer id -> first offset of its open transaction: the last stable offset is read on every
        # fetch, so it must not cost a pass over every producer the partition has seen
        self._open_transactions: dict[int, int] = {}

    def _set_open(self, entry: ProducerEntry, first_offset: int | None) -> None:
        entry.current_txn_first_offset = first_offset
        if first_offset is None:
            self._open_transactions.pop(entry.producer_id, None)
        else:
            self._open_transactions[entry.producer_id] = first_offset

    def check(self, header: BatchHeader) -> BatchMetadata | None:
        """Validate an idempotent batch before appending: the original batch if it is a duplicate.

        Raises KafkaError with INVALID_PRODUCER_EPOCH or OUT_OF_ORDER_SEQUENCE_NUMBER.
        """
        entry = self.producers.get(header.producer_id)
        if entry is None:
            return None
        if header.producer_epoch < entry.epoch:
            raise KafkaError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"Epoch {header.producer_epoch} of producer {header.producer_id} is older than {entry.epoch}",
            )
        if header.producer_epoch > entry.epoch:
            if header.base_sequence != 0:
                raise KafkaError(
                    ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"New epoch {header.producer_epoch} must start at sequence 0, not {header.base_sequence}",
                )
            return None
        duplicate = entry.duplicate_of(header.base_sequence, batch_last_sequence(header))
        if duplicate is not None:
            return duplicate
        last = entry.last_sequence
        if last is not None and header.base_sequence != next_sequence(last):
            raise KafkaError(
                ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                f"Out of order sequence number for producer {header.producer_id}: "
                f"{header.base_sequence} (incoming seq) after {last} (current end sequence)",
            )
        return None

    def record(self, header: BatchHeader) -> None:
        """Remember an appended (offset-assigned) batch of an idempotent or transactional producer."""
        entry = self.producers.get(header.producer_id)
        if entry is None or header.producer_epoch != entry.epoch:
            open_txn = entry.current_txn_first_offset if entry is not None else None
            entry = self.producers[header.producer_id] = ProducerEntry(header.producer_id, header.producer_epoch)
            self._set_open(entry, open_txn)
        if header.is_transactional and entry.current_txn_first_offset is None:
            self._set_open(entry, header.base_offset)
        entry.last_timestamp = header.max_timestamp
        entry.batches.append(
            BatchMetadata(
                header.base_sequence,
                batch_last_sequence(header),
                header.base_offset,
                header.last_offset,
                header.max_timestamp,
            )
        )

    def end_transaction(self, producer_id: int, producer_epoch: int, timestamp: int = -1) -> int | None:
        """A marker was appended: close the producer's open transaction; its first offset, if any. A marker
        of a newer epoch (transactions V2 bump it on every commit and abort) forgets the older epoch's
        batches, as Kafka's ProducerStateEntry.maybeUpdateProducerEpoch: the next batch starts anew."""
        entry = self.producers.get(producer_id)
        if entry is None:
            entry = self.producers[producer_id] = ProducerEntry(producer_id, producer_epoch)
        first = entry.current_txn_first_offset
        self._set_open(entry, None)
        entry.coordinator_epoch = 0  # trafka's one transaction coordinator writes every marker at epoch 0
        if producer_epoch > entry.epoch:
            entry.batches.clear()
            entry.epoch = producer_epoch
        entry.last_timestamp = max(entry.last_timestamp, timestamp)
        return first

    def expire(self, now_ms: int, expiration_ms: int) -> int:
        """Forget producers idle for `expiration_ms` with no open transaction, as Kafka's
        ProducerStateManager.removeExpiredProducers does; how many were removed. A producer that comes
        back after this is treated as new (any sequence accepted), as Kafka treats it."""
        expired = [
            pid
            for pid, entry in self.producers.items()
            if entry.current_txn_first_offset is None and now_ms - entry.last_timestamp >= expiration_ms
        ]
        for pid in expired:
            del self.producers[pid]
        return len(expired)

    def snapshot(self) -> list[ProducerSnapshotEntry]:
        entries = []
        for p in sorted(self.producers.values(), key=lambda e: e.producer_id):
            last = p.batches[-1] if p.batches else None
            entries.append(
                ProducerSnapshotEntry(
                    p.producer_id,
                    p.epoch,
                    last.last_sequence if last else -1,
                    last.last_offset if last else -1,
                    (last.last_offset - last.first_offset) if last else 0,
                    p.last_timestamp,
                    p.coordinator_epoch,
                    p.current_txn_first_offset if p.current_txn_first_offset is not None else -1,
                )
            )
        return entries

    def restore(self, entries: list[ProducerSnapshotEntry]) -> None:
        """State from a snapshot: each producer's last batch (as Kafka keeps it) and open transaction."""
        for e in entries:
            entry = self.producers[e.producer_id] = ProducerEntry(
                e.producer_id, e.epoch, last_timestamp=e.timestamp, coordinator_epoch=e.coordinator_epoch
            )
            if e.last_sequence >= 0:
                first_sequence = (e.last_sequence - e.offset_delta) % (MAX_SEQUENCE + 1)  # sequences wrap
                entry.batches.append(
                    BatchMetadata(
                        first_sequence, e.last_sequence, e.last_offset - e.offset_delta, e.last_offset, e.timestamp
                    )
                )
            self._set_open(entry, e.current_txn_first_offset if e.current_txn_first_offset >= 0 else None)

    def epoch(self, producer_id: int) -> int | None:
        """The producer's latest epoch on this partition; None for a producer it does not know."""
        entry = self.producers.get(producer_id)
        return None if entry is None else entry.epoch

    def first_unstable_offset(self) -> int | None:
        """The first offset of the oldest open transaction: the last stable offset, if any is open."""
        opened = self._open_transactions
        return min(opened.values()) if opened else None  # none open: the common case, no call


class ProducerIdAllocator:
    """Hands out producer ids from blocks the catalog store reserves durably (Kafka's ProducerIdsRecord)."""

    BLOCK = 1000

    def __init__(self, next_block_start: int, reserve: Callable[[int, int], None]) -> None:
        self._next = next_block_start
        self._end = next_block_start
        self._reserve = reserve  # (first id of the new block, block end) -> None, must be durable

    def allocate(self) -> int:
        if self._next >= self._end:
            self._end = self._next + self.BLOCK
            self._reserve(self._next, self._end)
        allocated = self._next
        self._next += 1
        return allocated
