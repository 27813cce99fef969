"""The transaction coordinator, sans-I/O: transactional ids, producer epochs and their transactions.

Every call takes the current time and returns what must happen to partitions (`Marker`s to write,
offsets to commit); `TransactionService` applies those. State changes are recorded through the
`TransactionStore` port before they are answered, so they survive a restart. The rules follow Kafka's
TransactionCoordinator: epochs fence zombies, EndTxn ends the transaction its producer started,
InitProducerId aborts an ongoing transaction and bumps the epoch, a transaction open longer than its
timeout is aborted.

Transactions V2 (KIP-890 part 2, `transaction.version` 2) are chosen per request, as Kafka's KafkaApis
chooses them from the request version: a transactional Produce v12+ adds its partition to the
transaction itself (`check_produce(..., add=True)`), TxnOffsetCommit v5+ adds its group, and EndTxn v5
(`end(..., v2=True)`) bumps the producer epoch on every commit and abort (an empty abort too): the
markers carry the bumped epoch, the answer is the producer id and epoch for the next transaction (a
new producer id once the epoch is exhausted), and an EndTxn retried after it completed is recognised
by its epoch being one behind. A transaction records the client's version (`client_version`, Kafka's
ClientTransactionVersion) so the transaction log reads as Kafka 4.2 writes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs

from ..errors import ErrorCode, KafkaError
from ..topics import TopicPartition
from .limits import MAX_TRANSACTION_TIMEOUT_MS
from .state import TxnEvent, TxnState, next_txn_state

MAX_EPOCH = 32767
TV_1 = 0  # ClientTransactionVersion of a pre-KIP-890-part-2 client (Kafka's TV_0 and TV_1 alike)
TV_2 = 2
OFFSETS_PARTITION = TopicPartition("__consumer_offsets", 0)  # every group's offsets: trafka has one (ADR 64)


@attrs.define
class TxnMetadata:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState = TxnState.EMPTY
    partitions: set[TopicPartition] = attrs.field(factory=set)
    groups: set[str] = attrs.field(factory=set)
    started_ms: int = -1
    updated_ms: int = -1
    client_version: int = TV_1  # the transaction version of the client's last request (ClientTransactionVersion)
    previous_producer_id: int = -1  # the producer id before an exhausted epoch moved it to a new one
    next_producer_id: int = -1  # between a TV2 Prepare* and its completion: the id to move to

    def listed_partitions(self) -> set[TopicPartition]:
        """The partitions Kafka lists for it (its transaction log value, DescribeTransactions): the data
        partitions and, once a group stages offsets in it, the group's `__consumer_offsets` partition."""
        return self.partitions | {OFFSETS_PARTITION} if self.groups else self.partitions


@attrs.frozen
class Marker:
    """A commit or abort marker for one partition of a transaction."""

    tp: TopicPartition
    producer_id: int
    producer_epoch: int
    commit: bool


_EXPIRABLE = (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)


