"""The response entries of refused resources, built from the request as Kafka's error entries are.

A refused resource is never served, so nothing about it is read: each builder takes the response
class, the request's entry (or the whole request) and the version, and answers every partition or key
it names with the error and the "unknown" values Kafka puts beside one (-1 offsets and high
watermarks, no records, no producers, no node).
"""

from __future__ import annotations

from typing import Any

from trafka.domain.errors import ErrorCode

TOPIC_REFUSED = ErrorCode.TOPIC_AUTHORIZATION_FAILED
MESSAGES = {  # Kafka's Errors.message() of each refusal
    ErrorCode.TOPIC_AUTHORIZATION_FAILED: "Topic authorization failed.",
    ErrorCode.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed.",
    ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "Transactional Id authorization failed.",
}


def fetch_refused(Response, entry, version: int) -> Any:
    """Kafka's FetchResponse.partitionResponse(tp, TOPIC_AUTHORIZATION_FAILED): no offsets, no records."""
    Topic = Response.FetchableTopicResponse
    Partition = Topic.PartitionData
    return Topic(
        topic=getattr(entry, "topic", None),
        topic_id=getattr(entry, "topic_id", None),
        partitions=[
            Partition(
                partition_index=p.partition,
                error_code=TOPIC_REFUSED,
                high_watermark=-1,
                last_stable_offset=-1,
                log_start_offset=-1,
                aborted_transactions=None,
                preferred_read_replica=-1,
                records=None,
            )
            for p in entry.partitions
        ],
    )


def list_offsets_refused(Response, entry, version: int) -> Any:
    Topic = Response.ListOffsetsTopicResponse
    Partition = Topic.ListOffsetsPartitionResponse
    return Topic(
        name=entry.name,
        partitions=[
            Partition(
                partition_index=p.partition_index,
                error_code=TOPIC_REFUSED,
                old_style_offsets=[],
                timestamp=-1,
                offset=-1,
                leader_epoch=-1,
            )
            for p in entry.partitions
        ],
    )


def offset_commit_refused(Response, entry, version: int) -> Any:
    Topic = Response.OffsetCommitResponseTopic
    Partition = Topic.OffsetCommitResponsePartition
    return Topic(
        name=entry.name,
        partitions=[Partition(partition_index=p.partition_index, error_code=TOPIC_REFUSED) for p in entry.partitions],
    )


def txn_offset_commit_refused(Response, entry, version: int) -> Any:
    Topic = Response.TxnOffsetCommitResponseTopic
    Partition = Topic.TxnOffsetCommitResponsePartition
    return Topic(
        name=entry.name,
        partitions=[Partition(partition_index=p.partition_index, error_code=TOPIC_REFUSED) for p in entry.partitions],
    )


def describe_producers_refused(Response, entry, version: int) -> Any:
    Topic = Response.TopicResponse
    Partition = Topic.PartitionResponse
    return Topic(
        name=entry.name,
        partitions=[
            Partition(
                partition_index=p, error_code=TOPIC_REFUSED, error_message=MESSAGES[TOPIC_REFUSED], active_producers=[]
            )
            for p in entry.partition_indexes
        ],
    )


def transaction_refused(handler: Any, body: Any, version: int, error: int) -> Any:
    """AddPartitionsToTxn v0-3 refused for its transactional id: every partition carries the error."""
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


def no_coordinator(handler: Any, body: Any, version: int, error: int) -> Any:
    """FindCoordinator before v4 refused: Kafka's old-style answer, no node."""
    return handler.response(
        version=version,
        throttle_time_ms=0,
        error_code=error,
        error_message=MESSAGES.get(error),
        node_id=-1,
        host="",
        port=-1,
    )
