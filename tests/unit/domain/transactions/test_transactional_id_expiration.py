"""transactional.id.expiration.ms: idle transactional ids with nothing in flight are forgotten, with a
tombstone in `__transaction_state`, and stay forgotten after a restart; ongoing ones are kept."""

from __future__ import annotations

import uuid

import crc32c

from trafka.adapters.filesystem import FileLogStore, FileTransactionStore, InternalLog, LogDir
from trafka.adapters.memory import MemoryTransactionStore
from trafka.domain.producers import ProducerIdAllocator
from trafka.domain.topics import TopicPartition
from trafka.domain.transactions import TransactionCoordinator, TxnState

WEEK = 7 * 24 * 3_600_000


def _coordinator(store) -> TransactionCoordinator:
    allocator = ProducerIdAllocator(0, lambda start, end: None)
    return TransactionCoordinator(allocator.allocate, store.record, store.load(), remove=store.remove)


def test_idle_ids_expire_and_ongoing_ones_stay():
    store = MemoryTransactionStore()
    coordinator = _coordinator(store)
    coordinator.init_producer_id("idle", 60_000, 0)
    coordinator.init_producer_id("busy", 60_000, 0)
    busy = coordinator.get("busy")
    busy.state = TxnState.ONGOING
    assert coordinator.expire_transactional_ids(WEEK - 1, WEEK) == []
    assert coordinator.expire_transactional_ids(WEEK, WEEK) == ["idle"]
    assert coordinator.get("idle") is None and coordinator.get("busy") is busy
    assert [t.transactional_id for t in store.load()] == ["busy"]


def test_an_expired_id_stays_forgotten_after_a_restart(tmp_path):
    logdir = LogDir.open(str(tmp_path / "logs"), 1, uuid.UUID(int=1), uuid.UUID(int=2))
    logs = FileLogStore(logdir, crc32c.crc32c, lambda: 0)
    tp = TopicPartition("__transaction_state", 0)
    store = FileTransactionStore(InternalLog(logs, tp, uuid.UUID(int=3), crc32c.crc32c, lambda: 0))
    coordinator = _coordinator(store)
    for n in range(50):
        coordinator.init_producer_id(f"txn-{n}", 60_000, n)
    assert len(coordinator.expire_transactional_ids(49 + WEEK, WEEK)) == 50
    again = FileTransactionStore(InternalLog(logs, tp, uuid.UUID(int=3), crc32c.crc32c, lambda: 0))
    assert again.load() == []
    logs.close()
    logdir.unlock()
