"""Applies the transaction coordinator's decisions to partitions and committed offsets.

On a single node this is synchronous: EndTxn writes every marker and commits (or drops) the
transaction's pending offsets before it answers. Offsets from TxnOffsetCommit wait here until then.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..catalog import TopicCatalog
from ..errors import ErrorCode, KafkaError
from ..groups.offsets import CommittedOffset, OffsetManager
from ..replica_manager import ReplicaManager
from ..topics import TopicPartition
from .coordinator import Marker, TransactionCoordinator, TxnMetadata
from .state import TxnState


class TransactionService:
    def __init__(
        self, coordinator: TransactionCoordinator, catalog: TopicCatalog, replicas: ReplicaManager, offsets: OffsetManager
    ) -> None:
        self.coordinator = coordinator
        self._catalog = catalog
        self._replicas = replicas
        self._offsets = offsets
        self._pending: dict[tuple[str, str], dict[TopicPartition, CommittedOffset]] = {}
        replicas.transaction_check = coordinator.check_produce

    def _apply(self, txn: TxnMetadata, markers: list[Marker], commit: bool, groups: Iterable[str], now: int) -> None:
        """Write the markers, commit or drop the pending offsets, then record the transaction complete."""
        for marker in markers:
            self._replicas.write_marker(marker.tp, marker.producer_id, marker.producer_epoch, marker.commit, now)
        for group in groups:
            pending = self._pending.pop((txn.transactional_id, group), {})
            if commit and pending:
                self._offsets.commit_transactional(group, pending, now)
        if txn.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            self.coordinator.complete(txn.transactional_id, now)

    def recover(self, now: int) -> list[str]:
        """At startup: finish transactions caught between Prepare and Complete (their markers are
        written again, harmlessly where they already are), and abort, fencing the producer, those that
        were ongoing, since their pending offsets (kept in memory until EndTxn) are gone. A producer of
        such a transaction gets INVALID_PRODUCER_EPOCH when it commits, instead of losing its offsets."""
        recovered = []
        for txn in self.coordinator.pending_completion():
            self._apply(txn, self.coordinator.markers(txn), txn.state is TxnState.PREPARE_COMMIT, (), now)
            recovered.append(txn.transactional_id)
        for txn in self.coordinator.ongoing():
            self._apply(txn, self.coordinator.fence_and_abort(txn, now), False, (), now)
            recovered.append(txn.transactional_id)
        return recovered

    def init_producer_id(
        self, transactional_id: str, timeout_ms: int, now: int, producer_id: int = -1, producer_epoch: int = -1
    ) -> TxnMetadata:
        groups = set(self.coordinator.get(transactional_id).groups) if self.coordinator.get(transactional_id) else set()
        txn, markers = self.coordinator.init_producer_id(transactional_id, timeout_ms, now, producer_id, producer_epoch)
        self._apply(txn, markers, False, groups, now)
        return txn

    def add_partitions(
        self, transactional_id: str, producer_id: int, producer_epoch: int, partitions: list[TopicPartition], now: int
    ) -> dict[TopicPartition, ErrorCode]:
        unknown = [tp for tp in partitions if not self._catalog.has_partition(tp)]
        if unknown:  # Kafka adds nothing when any partition is unknown
            return {tp: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if tp in unknown else ErrorCode.OPERATION_NOT_ATTEMPTED
                    for tp in partitions}
        error = self.coordinator.add_partitions(transactional_id, producer_id, producer_epoch, partitions, now)
        return {tp: error for tp in partitions}

    def add_offsets(self, transactional_id: str, producer_id: int, producer_epoch: int, group_id: str, now: int) -> ErrorCode:
        return self.coordinator.add_offsets(transactional_id, producer_id, producer_epoch, group_id, now)

    def txn_offset_commit(
        self, transactional_id: str, group_id: str, producer_id: int, producer_epoch: int,
        offsets: Mapping[TopicPartition, CommittedOffset],
    ) -> dict[TopicPartition, ErrorCode]:
        error = self.coordinator.check_offset_commit(transactional_id, producer_id, producer_epoch, group_id)
        results = {}
        for tp, committed in offsets.items():
            if error is not ErrorCode.NONE:
                results[tp] = error
            elif not self._catalog.has_partition(tp):
                results[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                self._pending.setdefault((transactional_id, group_id), {})[tp] = committed
                results[tp] = ErrorCode.NONE
        return results

    def end(self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool, now: int) -> ErrorCode:
        try:
            markers, groups = self.coordinator.end(transactional_id, producer_id, producer_epoch, commit, now)
        except KafkaError as error:
            return error.code
        txn = self.coordinator.get(transactional_id)
        assert txn is not None
        self._apply(txn, markers, commit, groups, now)
        return ErrorCode.NONE

    def expire(self, now: int) -> list[str]:
        """Abort transactions past their timeout; the transactional ids aborted."""
        expired = []
        for txn, markers in self.coordinator.expire(now):
            groups = {g for (t, g) in self._pending if t == txn.transactional_id}
            self._apply(txn, markers, False, groups, now)
            expired.append(txn.transactional_id)
        return expired
