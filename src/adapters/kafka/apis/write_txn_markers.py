"""WriteTxnMarkers (key 27): v1-2, as Kafka 4.2 serves it (v0 was removed in 4.0). What a transaction
coordinator sends partition leaders to end a transaction; with one broker trafka's coordinator writes
its markers itself, so this serves `Admin.abortTransaction` and `kafka-transactions abort`, which send
an abort marker for a hanging transaction (a producer that added a partition and died) to the partition
leader: the marker is written, the transaction leaves the aborted index's reader and the last stable
offset moves. The transaction coordinator's state is left as it is, as Kafka leaves it.

Each marker is written to each of its partitions, checked against the producer's epoch there (v2's
TransactionVersion, KIP-1228: a TV2 marker's epoch must be newer than the partition's, an older
version's at least as new; INVALID_PRODUCER_EPOCH otherwise); an unknown partition is
UNKNOWN_TOPIC_OR_PARTITION. Answered per producer id, per topic, per partition.

Authorization: ALTER on the cluster, else CLUSTER_ACTION on the cluster, as Kafka's
handleWriteTxnMarkersRequest; refused, every partition answers CLUSTER_AUTHORIZATION_FAILED.

Version notes:
(v0 was removed in Kafka 4.0)
- v1: flexible versions.
- v2: each marker's TransactionVersion (KIP-1228).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import WriteTxnMarkersRequest, WriteTxnMarkersResponse

from ..api import KafkaApi
from ..connection.cluster import refuse_unless_leader
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, the_cluster

if TYPE_CHECKING:
    from collections.abc import Callable

    from trafka.domain.replica_manager import ReplicaManager

    from ..runtime.purgatory import Purgatory


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    replicas: ReplicaManager
    clock_ms: Callable[[], int]
    appends: Purgatory


Result = WriteTxnMarkersResponse.WritableTxnMarkerResult
TopicResult = Result.WritableTxnMarkerTopicResult
PartitionResult = TopicResult.WritableTxnMarkerPartitionResult


def handle_write_txn_markers(
    ctx: Uses, request: WriteTxnMarkersRequest, version: int, client: ClientInfo
) -> WriteTxnMarkersResponse:
    now = ctx.clock_ms()
    results: dict[int, dict[str, dict[int, int]]] = {}  # Kafka answers per producer id, merged
    written: list[TopicPartition] = []
    for marker in request.markers:
        transaction_version = marker.transaction_version if version >= 2 else 0
        by_topic = results.setdefault(marker.producer_id, {})
        for topic in marker.topics:
            errors = by_topic.setdefault(topic.name, {})
            for index in topic.partition_indexes:
                tp = TopicPartition(topic.name, index)
                error = ctx.replicas.write_marker(
                    tp,
                    marker.producer_id,
                    marker.producer_epoch,
                    marker.transaction_result,
                    now,
                    transaction_version=transaction_version,
                )
                errors[index] = error
                if error is ErrorCode.NONE:
                    written.append(tp)
    if written:
        ctx.appends.notify(written)  # the last stable offset moved: read_committed fetches wake
    return _response(version, results)


def marker_partitions(body: Any, ctx: Uses) -> list[TopicPartition]:
    """The simulated cluster's leader check: Kafka's transaction coordinator sends each partition's
    leader the markers for its own partitions (and Admin.abortTransaction the partition's leader)."""
    return [
        TopicPartition(topic.name, partition)
        for marker in body.markers or ()
        for topic in marker.topics or ()
        for partition in topic.partition_indexes or ()
    ]


def _response(version: int, results: dict[int, dict[str, dict[int, int]]]) -> WriteTxnMarkersResponse:
    return WriteTxnMarkersResponse(
        version=version,
        markers=[
            Result(
                producer_id=producer_id,
                topics=[
                    TopicResult(
                        name=name,
                        partitions=[
                            PartitionResult(partition_index=index, error_code=error) for index, error in errors.items()
                        ],
                    )
                    for name, errors in topics.items()
                ],
            )
            for producer_id, topics in results.items()
        ],
    )


def _refusal(api: KafkaApi, request: Any, version: int, error: int) -> Any:
    """Kafka's WriteTxnMarkersRequest.getErrorResponse: every partition of every marker with the error."""
    results: dict[int, dict[str, dict[int, int]]] = {}
    for marker in request.markers:
        for topic in marker.topics:
            results.setdefault(marker.producer_id, {}).setdefault(topic.name, {}).update(
                dict.fromkeys(topic.partition_indexes, error)
            )
    return _response(version, results)


API = KafkaApi(
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
    (1, 2),
    handle_write_txn_markers,
    authorization=Checks((Check(Res.CLUSTER, Op.CLUSTER_ACTION, the_cluster, cluster_grants=Op.ALTER),)),
    refusal=_refusal,
    read_only=False,
    cluster=refuse_unless_leader(marker_partitions),
)
