"""DescribeProducers and DescribeTransactions as Kafka answers them: a producer's `last_timestamp` is
its ProducerStateEntry's, the time of its last batch or transaction marker; a transaction's partitions
include its groups' `__consumer_offsets` partition (`kafka-transactions` prints both)."""

from __future__ import annotations

from kafka.protocol.admin import DescribeProducersRequest

from tests.batches import make_batch
from trafka.adapters.kafka.apis.describe_producers import Uses, handle_describe_producers
from trafka.adapters.kafka.internal_topics import InternalTopics
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition

TP = TopicPartition("t", 0)


def _described(cluster):
    request = DescribeProducersRequest[0](
        topics=[DescribeProducersRequest.TopicRequest(name="t", partition_indexes=[0])]
    )
    response = handle_describe_producers(Uses(cluster.replicas, InternalTopics()), request, 0, ClientInfo("c", "h"))
    return response.topics[0].partitions[0].active_producers


def test_a_producers_last_timestamp_is_its_last_batchs_then_its_markers(cluster):
    cluster.catalog.create("t", 1)
    cluster.replicas.admission.transaction_check = lambda *_: ErrorCode.NONE  # the coordinator is not under test
    batch = make_batch(
        [(1_000, None, b"a"), (1_500, None, b"b")], producer_id=7, producer_epoch=0, base_sequence=0, transactional=True
    )
    assert cluster.replicas.produce(TP, batch, 2_000, "tx").error is ErrorCode.NONE
    (active,) = _described(cluster)
    assert (active.last_timestamp, active.last_sequence, active.current_txn_start_offset) == (1_500, 1, 0)
    # A transactions V2 commit: the marker at the next epoch, which starts the producer's batches anew.
    assert cluster.replicas.write_marker(TP, 7, 1, True, 9_000) is ErrorCode.NONE
    (active,) = _described(cluster)
    assert (active.producer_epoch, active.last_sequence, active.current_txn_start_offset) == (1, -1, -1)
    assert active.last_timestamp == 9_000  # the marker's time, as Kafka's appendEndTxnMarker sets it (was -1)


def test_a_transaction_with_staged_offsets_lists_the_groups_offsets_partition():
    """DescribeTransactions as Kafka answers it: AddOffsetsToTxn (or TxnOffsetCommit v5) puts the group's
    `__consumer_offsets` partition in the transaction (`kafka-transactions describe` lists it)."""
    from types import SimpleNamespace

    from kafka.protocol.admin import DescribeTransactionsRequest

    from trafka.adapters.kafka.apis.describe_transactions import handle_describe_transactions
    from trafka.domain.transactions import TxnMetadata, TxnState

    txn = TxnMetadata("x", 7, 0, 60_000, TxnState.ONGOING, {TopicPartition("t", 1)}, {"g"}, 5, 6)
    ctx = SimpleNamespace(transactions=SimpleNamespace(coordinator={"x": txn}))
    request = DescribeTransactionsRequest[0](transactional_ids=["x"])
    (state,) = handle_describe_transactions(ctx, request, 0, ClientInfo("c", "h")).transaction_states
    assert [(t.topic, t.partitions) for t in state.topics] == [("__consumer_offsets", [0]), ("t", [1])]
