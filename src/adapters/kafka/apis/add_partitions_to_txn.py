"""AddPartitionsToTxn (key 24): v0-5. Partitions joining a producer's transaction.

v0-3 are the clients' (one transaction). v4-5 are what a partition leader sends the transaction
coordinator (KIP-890 part 1): a batch of transactions, each either added or, with VerifyOnly, checked
(Kafka's handleVerifyPartitionsInTransaction: a partition not in the ongoing transaction is
TRANSACTION_ABORTABLE, INVALID_TXN_STATE at v4 which predates that code); answered per transaction.
trafka's own produce path never sends them (one broker is leader and coordinator), but they are
served as Kafka 4.2 serves them, to whoever holds CLUSTER_ACTION.

Authorization: v0-3, WRITE on the transactional id (a refusal answers every partition), then WRITE
per topic, internal topics refused; Kafka adds nothing when any partition fails: refused ones get
TOPIC_AUTHORIZATION_FAILED, absent ones UNKNOWN_TOPIC_OR_PARTITION, the others OPERATION_NOT_ATTEMPTED.
v4-5, CLUSTER_ACTION on the cluster (brokers only); refused, the top-level error.

Version notes:
- v2: PRODUCER_FENCED in place of INVALID_PRODUCER_EPOCH.
- v3: flexible versions.
- v4: batches of transactions and VerifyOnly, for brokers only (KIP-890); clients stay on v3.
- v5: TRANSACTION_ABORTABLE (KIP-890).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
)

from ..api import KafkaApi
from ..cluster import TRANSACTION
from ..connection.cluster import refuse_unless_coordinator
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, request_field, the_cluster, topic_names
from ..security.partial import (
    TOPIC_REFUSED,
    TOPICS,
    PartialAnswer,
    Refused,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from trafka.domain.catalog import TopicCatalog
    from trafka.domain.transactions import TransactionService


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    transactions: TransactionService
    clock_ms: Callable[[], int]


TopicResult = AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult


BATCHED_FROM = 4


def _batch_results(ctx: Uses, request: AddPartitionsToTxnRequest, version: int) -> list[Any]:
    """v4-5: each transaction of the batch added or verified, its partitions' errors."""
    Result = AddPartitionsToTxnResponse.AddPartitionsToTxnResult
    results = []
    for txn in request.transactions:
        partitions = [TopicPartition(t.name, p) for t in txn.topics for p in t.partitions]
        if txn.verify_only:
            errors = ctx.transactions.coordinator.verify_partitions(
                txn.transactional_id, txn.producer_id, txn.producer_epoch, partitions
            )
        else:
            errors = ctx.transactions.add_partitions(
                txn.transactional_id, txn.producer_id, txn.producer_epoch, partitions, ctx.clock_ms()
            )
        if version < 5:  # TRANSACTION_ABORTABLE is v5's
            errors = {
                tp: ErrorCode.INVALID_TXN_STATE if e is ErrorCode.TRANSACTION_ABORTABLE else e
                for tp, e in errors.items()
            }
        results.append(
            Result(
                transactional_id=txn.transactional_id,
                topic_results=[
                    TopicResult(
                        name=t.name,
                        results_by_partition=[
                            TopicResult.AddPartitionsToTxnPartitionResult(
                                partition_index=p, partition_error_code=errors[TopicPartition(t.name, p)]
                            )
                            for p in t.partitions
                        ],
                    )
                    for t in txn.topics
                ],
            )
        )
    return results


def handle_add_partitions_to_txn(
    ctx: Uses, request: AddPartitionsToTxnRequest, version: int, client: ClientInfo
) -> AddPartitionsToTxnResponse:
    if version >= BATCHED_FROM:
        return AddPartitionsToTxnResponse(
            version=version,
            throttle_time_ms=0,
            error_code=ErrorCode.NONE,
            results_by_transaction=_batch_results(ctx, request, version),
        )
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


def _partial(r: Refused) -> Any:
    """Kafka adds nothing when any partition fails: every partition gets an error, none is added."""
    Topic = r.handler.response.AddPartitionsToTxnTopicResult
    Partition = Topic.AddPartitionsToTxnPartitionResult
    denied = r.topics()
    results = []
    for t in r.body.v3_and_below_topics:
        topic = r.uses.catalog.get(t.name)
        errors = []
        for p in t.partitions:
            if t.name in denied:
                errors.append(Partition(partition_index=p, partition_error_code=TOPIC_REFUSED))
            elif topic is None or not 0 <= p < topic.partition_count:
                errors.append(Partition(partition_index=p, partition_error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            else:
                errors.append(Partition(partition_index=p, partition_error_code=ErrorCode.OPERATION_NOT_ATTEMPTED))
        results.append(Topic(name=t.name, results_by_partition=errors))
    return r.response(results_by_topic_v3_and_below=results)


def _refusal(handler: Any, body: Any, version: int, error: int) -> Any:
    """AddPartitionsToTxn v0-3 refused for its transactional id: every partition carries the error;
    v4-5, the top-level error alone."""
    if version >= BATCHED_FROM:
        return handler.response(version=version, throttle_time_ms=0, error_code=error, results_by_transaction=[])
    Topic = handler.response.AddPartitionsToTxnTopicResult
    Partition = Topic.AddPartitionsToTxnPartitionResult
    return handler.response(
        version=version,
        throttle_time_ms=0,
        results_by_topic_v3_and_below=[
            Topic(
                name=t.name,
                results_by_partition=[Partition(partition_index=p, partition_error_code=error) for p in t.partitions],
            )
            for t in body.v3_and_below_topics
        ],
    )


def _the_cluster_from_v4(request: Any, version: int, ctx: Any) -> list[str]:
    return the_cluster(request, version, ctx) if version >= BATCHED_FROM else []


def _transactional_ids(body: Any, version: int) -> list[tuple[str, int]]:
    """The simulated cluster's coordinator check: the batch's transactional ids (v4+), or the one."""
    transactions = getattr(body, "transactions", None)
    if transactions:  # v4+: a broker's batch, several transactional ids
        return [(t.transactional_id, TRANSACTION) for t in transactions]
    transactional_id = getattr(body, "v3_and_below_transactional_id", None)
    return [] if transactional_id is None else [(transactional_id, TRANSACTION)]


API = KafkaApi(
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    (0, 5),
    handle_add_partitions_to_txn,
    authorization=Checks(
        (
            Check(Res.CLUSTER, Op.CLUSTER_ACTION, _the_cluster_from_v4),
            Check(Res.TRANSACTIONAL_ID, Op.WRITE, request_field("v3_and_below_transactional_id")),
            Check(Res.TOPIC, Op.WRITE, topic_names("v3_and_below_topics"), internal_refused=True),
        ),
        PartialAnswer(TOPICS, _partial),
    ),
    refusal=_refusal,
    read_only=False,
    cluster=refuse_unless_coordinator(_transactional_ids),
)
