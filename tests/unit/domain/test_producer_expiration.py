"""producer.id.expiration.ms, as Kafka's ProducerStateManager applies it: idle producers without an
open transaction are forgotten, their snapshot entries with them, and one that comes back is taken as
new (any sequence accepted, as Kafka accepts it when it has no record of the producer)."""

from __future__ import annotations

import crc32c

from tests.batches import make_batch
from trafka.adapters.compression import decompress
from trafka.adapters.memory import MemoryCatalogStore, MemoryLogStore
from trafka.domain.batch import BatchHeader
from trafka.domain.catalog import TopicCatalog
from trafka.domain.configs import BrokerPolicy
from trafka.domain.errors import ErrorCode
from trafka.domain.producers import PartitionProducerState
from trafka.domain.replica_manager import ReplicaManager
from trafka.domain.topics import TopicPartition

DAY = 86_400_000
TP = TopicPartition("t", 0)


def _replicas() -> ReplicaManager:
    import uuid

    logs = MemoryLogStore()
    policy = BrokerPolicy(node_id=1, cluster_id="c")
    catalog = TopicCatalog(MemoryCatalogStore(), logs, policy, uuid.uuid4)
    catalog.create("t", 1, 1, {"retention.ms": "-1"})
    return ReplicaManager(catalog, logs, policy, crc32c.crc32c, decompress)


def _produce(replicas, producer_id: int, sequence: int, timestamp: int, transactional: bool = False):
    batch = make_batch(
        [(timestamp, None, b"v")],
        producer_id=producer_id,
        producer_epoch=0,
        base_sequence=sequence,
        transactional=transactional,
    )
    return replicas.produce(TP, batch, timestamp, "tx" if transactional else None)


def test_idle_producers_are_forgotten_and_one_that_returns_starts_afresh():
    replicas = _replicas()
    assert _produce(replicas, 1, 0, 1_000).error is ErrorCode.NONE
    assert _produce(replicas, 2, 0, 1_000 + DAY // 2).error is ErrorCode.NONE
    assert _produce(replicas, 1, 5, 2_000).error is ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER  # known: in order
    assert replicas.expire_producers(1_000 + DAY - 1, DAY) == 0
    assert replicas.expire_producers(1_000 + DAY, DAY) == 1
    assert [p.producer_id for p in replicas.active_producers(TP)] == [2]
    # Producer 1 comes back with sequence 5: Kafka has no record of it and accepts any sequence.
    assert _produce(replicas, 1, 5, 2_000 + DAY).error is ErrorCode.NONE


def test_a_producer_with_an_open_transaction_is_kept():
    replicas = _replicas()
    replicas.admission.transaction_check = lambda *args: ErrorCode.NONE
    assert _produce(replicas, 3, 0, 1_000, transactional=True).error is ErrorCode.NONE
    assert replicas.expire_producers(1_000 + 30 * DAY, DAY) == 0


def test_state_stays_bounded_under_a_month_of_churning_producers():
    """100,000 producers, each writing once, spread over 30 simulated days, with the expiration check
    every 10 minutes: the partition never remembers more than a day and one check interval's worth
    (the bound: 100,000 / 30 per day, plus 1%). Fed batch headers directly: the state is what grows."""
    state = PartitionProducerState()
    check_every = 600_000
    next_check = check_every
    largest = 0
    for n in range(100_000):
        now = n * (30 * DAY // 100_000)
        state.record(BatchHeader(n, 100, 0, 2, 0, 0, 0, now, now, 1_000 + n, 0, 0, 1))
        if now >= next_check:  # the state is largest just before a check
            largest = max(largest, len(state.producers))
            state.expire(now, DAY)
            next_check = now + check_every
    per_day = 100_000 // 30
    assert per_day <= largest <= per_day + per_day // 100 + 10
    assert len(state.snapshot()) == len(state.producers) <= largest
