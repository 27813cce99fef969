"""The transaction APIs: AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn,
DescribeTransactions, ListTransactions and DescribeProducers.

This broker is every transactional id's coordinator and every partition's leader, so EndTxn writes
the markers itself before it answers.
"""

from __future__ import annotations

from kafka.protocol.admin import (
    DescribeProducersRequest,
    DescribeProducersResponse,
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
    ListTransactionsRequest,
    ListTransactionsResponse,
)
from kafka.protocol.producer import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)

from trafka.domain.errors import ErrorCode
from trafka.domain.groups import CommittedOffset
from trafka.domain.topics import TopicPartition
from trafka.domain.transactions import TxnState as TxnStates

from ..api import HandlerRegistry
from ..context import BrokerContext, ClientInfo

TopicResult = AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult


def handle_add_partitions_to_txn(
    ctx: BrokerContext, request: AddPartitionsToTxnRequest, version: int, client: ClientInfo
) -> AddPartitionsToTxnResponse:
    partitions = [TopicPartition(t.name, p) for t in request.v3_and_below_topics for p in t.partitions]
    errors = ctx.transactions.add_partitions(
        request.v3_and_below_transactional_id,
        request.v3_and_below_producer_id,
        request.v3_and_below_producer_epoch,
        partitions,
        ctx.clock_ms(),
    )
    return AddPartitionsToTxnResponse(
        version=version,
        throttle_time_ms=0,
        results_by_topic_v3_and_below=[
            TopicResult(
                name=t.name,
                results_by_partition=[
                    TopicResult.AddPartitionsToTxnPartitionResult(
                        partition_index=p, partition_error_code=errors[TopicPartition(t.name, p)]
                    )
                    for p in t.partitions
                ],
            )
            for t in request.v3_and_below_topics
        ],
    )


def handle_add_offsets_to_txn(
    ctx: BrokerContext, request: AddOffsetsToTxnRequest, version: int, client: ClientInfo
) -> AddOffsetsToTxnResponse:
    error = ctx.transactions.add_offsets(
        request.transactional_id, request.producer_id, request.producer_epoch, request.group_id, ctx.clock_ms()
    )
    return AddOffsetsToTxnResponse(version=version, throttle_time_ms=0, error_code=error)


CommitTopic = TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic


def handle_txn_offset_commit(
    ctx: BrokerContext, request: TxnOffsetCommitRequest, version: int, client: ClientInfo
) -> TxnOffsetCommitResponse:
    offsets = {
        TopicPartition(t.name, p.partition_index): CommittedOffset(
            p.committed_offset, p.committed_leader_epoch if version >= 2 else -1, p.committed_metadata
        )
        for t in request.topics
        for p in t.partitions
    }
    fencing = ErrorCode.NONE
    if version >= 3 and request.generation_id >= 0:  # a group member's commit: its generation must be current
        fencing = ctx.groups.coordinator.validate_offset_commit(
            request.group_id, request.member_id, request.generation_id, ctx.clock_ms(), request.group_instance_id
        )
    if fencing is not ErrorCode.NONE:
        errors = dict.fromkeys(offsets, fencing)
    else:
        errors = ctx.transactions.txn_offset_commit(
            request.transactional_id,
            request.group_id,
            request.producer_id,
            request.producer_epoch,
            offsets,
            ctx.clock_ms(),
        )
    return TxnOffsetCommitResponse(
        version=version,
        throttle_time_ms=0,
        topics=[
            CommitTopic(
                name=t.name,
                partitions=[
                    CommitTopic.TxnOffsetCommitResponsePartition(
                        partition_index=p.partition_index, error_code=errors[TopicPartition(t.name, p.partition_index)]
                    )
                    for p in t.partitions
                ],
            )
            for t in request.topics
        ],
    )


def handle_end_txn(ctx: BrokerContext, request: EndTxnRequest, version: int, client: ClientInfo) -> EndTxnResponse:
    error = ctx.transactions.end(
        request.transactional_id, request.producer_id, request.producer_epoch, request.committed, ctx.clock_ms()
    )
    ctx.appends.notify_all()  # markers move the last stable offset: read_committed fetches wake
    return EndTxnResponse(version=version, throttle_time_ms=0, error_code=error)


TxnState = DescribeTransactionsResponse.TransactionState


