"""`__transaction_state` values as Kafka 4.2 writes them: TransactionLogValue v1 (flexible, the tagged
PreviousProducerId, NextProducerId and ClientTransactionVersion) while `transaction.version` 1+ is
finalized, v0 at 0; both read back, so a log dir moves between trafka and Kafka with its transactions."""

from __future__ import annotations

import struct
import uuid

import crc32c

from trafka.adapters.filesystem import FileLogStore, FileTransactionStore, InternalLog, LogDir
from trafka.adapters.filesystem.metadata_records import TransactionLogValue, decode_versioned
from trafka.domain.topics import TopicPartition
from trafka.domain.transactions import TxnMetadata, TxnState

TXN_STATE = TopicPartition("__transaction_state", 0)


def _store(logs: FileLogStore, version: int) -> FileTransactionStore:
    internal = InternalLog(logs, TXN_STATE, uuid.UUID(int=3), crc32c.crc32c, lambda: 0)
    return FileTransactionStore(internal, lambda: version)


def test_v1_values_carry_the_client_version_and_producer_ids_and_read_back(tmp_path):
    logdir = LogDir.open(str(tmp_path / "logs"), 1, uuid.UUID(int=1), uuid.UUID(int=2))
    logs = FileLogStore(logdir, crc32c.crc32c, lambda: 0)
    store = _store(logs, 1)
    v2 = TxnMetadata("tv2", 7, 32767, 60_000, TxnState.PREPARE_COMMIT, {TopicPartition("t", 0)}, set(), 5, 6)
    v2.client_version, v2.previous_producer_id, v2.next_producer_id = 2, 3, 8
    store.record(v2)
    store_v0 = _store(logs, 0)
    v1 = TxnMetadata("tv1", 9, 4, 60_000, TxnState.COMPLETE_ABORT, set(), set(), 5, 6)
    store_v0.record(v1)
    loaded = {t.transactional_id: t for t in _store(logs, 1).load()}
    assert loaded["tv2"] == v2
    assert loaded["tv1"] == v1
    values = [
        value for _, _, value in InternalLog(logs, TXN_STATE, uuid.UUID(int=3), crc32c.crc32c, lambda: 0).records()
    ]
    assert [struct.unpack(">h", bytes(value[:2]))[0] for value in values] == [1, 0]
    # Kafka's layout of v1: the fixed fields, then the tagged ones in tag order
    # (0 PreviousProducerId int64, 1 NextProducerId int64, 2 ClientTransactionVersion int16).
    tagged = bytes(values[0])[-(1 + 3 * 2 + 8 + 8 + 2) :]
    assert tagged == bytes([3, 0, 8]) + struct.pack(">q", 3) + bytes([1, 8]) + struct.pack(">q", 8) + bytes(
        [2, 2]
    ) + struct.pack(">h", 2)
    logs.close()
    logdir.unlock()


def test_partitions_as_kafka_lists_them_null_when_empty_and_the_groups_offsets_partition(tmp_path):
    """Kafka's TransactionLog.valueToBytes: an Empty transaction's partitions are null; a group's staged
    offsets put its `__consumer_offsets` partition in the transaction. Read back, that partition is
    dropped: trafka writes no marker there as data (the offsets end by producer id)."""
    logdir = LogDir.open(str(tmp_path / "logs"), 1, uuid.UUID(int=1), uuid.UUID(int=2))
    logs = FileLogStore(logdir, crc32c.crc32c, lambda: 0)
    store = _store(logs, 1)
    store.record(TxnMetadata("empty", 7, 0, 60_000, TxnState.EMPTY, set(), set(), -1, 6))
    data = TopicPartition("t", 1)
    store.record(TxnMetadata("copier", 8, 0, 60_000, TxnState.ONGOING, {data}, {"g"}, 5, 6))
    store.record(TxnMetadata("offsets-only", 9, 0, 60_000, TxnState.ONGOING, set(), {"g"}, 5, 6))
    internal = InternalLog(logs, TXN_STATE, uuid.UUID(int=3), crc32c.crc32c, lambda: 0)
    values = [decode_versioned(TransactionLogValue, value) for _, _, value in internal.records()]
    listed = [
        None if v.transaction_partitions is None else [(p.topic, p.partition_ids) for p in v.transaction_partitions]
        for v in values
    ]
    assert listed == [None, [("__consumer_offsets", [0]), ("t", [1])], [("__consumer_offsets", [0])]]
    loaded = {t.transactional_id: t for t in store.load()}
    assert loaded["empty"].partitions == set()
    assert loaded["copier"].partitions == {data}
    assert loaded["offsets-only"].partitions == set()
    logs.close()
    logdir.unlock()
