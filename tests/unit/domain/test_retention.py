"""Retention, DeleteRecords and config changes through the domain, on the in-memory adapter."""

from __future__ import annotations

import pytest

from tests.batches import make_batch
from tests.unit.conftest import Cluster
from trafka.domain.catalog import AlterOp
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.retention import SegmentInfo, retention_cut
from trafka.domain.topics import TopicPartition

NOW = 1_000_000


def segs(*spec):
    """(size, max_timestamp) per segment, consecutive 10-offset segments."""
    return [SegmentInfo(10 * i, 10 * i + 10, size, ts, ts) for i, (size, ts) in enumerate(spec)]


def test_time_retention_deletes_old_segments_from_the_oldest_but_never_the_active_one():
    segments = segs((100, 10), (100, 20), (100, 900_000), (100, 5))
    assert retention_cut(segments, 100_000, -1, NOW) == 20
    assert retention_cut(segs((100, 10)), 100_000, -1, NOW) is None  # only the active segment
    assert retention_cut(segments, -1, -1, NOW) is None


def test_size_retention_deletes_only_while_the_log_stays_at_or_above_the_limit():
    segments = segs((100, NOW), (100, NOW), (100, NOW), (100, NOW))
    assert retention_cut(segments, -1, 250, NOW) == 10  # 400 -> 300; without another it would be 200
    assert retention_cut(segments, -1, 200, NOW) == 20
    assert retention_cut(segments, -1, 400, NOW) is None
    assert retention_cut(segments, -1, 0, NOW) == 30


def test_enforce_retention_on_a_topic(cluster: Cluster):
    cluster.catalog.create("t", 1, 1, {"internal.segment.bytes": "200", "retention.ms": "1000"})
    tp = TopicPartition("t", 0)
    for i in range(6):
        cluster.replicas.produce(tp, make_batch([(NOW - 10_000 + i, None, b"x" * 100)]), NOW)
    assert cluster.replicas.enforce_retention(NOW) == {tp: 6}  # all expired: the active segment goes too
    assert cluster.replicas.watermarks(tp) == (6, 6)
    assert cluster.replicas.fetch(tp, 0, 1 << 20, True).error == ErrorCode.OFFSET_OUT_OF_RANGE


def test_compacted_topics_are_left_alone(cluster: Cluster):
    cluster.catalog.create(
        "c", 1, 1, {"internal.segment.bytes": "200", "retention.ms": "1", "cleanup.policy": "compact"}
    )
    for _i in range(4):
        cluster.replicas.produce(TopicPartition("c", 0), make_batch([(0, b"k", b"x" * 100)]), NOW)
    assert cluster.replicas.enforce_retention(NOW) == {}


def test_delete_records(cluster: Cluster):
    cluster.catalog.create("t", 1, 1)
    tp = TopicPartition("t", 0)
    for i in range(5):
        cluster.replicas.produce(tp, make_batch([(i, None, b"x")]), NOW)
    assert cluster.replicas.delete_records(tp, 3).offset == 3
    assert cluster.replicas.list_offset(tp, -2).offset == 3
    assert cluster.replicas.delete_records(tp, 9).error == ErrorCode.OFFSET_OUT_OF_RANGE
    assert cluster.replicas.delete_records(tp, -1).offset == 5
    assert cluster.replicas.delete_records(TopicPartition("x", 0), 1).error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_alter_configs_set_delete_append_subtract(cluster: Cluster):
    cluster.catalog.create("t", 1, 1, {"retention.ms": "5"})
    topic = cluster.catalog.alter_configs(
        "t",
        {
            "retention.ms": (AlterOp.DELETE, None),
            "segment.bytes": (AlterOp.SET, "2000000"),
            "cleanup.policy": (AlterOp.APPEND, "compact"),
        },
    )
    assert topic.configs == {"segment.bytes": "2000000", "cleanup.policy": "delete,compact"}
    topic = cluster.catalog.alter_configs("t", {"cleanup.policy": (AlterOp.SUBTRACT, "delete")})
    assert topic.configs["cleanup.policy"] == "compact"
    assert cluster.store.load()[0].configs == topic.configs
    assert cluster.logs.get(TopicPartition("t", 0)).segment_bytes == 2000000
    for changes, code in (
        ({"nope": (AlterOp.SET, "1")}, ErrorCode.INVALID_CONFIG),
        ({"retention.ms": (AlterOp.SET, "soon")}, ErrorCode.INVALID_CONFIG),
        ({"retention.ms": (AlterOp.APPEND, "1")}, ErrorCode.INVALID_CONFIG),
    ):
        with pytest.raises(KafkaError) as info:
            cluster.catalog.alter_configs("t", changes)
        assert info.value.code == code
    assert cluster.catalog.alter_configs("t", {"retention.ms": (AlterOp.SET, "7")}, validate_only=True)
    assert "retention.ms" not in cluster.catalog.get("t").configs


def test_an_idle_topic_past_retention_ms_empties_its_active_segment_too(cluster: Cluster):
    cluster.catalog.create("idle", 1, 1, {"retention.ms": "1000"})
    tp = TopicPartition("idle", 0)
    for i in range(3):
        cluster.replicas.produce(tp, make_batch([(NOW - 10_000 + i, None, b"old")]), NOW)
    assert cluster.replicas.enforce_retention(NOW) == {tp: 3}
    assert cluster.replicas.watermarks(tp) == (3, 3)
    cluster.replicas.produce(tp, make_batch([(NOW, None, b"fresh")]), NOW)
    assert cluster.replicas.enforce_retention(NOW) == {}
    assert cluster.replicas.watermarks(tp) == (3, 4)
