"""What DescribeLogDirs and DescribeQuorum read from the domain: partition sizes, the log dir, the
metadata log's end offset (against the in-memory adapter)."""

from __future__ import annotations

from tests.batches import make_batch
from tests.unit.conftest import Cluster
from trafka.domain.log_dirs import UNKNOWN_VOLUME_BYTES
from trafka.domain.topics import ZERO_UUID, TopicPartition

NOW = 1_700_000_000_000


def test_partition_sizes_are_the_sum_of_the_segments_and_grow_with_appends(cluster: Cluster):
    cluster.catalog.create("t", 2, 1)
    t0, t1 = TopicPartition("t", 0), TopicPartition("t", 1)
    assert cluster.replicas.partition_sizes() == {t0: 0, t1: 0}
    cluster.replicas.produce(t0, make_batch([(NOW, b"k", b"v" * 100)]), NOW)
    first = cluster.replicas.partition_sizes()[t0]
    assert first > 100
    cluster.replicas.produce(t0, make_batch([(NOW, b"k", b"w" * 100)]), NOW)
    assert cluster.replicas.partition_sizes([t0]) == {t0: 2 * first}
    assert sum(s.size for s in cluster.replicas.segment_infos(t0) or []) == 2 * first


def test_partition_sizes_leave_out_unknown_partitions(cluster: Cluster):
    cluster.catalog.create("t", 1, 1)
    asked = [TopicPartition("t", 0), TopicPartition("t", 5), TopicPartition("nope", 0)]
    assert cluster.replicas.partition_sizes(asked) == {TopicPartition("t", 0): 0}
    assert cluster.replicas.partition_sizes([]) == {}


def test_the_memory_store_has_one_log_dir_of_unknown_size_and_no_metadata_log(cluster: Cluster):
    log_dir = cluster.replicas.log_dir()
    assert (log_dir.path, log_dir.directory_id) == ("memory", ZERO_UUID)
    assert log_dir.total_bytes == log_dir.usable_bytes == UNKNOWN_VOLUME_BYTES
    assert cluster.replicas.metadata_log_end_offset() == 0
