"""Applies the transaction coordinator's decisions to partitions and committed offsets.

On a single node this is synchronous: EndTxn writes every marker and commits (or drops) the offsets
the transaction staged with TxnOffsetCommit (kept durably by the offset store) before it answers.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..catalog import TopicCatalog
from ..errors import ErrorCode, KafkaError
from ..groups.group_metadata import CommittedOffset
from ..groups.offsets import OffsetManager
from ..replica_manager import ReplicaManager
from ..topics import TopicPartition
from .coordinator import Marker, TransactionCoordinator, TxnMetadata
from .state import TxnState


class TransactionService:
    def __init__(
        self,
        coordinator: TransactionCoordinator,
        catalog: TopicCatalog,
        replicas: ReplicaManager,
        offsets: OffsetManager,
    ) -> None:
        self.coordinator = coordinator
        self._catalog = catalog
        self._replicas = replicas
        self._offsets = offsets
        replicas.admission.transaction_check = coordinator.check_produce

    def _apply(self, txn: TxnMetadata, markers: list[Marker], commit: bool, now: int) -> None:
        """Write the markers, commit or drop the staged offsets, then record the transaction complete."""
        for marker in markers:
            self._replicas.write_marker(marker.tp, marker.producer_id, marker.producer_epoch, marker.commit, now)
        self._offsets.end_transactional(txn.producer_id, txn.producer_epoch, commit)
        if txn.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            self.coordinator.complete(txn.transactional_id, now)

    def recover(self, now: int) -> list[str]:
        """At startup: finish transactions caught between Prepare and Complete (their markers are
        written again, harmlessly where they already are). Ongoing transactions simply go on, as in
        Kafka: their staged offsets are in the offset store, and a timeout still aborts them."""
        recovered = []
        for txn in self.coordinator.pending_completion():
            self._apply(txn, self.coordinator.markers(txn), txn.state is TxnState.PREPARE_COMMIT, now)
            recovered.append(txn.transactional_id)
        return recovered

    def init_producer_id(
        self, transactional_id: str, timeout_ms: int, now: int, producer_id: int = -1, producer_epoch: int = -1
    ) -> TxnMetadata:
        previous = self.coordinator.get(transactional_id)
        aborted_producer = (previous.producer_id, previous.producer_epoch) if previous else None
        txn, markers = self.coordinator.init_producer_id(transactional_id, timeout_ms, now, producer_id, producer_epoch)
        self._apply(txn, markers, False, now)
        if aborted_producer is not None and aborted_producer[0] != txn.producer_id:
            self._offsets.end_transactional(*aborted_producer, False)  # epoch exhausted: a new producer id
        return txn

    def add_partitions(
        self, transactional_id: str, producer_id: int, producer_epoch: int, partitions: list[TopicPartition], now: int
    ) -> dict[TopicPartition, ErrorCode]:
        unknown = [tp for tp in partitions if not self._catalog.has_partition(tp)]
        if unknown:  # Kafka adds nothing when any partition is unknown
            return {
                tp: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if tp in unknown else ErrorCode.OPERATION_NOT_ATTEMPTED
                for tp in partitions
            }
        error = self.coordinator.add_partitions(transactional_id, producer_id, producer_epoch, partitions, now)
        return dict.fromkeys(partitions, error)

    def add_offsets(
        self, transactional_id: str, producer_id: int, producer_epoch: int, group_id: str, now: int
    ) -> ErrorCode:
        return self.coordinator.add_offsets(transactional_id, producer_id, producer_epoch, group_id, now)

    def txn_offset_commit(
        self,
        transactional_id: str,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        offsets: Mapping[TopicPartition, CommittedOffset],
        now: int,
        add: bool = False,
    ) -> dict[TopicPartition, ErrorCode]:
        """TxnOffsetCommit: the offsets staged in the transaction; `add` (v5+, transactions V2) adds the
        group to the transaction itself."""
        error = self.coordinator.check_offset_commit(transactional_id, producer_id, producer_epoch, group_id, now, add)
        results: dict[TopicPartition, ErrorCode] = {}
        for tp, _committed in offsets.items():
            if error is not ErrorCode.NONE:
                results[tp] = error
            elif not self._catalog.has_partition(tp):
                results[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                results[tp] = ErrorCode.NONE
        staged = {tp: offsets[tp] for tp, e in results.items() if e is ErrorCode.NONE}
        if staged:
            txn = self.coordinator.get(transactional_id)
            assert txn is not None
            self._offsets.stage_transactional(txn.producer_id, txn.producer_epoch, group_id, staged, now)
        return results

    def end(
        self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool, now: int, v2: bool = False
    ) -> ErrorCode:
        """EndTxn (`v2`: v5, transactions V2). After it, the transaction's producer id and epoch are the
        ones for the next transaction."""
        try:
            markers, _ = self.coordinator.end(transactional_id, producer_id, producer_epoch, commit, now, v2)
        except KafkaError as error:
            return error.code
        txn = self.coordinator.get(transactional_id)
        assert txn is not None
        self._apply(txn, markers, commit, now)
        return ErrorCode.NONE

    def expire(self, now: int) -> list[str]:
        """Abort transactions past their timeout; the transactional ids aborted."""
        expired = []
        for txn, markers in self.coordinator.expire(now):
            self._apply(txn, markers, False, now)
            expired.append(txn.transactional_id)
        return expired