class TransactionCoordinator:
    def __init__(
        self,
        allocate_producer_id: Callable[[], int],
        record: Callable[[TxnMetadata], None],
        loaded: Iterable[TxnMetadata] = (),
        *,
        remove: Callable[[str], None] = lambda transactional_id: None,
        max_timeout_ms: int = MAX_TRANSACTION_TIMEOUT_MS,  # transaction.max.timeout.ms
    ) -> None:
        self.max_timeout_ms = max_timeout_ms
        self._allocate = allocate_producer_id
        self._record = record
        self._remove = remove
        self._txns: dict[str, TxnMetadata] = {t.transactional_id: t for t in loaded}
        self._by_producer: dict[int, TxnMetadata] = {t.producer_id: t for t in self._txns.values()}

    def get(self, transactional_id: str) -> TxnMetadata | None:
        return self._txns.get(transactional_id)

    def all(self) -> list[TxnMetadata]:
        return sorted(self._txns.values(), key=lambda t: t.transactional_id)

    def _transition(self, txn: TxnMetadata, event: TxnEvent, now: int) -> None:
        txn.state = next_txn_state(txn.state, event)
        txn.updated_ms = now
        self._by_producer[txn.producer_id] = txn
        self._record(txn)

    def check_produce(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        tp: TopicPartition,
        now: int,
        version: int = 11,
    ) -> ErrorCode:
        """May this transactional batch, sent with `transactional_id` in a Produce of `version`, be
        appended? Only by the id's producer at its current epoch (an older epoch is
        INVALID_PRODUCER_EPOCH; another producer's id INVALID_PRODUCER_ID_MAPPING). From v12 (transactions
        V2) the partition joins the transaction, which starts if none is ongoing; before, it must be in
        the ongoing transaction already (Kafka's transaction verification, KIP-890 part 1), else
        TRANSACTION_ABORTABLE from v11, INVALID_TXN_STATE below."""
        txn = self._txns.get(transactional_id)
        if txn is None or txn.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if producer_epoch < txn.producer_epoch:
            return ErrorCode.INVALID_PRODUCER_EPOCH
        if version >= 12:
            if producer_epoch != txn.producer_epoch:  # PRODUCER_FENCED, as the produce path names it
                return ErrorCode.INVALID_PRODUCER_EPOCH
            if txn.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
                return ErrorCode.NOT_ENOUGH_REPLICAS  # Kafka's retriable stand-in for CONCURRENT_TRANSACTIONS
            if txn.state is not TxnState.ONGOING or tp not in txn.partitions or txn.client_version != TV_2:
                self._join(txn, now)
                txn.partitions.add(tp)
                self._transition(txn, TxnEvent.ADD, now)
            return ErrorCode.NONE
        if txn.state is not TxnState.ONGOING or producer_epoch != txn.producer_epoch or tp not in txn.partitions:
            return ErrorCode.TRANSACTION_ABORTABLE if version >= 11 else ErrorCode.INVALID_TXN_STATE
        return ErrorCode.NONE

    @staticmethod
    def _join(txn: TxnMetadata, now: int, client_version: int = TV_2) -> None:
        """A request of `client_version` adds to the transaction, starting it if none is ongoing."""
        if txn.state is not TxnState.ONGOING:
            txn.started_ms = now
        txn.client_version = client_version

    def _fenced(self, txn: TxnMetadata | None, producer_id: int, producer_epoch: int) -> ErrorCode | None:
        if txn is None:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if txn.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if txn.producer_epoch != producer_epoch:
            return ErrorCode.INVALID_PRODUCER_EPOCH
        return None

    def init_producer_id(
        self, transactional_id: str, timeout_ms: int, now: int, producer_id: int = -1, producer_epoch: int = -1
    ) -> tuple[TxnMetadata, list[Marker]]:
        """A producer id and (bumped) epoch; an ongoing transaction of the old epoch is aborted."""
        if not transactional_id:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "empty transactional id")
        if not 0 < timeout_ms <= self.max_timeout_ms:
            raise KafkaError(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
        txn = self._txns.get(transactional_id)
        if txn is None:
            txn = TxnMetadata(transactional_id, self._allocate(), 0, timeout_ms, updated_ms=now)
            self._txns[transactional_id] = txn
            self._by_producer[txn.producer_id] = txn
            self._record(txn)
            return txn, []
        if producer_id >= 0 and not self._current_or_before_bump(txn, producer_id, producer_epoch):
            raise KafkaError(ErrorCode.INVALID_PRODUCER_EPOCH, "the producer id and epoch are not current")
        if txn.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            raise KafkaError(ErrorCode.CONCURRENT_TRANSACTIONS)
        markers = []
        aborting = txn.state is TxnState.ONGOING
        if aborting:  # fence first: the abort markers carry the new epoch
            self._bump_epoch(txn)
            markers = self._prepare_abort(txn, now)  # none when only groups joined: still a Prepare
        self._bump_epoch(txn)
        txn.timeout_ms = timeout_ms
        if not aborting:
            self._transition(txn, TxnEvent.INIT, now)
        return txn, markers

    @staticmethod
    def _current_or_before_bump(txn: TxnMetadata, producer_id: int, producer_epoch: int) -> bool:
        """May a producer that names this id and epoch re-initialize (KIP-360)? The current ones, or the
        ones before the bump of a TV2 EndTxn whose answer the producer never received (Kafka accepts the
        transaction's last producer epoch, or the previous id at an exhausted epoch)."""
        if (producer_id, producer_epoch) == (txn.producer_id, txn.producer_epoch):
            return True
        if txn.client_version != TV_2 or txn.state not in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
            return False
        if producer_id == txn.producer_id:
            return producer_epoch == txn.producer_epoch - 1
        return producer_id == txn.previous_producer_id and producer_epoch == MAX_EPOCH - 1 and txn.producer_epoch == 0

    def _bump_epoch(self, txn: TxnMetadata) -> None:
        if txn.producer_epoch >= MAX_EPOCH - 1:
            txn.producer_id, txn.producer_epoch = self._allocate(), 0
        else:
            txn.producer_epoch += 1

    def add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: Iterable[TopicPartition],
        now: int,
    ) -> ErrorCode:
        txn = self._txns.get(transactional_id)
        fenced = self._fenced(txn, producer_id, producer_epoch)
        if fenced is not None:
            return fenced
        assert txn is not None
        if txn.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            return ErrorCode.CONCURRENT_TRANSACTIONS
        self._join(txn, now, TV_1)
        txn.partitions |= set(partitions)
        self._transition(txn, TxnEvent.ADD, now)
        return ErrorCode.NONE

    def verify_partitions(
        self, transactional_id: str, producer_id: int, producer_epoch: int, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, ErrorCode]:
        """Which of `partitions` are in the producer's ongoing transaction (AddPartitionsToTxn's VerifyOnly,
        Kafka's handleVerifyPartitionsInTransaction): NONE for those that are, TRANSACTION_ABORTABLE for
        the others, or one error for all when the producer or the transaction's state is wrong."""
        partitions = list(partitions)
        txn = self._txns.get(transactional_id)
        error: ErrorCode | None = None
        if not transactional_id:
            error = ErrorCode.INVALID_REQUEST
        elif txn is None or txn.producer_id != producer_id:
            error = ErrorCode.INVALID_PRODUCER_ID_MAPPING
        elif txn.producer_epoch != producer_epoch:
            error = ErrorCode.PRODUCER_FENCED
        elif txn.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            error = ErrorCode.CONCURRENT_TRANSACTIONS
        if error is not None:
            return dict.fromkeys(partitions, error)
        assert txn is not None
        return {tp: ErrorCode.NONE if tp in txn.partitions else ErrorCode.TRANSACTION_ABORTABLE for tp in partitions}

    def add_offsets(
        self, transactional_id: str, producer_id: int, producer_epoch: int, group_id: str, now: int
    ) -> ErrorCode:
        txn = self._txns.get(transactional_id)
        fenced = self._fenced(txn, producer_id, producer_epoch)
        if fenced is not None:
            return fenced
        assert txn is not None
        self._join(txn, now, TV_1)
        txn.groups.add(group_id)
        self._transition(txn, TxnEvent.ADD, now)
        return ErrorCode.NONE

    def check_offset_commit(
        self, transactional_id: str, producer_id: int, producer_epoch: int, group_id: str, now: int, add: bool = False
    ) -> ErrorCode:
        """May TxnOffsetCommit stage offsets of `group_id`? Before v5 the group must be in the ongoing
        transaction (AddOffsetsToTxn); from v5 (`add`, transactions V2) it joins it, starting one if needed."""
        txn = self._txns.get(transactional_id)
        fenced = self._fenced(txn, producer_id, producer_epoch)
        if fenced is not None:
            return fenced
        assert txn is not None
        if add:
            if txn.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
                return ErrorCode.CONCURRENT_TRANSACTIONS
            if txn.state is not TxnState.ONGOING or group_id not in txn.groups or txn.client_version != TV_2:
                self._join(txn, now)
                txn.groups.add(group_id)
                self._transition(txn, TxnEvent.ADD, now)
            return ErrorCode.NONE
        if txn.state is not TxnState.ONGOING or group_id not in txn.groups:
            return ErrorCode.INVALID_TXN_STATE
        return ErrorCode.NONE

    def end(
        self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool, now: int, v2: bool = False
    ) -> tuple[list[Marker], set[str]]:
        """EndTxn: the markers to write and the groups whose pending offsets to commit (or drop). `v2`:
        an EndTxn v5 (transactions V2), whose rules are `_end_v2`'s."""
        if v2:
            return self._end_v2(transactional_id, producer_id, producer_epoch, commit, now)
        txn = self._txns.get(transactional_id)
        fenced = self._fenced(txn, producer_id, producer_epoch)
        if fenced is not None:
            raise KafkaError(fenced)
        assert txn is not None
        done = TxnState.COMPLETE_COMMIT if commit else TxnState.COMPLETE_ABORT
        if txn.state is done:
            return [], set()  # a retried EndTxn
        if txn.state is TxnState.EMPTY and not commit:
            return [], set()
        if txn.state is not TxnState.ONGOING:
            raise KafkaError(ErrorCode.INVALID_TXN_STATE, f"transaction is {txn.state.kafka_name}")
        groups = set(txn.groups)
        txn.client_version = TV_1
        if commit:
            self._transition(txn, TxnEvent.COMMIT, now)
            return self.markers(txn), groups
        return self._prepare_abort(txn, now), groups

    def _end_v2(
        self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool, now: int
    ) -> tuple[list[Marker], set[str]]:
        """EndTxn v5, as Kafka's TransactionCoordinator.endTransaction with TV_2: the epoch must be the
        current one (PRODUCER_FENCED otherwise), except for a retry of the EndTxn that completed the last
        transaction, which sent the epoch before that one's bump (or, when that bump exhausted the epoch,
        the previous producer id at the last epoch): the same direction succeeds again, the other is
        INVALID_TXN_STATE. An ongoing transaction prepares with the epoch bumped; with none ongoing an
        abort still bumps it (a Prepare and Complete with no markers), a commit is INVALID_TXN_STATE."""
        txn = self._txns.get(transactional_id)
        if not transactional_id:
            raise KafkaError(ErrorCode.INVALID_REQUEST)
        if txn is None:
            raise KafkaError(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        completed = txn.state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)
        retry = (
            completed
            and txn.client_version == TV_2
            and (
                (txn.producer_id == producer_id and txn.producer_epoch == producer_epoch + 1)
                or (
                    txn.previous_producer_id == producer_id
                    and producer_epoch == MAX_EPOCH - 1
                    and txn.producer_epoch == 0
                )
            )
        )
        if txn.producer_id != producer_id and not retry:
            raise KafkaError(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        if not retry and producer_epoch != txn.producer_epoch:
            raise KafkaError(ErrorCode.PRODUCER_FENCED)
        if txn.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            raise KafkaError(ErrorCode.CONCURRENT_TRANSACTIONS)
        if retry:
            if (txn.state is TxnState.COMPLETE_COMMIT) != commit:
                raise KafkaError(ErrorCode.INVALID_TXN_STATE, f"transaction is {txn.state.kafka_name}")
            return [], set()
        if txn.state is not TxnState.ONGOING and commit:
            raise KafkaError(ErrorCode.INVALID_TXN_STATE, f"transaction is {txn.state.kafka_name}")
        groups = set(txn.groups)
        txn.client_version = TV_2
        if txn.producer_epoch >= MAX_EPOCH - 1:  # the markers take the last epoch; then a new producer id
            txn.next_producer_id = self._allocate()
        txn.producer_epoch += 1
        if txn.state is not TxnState.ONGOING:
            txn.state = TxnState.ONGOING  # an empty abort: Prepare and Complete with no partitions
            txn.started_ms = now
        self._transition(txn, TxnEvent.COMMIT if commit else TxnEvent.ABORT, now)
        return self.markers(txn), groups

    def _prepare_abort(self, txn: TxnMetadata, now: int) -> list[Marker]:
        self._transition(txn, TxnEvent.ABORT, now)
        return self.markers(txn)

    @staticmethod
    def markers(txn: TxnMetadata) -> list[Marker]:
        commit = txn.state is TxnState.PREPARE_COMMIT
        return [Marker(tp, txn.producer_id, txn.producer_epoch, commit) for tp in sorted(txn.partitions)]

    def complete(self, transactional_id: str, now: int) -> None:
        """Every marker of a Prepare* transaction is written: it completes (recorded after the markers)."""
        txn = self._txns[transactional_id]
        txn.partitions = set()
        txn.groups = set()
        if txn.next_producer_id >= 0:  # a TV2 bump exhausted the epoch: the producer moves to its new id
            txn.previous_producer_id, txn.producer_id = txn.producer_id, txn.next_producer_id
            txn.producer_epoch, txn.next_producer_id = 0, -1
        self._transition(txn, TxnEvent.MARKERS_WRITTEN, now)

    def pending_completion(self) -> list[TxnMetadata]:
        """Transactions loaded in a Prepare state: their markers must be (re)written."""
        return [t for t in self._txns.values() if t.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT)]

    def expire(self, now: int) -> list[tuple[TxnMetadata, list[Marker]]]:
        """Abort every transaction open longer than its timeout; the epoch is bumped to fence it."""
        aborted = []
        for txn in self._txns.values():
            if txn.state is TxnState.ONGOING and now - txn.started_ms >= txn.timeout_ms:
                self._bump_epoch(txn)  # fence the producer: the markers carry the new epoch
                aborted.append((txn, self._prepare_abort(txn, now)))
        return aborted

    def expire_transactional_ids(self, now: int, expiration_ms: int) -> list[str]:
        """transactional.id.expiration.ms: forget transactional ids idle that long with no transaction
        in flight (Empty, CompleteCommit, CompleteAbort, as Kafka allows), with a tombstone in the
        transaction log; a producer that returns with one is a new producer to the coordinator."""
        expired = [t for t in self._txns.values() if t.state in _EXPIRABLE and now - t.updated_ms >= expiration_ms]
        for txn in expired:
            del self._txns[txn.transactional_id]
            if self._by_producer.get(txn.producer_id) is txn:
                del self._by_producer[txn.producer_id]
            self._remove(txn.transactional_id)
        return [t.transactional_id for t in expired]

    def next_deadline(self) -> int | None:
        return min(
            (t.started_ms + t.timeout_ms for t in self._txns.values() if t.state is TxnState.ONGOING), default=None
        )