def handle_describe_transactions(
    ctx: BrokerContext, request: DescribeTransactionsRequest, version: int, client: ClientInfo
) -> DescribeTransactionsResponse:
    states = []
    for txn_id in request.transactional_ids:
        txn = ctx.transactions.coordinator.get(txn_id)
        if txn is None:
            states.append(
                TxnState(
                    error_code=ErrorCode.TRANSACTIONAL_ID_NOT_FOUND,
                    transactional_id=txn_id,
                    transaction_state="",
                    transaction_timeout_ms=0,
                    transaction_start_time_ms=-1,
                    producer_id=-1,
                    producer_epoch=-1,
                    topics=[],
                )
            )
            continue
        by_topic: dict[str, list[int]] = {}
        for tp in sorted(txn.partitions):
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        states.append(
            TxnState(
                error_code=ErrorCode.NONE,
                transactional_id=txn_id,
                transaction_state=txn.state.kafka_name,
                transaction_timeout_ms=txn.timeout_ms,
                transaction_start_time_ms=txn.started_ms,
                producer_id=txn.producer_id,
                producer_epoch=txn.producer_epoch,
                topics=[TxnState.TopicData(topic=t, partitions=ps) for t, ps in by_topic.items()],
            )
        )
    return DescribeTransactionsResponse(version=version, throttle_time_ms=0, transaction_states=states)


def handle_list_transactions(
    ctx: BrokerContext, request: ListTransactionsRequest, version: int, client: ClientInfo
) -> ListTransactionsResponse:
    names = {s.kafka_name for s in TxnStates}
    wanted = set(request.state_filters or [])
    pids = set(request.producer_id_filters or [])
    now = ctx.clock_ms()
    listed = [
        ListTransactionsResponse.TransactionState(
            transactional_id=t.transactional_id, producer_id=t.producer_id, transaction_state=t.state.kafka_name
        )
        for t in ctx.transactions.coordinator.all()
        if (not wanted or t.state.kafka_name in wanted)
        and (not pids or t.producer_id in pids)
        and (
            version < 1
            or request.duration_filter < 0
            or (t.started_ms >= 0 and now - t.started_ms >= request.duration_filter)
        )
    ]
    return ListTransactionsResponse(
        version=version,
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        unknown_state_filters=sorted(wanted - names),
        transaction_states=listed,
    )


ProducersTopic = DescribeProducersResponse.TopicResponse


def handle_describe_producers(
    ctx: BrokerContext, request: DescribeProducersRequest, version: int, client: ClientInfo
) -> DescribeProducersResponse:
    topics = []
    for topic in request.topics:
        partitions = []
        for index in topic.partition_indexes:
            active = ctx.replicas.active_producers(TopicPartition(topic.name, index))
            partitions.append(
                ProducersTopic.PartitionResponse(
                    partition_index=index,
                    error_code=ErrorCode.NONE if active is not None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    error_message=None,
                    active_producers=[
                        ProducersTopic.PartitionResponse.ProducerState(
                            producer_id=p.producer_id,
                            producer_epoch=p.epoch,
                            last_sequence=p.last_sequence if p.last_sequence is not None else -1,
                            last_timestamp=p.batches[-1].max_timestamp if p.batches else -1,
                            coordinator_epoch=0,
                            current_txn_start_offset=p.current_txn_first_offset
                            if p.current_txn_first_offset is not None
                            else -1,
                        )
                        for p in active or []
                    ],
                )
            )
        topics.append(ProducersTopic(name=topic.name, partitions=partitions))
    return DescribeProducersResponse(version=version, throttle_time_ms=0, topics=topics)


def register(registry: HandlerRegistry) -> None:
    registry.register(AddPartitionsToTxnRequest, AddPartitionsToTxnResponse, (0, 3), handle_add_partitions_to_txn)
    registry.register(AddOffsetsToTxnRequest, AddOffsetsToTxnResponse, (0, 3), handle_add_offsets_to_txn)
    registry.register(TxnOffsetCommitRequest, TxnOffsetCommitResponse, (0, 3), handle_txn_offset_commit)
    registry.register(EndTxnRequest, EndTxnResponse, (0, 3), handle_end_txn)
    registry.register(DescribeTransactionsRequest, DescribeTransactionsResponse, (0, 0), handle_describe_transactions)
    registry.register(ListTransactionsRequest, ListTransactionsResponse, (0, 1), handle_list_transactions)
    registry.register(DescribeProducersRequest, DescribeProducersResponse, (0, 0), handle_describe_producers)
