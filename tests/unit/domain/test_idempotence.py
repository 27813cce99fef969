"""Idempotent producers: duplicates answered with their original offsets, gaps and stale epochs refused."""

from __future__ import annotations

import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.batches import make_batch, read_batches
from tests.unit.conftest import Cluster
from trafka.adapters.compression import decompress
from trafka.domain.batch import BatchHeader
from trafka.domain.errors import ErrorCode
from trafka.domain.producers import (
    MAX_SEQUENCE,
    PartitionProducerState,
    ProducerIdAllocator,
    ProducerSnapshotEntry,
    next_sequence,
)
from trafka.domain.replica_manager import ReplicaManager
from trafka.domain.topics import TopicPartition

TP = TopicPartition("t", 0)
NOW = 1_700_000_000_000


def send(cluster: Cluster, sequence: int, count: int = 2, epoch: int = 0, pid: int = 7):
    records = [(NOW, None, b"%d" % (sequence + i)) for i in range(count)]
    batch = make_batch(records, producer_id=pid, producer_epoch=epoch, base_sequence=sequence)
    return cluster.replicas.produce(TP, batch, NOW)


def fresh() -> Cluster:
    cluster = Cluster()
    cluster.catalog.create("t", 1, 1)
    return cluster


def test_a_retried_batch_gets_its_original_offsets_and_is_not_appended_again():
    cluster = fresh()
    assert send(cluster, 0).base_offset == 0
    assert send(cluster, 2).base_offset == 2
    retry = send(cluster, 0)
    assert (retry.error, retry.base_offset) == (ErrorCode.NONE, 0)
    assert cluster.replicas.watermarks(TP) == (0, 4)


def test_a_gap_is_out_of_order_and_a_stale_epoch_is_invalid():
    cluster = fresh()
    send(cluster, 0)
    assert send(cluster, 5).error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert send(cluster, 0, epoch=1).error == ErrorCode.NONE  # a new epoch starts at 0
    assert send(cluster, 2, epoch=0).error == ErrorCode.INVALID_PRODUCER_EPOCH
    assert send(cluster, 3, epoch=2).error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert cluster.replicas.watermarks(TP) == (0, 4)


def test_only_the_last_five_batches_are_remembered():
    cluster = fresh()
    for i in range(7):
        send(cluster, 2 * i)
    assert send(cluster, 4).base_offset == 4  # still among the last five
    assert send(cluster, 0).error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER  # forgotten


def test_sequences_wrap_at_int32_max():
    assert next_sequence(MAX_SEQUENCE) == 0
    assert next_sequence(MAX_SEQUENCE - 1, 3) == 1
    cluster = fresh()
    assert send(cluster, MAX_SEQUENCE - 1, count=2).error == ErrorCode.NONE
    assert send(cluster, 0, count=1).error == ErrorCode.NONE


def test_producer_state_is_rebuilt_from_the_log():
    cluster = fresh()
    send(cluster, 0)
    send(cluster, 2)
    # A new ReplicaManager over the same logs knows nothing until it reads the batch headers back.
    restarted = ReplicaManager(cluster.catalog, cluster.logs, cluster.policy, crc32c.crc32c, decompress)
    retry = make_batch([(NOW, None, b"2"), (NOW, None, b"3")], producer_id=7, producer_epoch=0, base_sequence=2)
    assert restarted.produce(TP, retry, NOW).base_offset == 2
    assert restarted.watermarks(TP) == (0, 4)


def test_producer_ids_come_from_durably_reserved_blocks():
    reserved = []
    allocator = ProducerIdAllocator(2000, lambda start, end: reserved.append((start, end)))
    ids = [allocator.allocate() for _ in range(1001)]
    assert ids[0] == 2000 and ids[-1] == 3000 and len(set(ids)) == 1001
    assert reserved == [(2000, 3000), (3000, 4000)]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 4)), min_size=1, max_size=40))
def test_no_batch_is_ever_appended_twice(actions):
    """Each step either sends the next batch or retries one of the last five sent."""
    cluster = fresh()
    sent: list[int] = []
    next_seq = 0
    for is_retry, back in actions:
        if is_retry and sent:
            sequence = sent[-1 - min(back, len(sent) - 1, 4)]
            send(cluster, sequence)
        else:
            assert send(cluster, next_seq).error == ErrorCode.NONE
            sent.append(next_seq)
            next_seq += 2
    records = read_batches(cluster.replicas.fetch(TP, 0, 1 << 30, True).records)
    values = [m.value for b in records for m in list(b)]
    assert values == [b"%d" % i for i in range(next_seq)]


def test_a_snapshot_restores_producer_state_and_only_the_tail_is_replayed():
    cluster = fresh()
    send(cluster, 0)
    send(cluster, 2)
    cluster.replicas.snapshot_producers()
    log = cluster.logs.get(TP)
    offset, entries = log.latest_producer_snapshot()
    assert offset == 4 and [(e.producer_id, e.last_sequence, e.last_offset, e.offset_delta) for e in entries] == [
        (7, 3, 3, 1)
    ]
    restarted = ReplicaManager(cluster.catalog, cluster.logs, cluster.policy, crc32c.crc32c, decompress)
    retry = make_batch([(NOW, None, b"2"), (NOW, None, b"3")], producer_id=7, producer_epoch=0, base_sequence=2)
    assert restarted.produce(TP, retry, NOW).base_offset == 2  # the snapshot's last batch
    assert (
        restarted.produce(
            TP, make_batch([(NOW, None, b"9")], producer_id=7, producer_epoch=0, base_sequence=9), NOW
        ).error
        == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    )


def test_a_restored_batch_whose_sequences_wrapped_is_still_recognised_as_a_duplicate():
    # The last batch covered sequences 2^31-2 .. 1 (four records across the wrap) at offsets 10..13.
    state = PartitionProducerState()
    state.restore([ProducerSnapshotEntry(7, 0, 1, 13, 3, NOW, 0, -1)])
    (batch,) = state.producers[7].batches
    assert (batch.first_sequence, batch.last_sequence, batch.first_offset) == (MAX_SEQUENCE - 1, 1, 10)
    retry = make_batch([(NOW, None, b"x")] * 4, producer_id=7, producer_epoch=0, base_sequence=MAX_SEQUENCE - 1)
    assert state.check(BatchHeader.parse(retry)).first_offset == 10
