"""`ReplicaManager.produce_many`: one log write per partition, answers as if one produce after another.

For any sequence of record sets (plain, idempotent in and out of sequence, transactional, corrupt,
for unknown partitions, with LogAppendTime topics), `produce_many` answers exactly what `produce`
called for each in turn answers, and leaves the same bytes in every log; a failed write answers
KAFKA_STORAGE_ERROR for every batch of that partition and keeps nothing of them.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.batches import make_batch
from tests.unit.conftest import Cluster
from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition

NOW = 1_700_000_000_000
PARTITIONS = [
    TopicPartition("plain", 0),
    TopicPartition("plain", 1),
    TopicPartition("appended", 0),
    TopicPartition("plain", 9),
    TopicPartition("missing", 0),
]


def _cluster() -> Cluster:
    cluster = Cluster()
    cluster.catalog.create("plain", 2, 1)
    cluster.catalog.create("appended", 1, 1, {"message.timestamp.type": "LogAppendTime"})
    return cluster


@st.composite
def record_sets(draw):
    kind = draw(st.sampled_from(["plain", "plain", "plain", "idempotent", "transactional", "corrupt", "null"]))
    values = [(NOW - 5, None, v) for v in draw(st.lists(st.binary(max_size=30), min_size=1, max_size=3))]
    if kind == "null":
        return None
    if kind == "idempotent":
        return make_batch(
            values, producer_id=draw(st.sampled_from([7, 8])), producer_epoch=0, base_sequence=draw(st.integers(0, 6))
        )
    if kind == "transactional":
        return make_batch(values, producer_id=9, producer_epoch=0, base_sequence=0, transactional=True)
    batch = make_batch(values)
    return batch[:-1] + bytes([batch[-1] ^ 1]) if kind == "corrupt" else batch


def _logs(cluster: Cluster) -> list[bytes]:
    return [cluster.replicas.fetch(tp, 0, 1 << 30, True).records for tp in PARTITIONS[:3]]


@settings(max_examples=200, deadline=None)
@given(requests=st.lists(st.tuples(st.sampled_from(PARTITIONS), record_sets()), max_size=12))
def test_produce_many_answers_and_appends_as_one_produce_after_another(requests):
    one_by_one, together = _cluster(), _cluster()
    expected = [one_by_one.replicas.produce(tp, records, NOW) for tp, records in requests]
    assert together.replicas.produce_many([(tp, records, None, 3) for tp, records in requests], NOW) == expected
    assert _logs(together) == _logs(one_by_one)


def test_a_partition_whose_write_fails_answers_storage_error_for_each_of_its_batches():
    cluster = _cluster()
    tp0, tp1 = PARTITIONS[0], PARTITIONS[1]
    failing = cluster.logs.get(tp1)

    def refuse(batches, headers):
        raise OSError(28, "No space left on device")

    failing.append = refuse
    batch = make_batch([(NOW, None, b"v")])
    results = cluster.replicas.produce_many([(tp, batch, None, 3) for tp in (tp0, tp1, tp0, tp1)], NOW)
    assert [r.error for r in results] == [ErrorCode.NONE, ErrorCode.KAFKA_STORAGE_ERROR] * 2
    assert [r.base_offset for r in results] == [0, -1, 1, -1]
    assert failing.log_end_offset == 0
    assert "No space left on device" in results[1].message
