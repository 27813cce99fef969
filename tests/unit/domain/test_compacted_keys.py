"""A compacted topic refuses records without a key, as Kafka's LogValidator.validateKey does."""

from __future__ import annotations

import crc32c
import pytest

from tests.batches import make_batch
from tests.unit.conftest import Cluster
from trafka.domain.batch import Compression
from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition

NOW = 1_700_000_000_000


@pytest.mark.parametrize("policy", ["compact", "compact,delete", "delete,compact"])
@pytest.mark.parametrize("compression", [Compression.NONE, Compression.GZIP, Compression.ZSTD])
def test_a_keyless_record_is_refused_with_kafkas_message(cluster: Cluster, policy: str, compression: int):
    cluster.catalog.create("c", 1, 1, {"cleanup.policy": policy})
    tp = TopicPartition("c", 0)
    batch = make_batch([(1, b"k", b"v"), (2, None, b"v"), (3, b"", b"v"), (4, None, None)], compression)
    result = cluster.replicas.produce(tp, batch, NOW)
    assert result.error == ErrorCode.INVALID_RECORD
    assert result.message == (
        "One or more records have been rejected due to 2 record errors in total, and only showing the first "
        "three errors at most: [RecordError(batchIndex=1, message='Compacted topic cannot accept message "
        "without key in topic partition c-0'), RecordError(batchIndex=3, message='Compacted topic cannot "
        "accept message without key in topic partition c-0')]"
    )
    why = "Compacted topic cannot accept message without key in topic partition c-0"
    assert result.record_errors == ((1, why), (3, why))  # ProduceResponse's record_errors, as Kafka fills them
    assert cluster.replicas.watermarks(tp) == (0, 0)
    # an empty key is a key; tombstones (null values) are fine
    assert cluster.replicas.produce(tp, make_batch([(1, b"", None), (2, b"k", None)], compression), NOW).error == 0


def test_only_the_first_three_are_shown(cluster: Cluster):
    cluster.catalog.create("c", 1, 1, {"cleanup.policy": "compact"})
    result = cluster.replicas.produce(TopicPartition("c", 0), make_batch([(i, None, b"v") for i in range(5)]), NOW)
    assert result.message is not None
    assert "due to 5 record errors" in result.message and result.message.count("RecordError(") == 3
    assert [index for index, _ in result.record_errors] == [0, 1, 2, 3, 4]  # the response carries them all


def test_a_delete_topic_takes_keyless_records(cluster: Cluster):
    cluster.catalog.create("d", 1, 1)
    assert cluster.replicas.produce(TopicPartition("d", 0), make_batch([(1, None, b"v")]), NOW).error == 0


def test_the_broker_default_policy_counts(cluster: Cluster):
    cluster.policy.dynamic.replace(False, {"log.cleanup.policy": "compact"})
    cluster.catalog.create("c", 1, 1)
    result = cluster.replicas.produce(TopicPartition("c", 0), make_batch([(1, None, b"v")]), NOW)
    assert result.error == ErrorCode.INVALID_RECORD


def test_a_record_running_past_its_batch_is_corrupt(cluster: Cluster):
    cluster.catalog.create("c", 1, 1, {"cleanup.policy": "compact"})
    batch = bytearray(make_batch([(1, b"k", b"value")]))
    batch[61] = 0x7E  # record length 63: past the batch
    batch[17:21] = crc32c.crc32c(memoryview(batch)[21:]).to_bytes(4, "big")
    result = cluster.replicas.produce(TopicPartition("c", 0), bytes(batch), NOW)
    assert result.error == ErrorCode.CORRUPT_MESSAGE
