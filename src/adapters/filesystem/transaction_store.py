"""Transaction coordinator state in `__transaction_state-0`, in Kafka's key and value format.

Keys are TransactionLogKey v0 (the transactional id), values TransactionLogValue (producer id and
epoch, timeout, status, partitions, timestamps): v1, the flexible version with the tagged previous and
next producer ids and the client's transaction version (KIP-890), while `transaction.version` 1 or 2 is
finalized, v0 at 0, as Kafka 4.2's TransactionLog.valueToBytes chooses (`value_version`, given by the
composition root). Both are read. Every state change is one record; the latest per transactional id
wins on replay.

As Kafka's, the partitions of an Empty transaction are written null, and a transaction whose offsets a
group stages lists that group's `__consumer_offsets` partition (trafka's one, 0: ADR 64). The group ids
themselves are not in Kafka's value format: on replay the `__consumer_offsets` partitions are dropped
(the staged offsets end by producer id, in the offset store), so no marker is written to them as data.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import groupby

from trafka.domain.topics import TopicPartition
from trafka.domain.transactions import TxnMetadata, TxnState
from trafka.domain.transactions.coordinator import OFFSETS_PARTITION

from .internal_log import InternalLog
from .metadata_records import TransactionLogKey, TransactionLogValue, decode_versioned, encode_versioned


class FileTransactionStore:
    def __init__(self, txn_log: InternalLog, value_version: Callable[[], int] = lambda: 1) -> None:
        self._log = txn_log
        self.value_version = value_version  # the TransactionLogValue version to write: 1 unless TV 0

    def load(self) -> list[TxnMetadata]:
        latest: dict[str, TxnMetadata | None] = {}
        for _, key, value in self._log.records():
            if key is None:
                continue
            txn_id = decode_versioned(TransactionLogKey, key).transactional_id
            if value is None:
                latest[txn_id] = None
                continue
            v = decode_versioned(TransactionLogValue, value)
            partitions = {
                TopicPartition(p.topic, i)
                for p in (v.transaction_partitions or [])
                if p.topic != OFFSETS_PARTITION.topic
                for i in p.partition_ids
            }
            latest[txn_id] = TxnMetadata(
                txn_id,
                v.producer_id,
                v.producer_epoch,
                v.transaction_timeout_ms,
                TxnState(v.transaction_status),
                partitions,
                set(),
                v.transaction_start_timestamp_ms,
                v.transaction_last_update_timestamp_ms,
                client_version=v.client_transaction_version if v.version >= 1 else 0,
                previous_producer_id=v.previous_producer_id if v.version >= 1 else -1,
                next_producer_id=v.next_producer_id if v.version >= 1 else -1,
            )
        return [t for t in latest.values() if t is not None]

    def remove(self, transactional_id: str) -> None:
        self._log.append([(_key(transactional_id), None)])

    def record(self, txn: TxnMetadata) -> None:
        key = _key(txn.transactional_id)
        by_topic = groupby(sorted(txn.listed_partitions()), key=lambda tp: tp.topic)
        version = self.value_version()
        value = TransactionLogValue(
            version=version,
            producer_id=txn.producer_id,
            previous_producer_id=txn.previous_producer_id,
            next_producer_id=txn.next_producer_id,
            producer_epoch=txn.producer_epoch,
            transaction_timeout_ms=txn.timeout_ms,
            transaction_status=int(txn.state),
            transaction_partitions=None
            if txn.state is TxnState.EMPTY
            else [
                TransactionLogValue.PartitionsSchema(topic=topic, partition_ids=[tp.partition for tp in tps])
                for topic, tps in by_topic
            ],
            transaction_last_update_timestamp_ms=txn.updated_ms,
            transaction_start_timestamp_ms=txn.started_ms,
            client_transaction_version=txn.client_version,
        )
        self._log.append([(key, encode_versioned(value, version))])


def _key(transactional_id: str) -> bytes:
    return encode_versioned(TransactionLogKey(version=0, transactional_id=transactional_id), 0)
