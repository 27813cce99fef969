"""`__consumer_offsets` read as a client reads it, side by side with Apache Kafka 4.2.2 (ADR 108):
a commit for a group that Kafka keeps in partition 0 of its 50 (trafka has one partition), then
ListOffsets earliest and Fetch from the start of partition 0 on both. The log start and the error
codes are Kafka's, and the commit is found in both logs in the same format (an OffsetCommitKey with the
committed offset in its value); what else each log holds differs with each broker's history."""

from __future__ import annotations

import uuid

import pytest
from kafka.protocol.consumer import (
    FetchRequest,
    FetchResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
)

from tests.batches import read_batches
from tests.integration.test_internal_topic_reads import offset_commit

from .compare import Pair, Wire
from .test_flows import _create

pytestmark = pytest.mark.timeout(900)

KAFKA_OFFSETS_PARTITIONS = 50  # offsets.topic.num.partitions on the reference broker


def java_partition(group: str) -> int:
    """Kafka's partitionFor(group): Utils.abs(group.hashCode()) % the offsets topic's partitions."""
    h = 0
    for char in group:
        h = (31 * h + ord(char)) & 0xFFFFFFFF
    signed = h - (1 << 32) if h >= 1 << 31 else h
    return (0 if signed == -(1 << 31) else abs(signed)) % KAFKA_OFFSETS_PARTITIONS


def group_in_partition_0() -> str:
    while (group := f"differential-{uuid.uuid4().hex[:8]}") and java_partition(group) != 0:
        pass
    return group


def commit(wire: Wire, group: str, topic: str, offset: int) -> int:
    Topic = OffsetCommitRequest.OffsetCommitRequestTopic
    request = OffsetCommitRequest[8](
        group_id=group,
        generation_id_or_member_epoch=-1,
        member_id="",
        group_instance_id=None,
        topics=[
            Topic(
                name=topic,
                partitions=[
                    Topic.OffsetCommitRequestPartition(
                        partition_index=0, committed_offset=offset, committed_leader_epoch=-1, committed_metadata=""
                    )
                ],
            )
        ],
    )
    return wire.request(request, OffsetCommitResponse, 8).topics[0].partitions[0].error_code


def earliest(wire: Wire) -> tuple[int, int]:
    Topic = ListOffsetsRequest.ListOffsetsTopic
    request = ListOffsetsRequest[9](
        replica_id=-1,
        isolation_level=0,
        topics=[
            Topic(
                name="__consumer_offsets",
                partitions=[Topic.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1, timestamp=-2)],
            )
        ],
    )
    answer = wire.request(request, ListOffsetsResponse, 9).topics[0].partitions[0]
    return answer.error_code, answer.offset


def fetch_all(wire: Wire) -> tuple[int, int, list[tuple[str, str, int, int]]]:
    Topic = FetchRequest.FetchTopic
    commits: list[tuple[str, str, int, int]] = []
    error, log_start, position, high = 0, -1, 0, 1
    while position < high and error == 0:
        request = FetchRequest[11](
            replica_id=-1,
            max_wait_ms=0,
            min_bytes=0,
            max_bytes=1 << 20,
            isolation_level=0,
            session_id=0,
            session_epoch=-1,
            topics=[
                Topic(
                    topic="__consumer_offsets",
                    partitions=[
                        Topic.FetchPartition(
                            partition=0,
                            current_leader_epoch=-1,
                            fetch_offset=position,
                            log_start_offset=-1,
                            partition_max_bytes=1 << 20,
                        )
                    ],
                )
            ],
            forgotten_topics_data=[],
            rack_id="",
        )
        answer = wire.request(request, FetchResponse, 11).responses[0].partitions[0]
        error, log_start, high = answer.error_code, answer.log_start_offset, answer.high_watermark
        batches = read_batches(answer.records or b"")
        for batch in batches:
            # A transaction's markers: Kafka writes them to the offsets partition of a transaction that
            # commits offsets (the tools check's copier, when it ran first on the session's Kafka)
            for record in [] if batch.is_control_batch else batch:
                found = offset_commit(record.key, record.value) if record.key else None
                if found is not None:
                    commits.append(found)
            position = batch.base_offset + batch.last_offset_delta + 1
        if not batches:
            break
    return error, log_start, commits


def test_consumer_offsets_is_read_as_kafka_serves_it(pair: Pair):
    group = group_in_partition_0()
    topic = f"committed-{uuid.uuid4().hex[:8]}"
    _create(pair, topic)

    def run(node):
        with Wire(node.bootstrap) as wire:
            assert commit(wire, group, topic, 42) == 0
            error, log_start, commits = fetch_all(wire)
            return earliest(wire), error, log_start, (group, topic, 0, 42) in commits

    kafka, trafka = pair.each(run)
    assert kafka == ((0, 0), 0, 0, True)
    assert trafka == kafka
