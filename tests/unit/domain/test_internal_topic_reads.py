"""Fetch and ListOffsets on an internal topic that exists (`__consumer_offsets`, ADR 108), through the
domain against the in-memory adapter. The coordinators append to its log directly, not through the
ReplicaManager, so what a reader sees (the last stable offset above all) must follow those appends;
Produce, DeleteRecords and markers still see only the catalog's topics."""

from __future__ import annotations

import uuid

import crc32c

from tests.batches import make_batch, read_batches
from tests.unit.conftest import Cluster
from trafka.domain.batch import assign_offsets, validate_batches
from trafka.domain.control import marker_batch
from trafka.domain.errors import ErrorCode
from trafka.domain.offset_lookup import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
from trafka.domain.topics import Topic, TopicPartition

OFFSETS = Topic("__consumer_offsets", uuid.uuid4(), 1)
TP = TopicPartition(OFFSETS.name, 0)
NOW = 1_700_000_000_000


def coordinator_append(cluster: Cluster, raw: bytes) -> None:
    """As the group coordinator writes `__consumer_offsets` (the filesystem's InternalLog)."""
    log = cluster.logs.open(TP, OFFSETS)
    batches = validate_batches(raw, crc32c.crc32c, len(raw))
    log.append(batches.buffer, assign_offsets(batches, log.log_end_offset, 0, crc32c.crc32c))


def test_an_internal_topic_is_readable_only_once_it_exists(cluster: Cluster):
    exists: dict[str, Topic] = {}
    cluster.replicas.internal_topics = exists.get
    assert cluster.replicas.fetch(TP, 0, 1 << 20, True).error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert cluster.replicas.list_offset(TP, LATEST_TIMESTAMP).error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    exists[OFFSETS.name] = OFFSETS
    fetched = cluster.replicas.fetch(TP, 0, 1 << 20, True)  # a store without internal logs: empty
    assert (fetched.error, fetched.high_watermark, fetched.records) == (ErrorCode.NONE, 0, b"")
    coordinator_append(cluster, make_batch([(NOW, b"key", b"value")]))
    fetched = cluster.replicas.fetch(TP, 0, 1 << 20, True)
    assert (fetched.high_watermark, fetched.last_stable_offset, fetched.log_start_offset) == (1, 1, 0)
    assert [r.key for b in read_batches(fetched.records) for r in b] == [b"key"]
    assert cluster.replicas.list_offset(TP, EARLIEST_TIMESTAMP).offset == 0
    assert cluster.replicas.list_offset(TP, LATEST_TIMESTAMP).offset == 1
    assert cluster.replicas.fetch(TopicPartition(OFFSETS.name, 1), 0, 100, True).error == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    )


def test_produce_and_delete_records_still_refuse_an_internal_topic(cluster: Cluster):
    cluster.replicas.internal_topics = {OFFSETS.name: OFFSETS}.get
    assert cluster.replicas.fetch(TP, 0, 100, True).error == ErrorCode.NONE
    produced = cluster.replicas.produce(TP, make_batch([(NOW, None, b"x")]), NOW)
    assert produced.error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert cluster.replicas.delete_records(TP, 0).error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_the_last_stable_offset_follows_transactional_commits_the_coordinator_appends(cluster: Cluster):
    """TxnOffsetCommit writes a transactional batch; the marker decides it when the transaction ends."""
    cluster.replicas.internal_topics = {OFFSETS.name: OFFSETS}.get
    coordinator_append(cluster, make_batch([(NOW, b"a", b"1")]))
    assert cluster.replicas.list_offset(TP, LATEST_TIMESTAMP, read_committed=True).offset == 1  # read once
    coordinator_append(cluster, make_batch([(NOW, b"b", b"2")], producer_id=7, producer_epoch=0, transactional=True))
    assert cluster.replicas.list_offset(TP, LATEST_TIMESTAMP, read_committed=True).offset == 1
    assert cluster.replicas.list_offset(TP, LATEST_TIMESTAMP).offset == 2
    fetched = cluster.replicas.fetch(TP, 0, 1 << 20, True, read_committed=True)
    assert (fetched.high_watermark, fetched.last_stable_offset) == (2, 1)
    coordinator_append(cluster, marker_batch(7, 0, True, NOW, crc32c.crc32c))
    assert cluster.replicas.list_offset(TP, LATEST_TIMESTAMP, read_committed=True).offset == 3
    assert cluster.replicas.fetch(TP, 0, 1 << 20, True, read_committed=True).last_stable_offset == 3
