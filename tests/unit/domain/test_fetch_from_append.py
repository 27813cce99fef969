"""A Fetch tried in an append's notify is answered from the appended bytes, without reading the log,
when they are exactly what the read returns (ADR 127); otherwise the log is read. What is answered is
proven equal to the read in `tests/contract/test_fetch_from_append.py`; here, which way it went."""

from __future__ import annotations

import pytest

from tests.batches import make_batch
from tests.unit.conftest import Cluster
from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition

TP = TopicPartition("t", 0)
NOW = 1_700_000_000_000


class Reads:
    """The partition log with its reads counted."""

    def __init__(self, cluster: Cluster) -> None:
        self.log = cluster.logs.get(TP)
        self.calls: list[str] = []
        for name in ("read", "read_below"):
            method = getattr(self.log, name)

            def wrapped(*args, _method=method, _name=name):
                self.calls.append(_name)
                return _method(*args)

            setattr(self.log, name, wrapped)


@pytest.fixture
def cluster() -> Cluster:
    cluster = Cluster()
    cluster.catalog.create("t", 1, 1)
    cluster.replicas.admission.transaction_check = lambda *_: ErrorCode.NONE
    return cluster


def batch(size: int = 10, producer_id: int = -1, transactional: bool = False) -> bytes:
    return make_batch(
        [(NOW, b"k", b"v" * size)],
        producer_id=producer_id,
        producer_epoch=0 if producer_id >= 0 else -1,
        base_sequence=0 if producer_id >= 0 else -1,
        transactional=transactional,
    )


def produce(cluster: Cluster, *batches: bytes, transactional_id: str | None = None) -> int:
    """One Produce's append: the base offset of what it wrote."""
    base = cluster.logs.get(TP).log_end_offset
    results = cluster.replicas.produce_many([(TP, b, transactional_id, 3) for b in batches], NOW)
    assert all(r.error is ErrorCode.NONE for r in results)
    return base


@pytest.mark.parametrize("committed", [False, True])
def test_a_fetch_at_the_appended_base_does_not_read_the_log(cluster, committed):
    produce(cluster, batch())
    reads = Reads(cluster)
    appended = (batch(20), batch(30))
    base = produce(cluster, *appended)
    result = cluster.replicas.fetch(TP, base, 1 << 20, True, committed)
    assert reads.calls == []
    assert result.records == reads.log.read(base, 1 << 20, True)
    assert (result.high_watermark, result.last_stable_offset) == (base + 2, base + 2)
    assert result.aborted == (() if committed else None)


def test_one_batch_larger_than_the_partition_max_bytes_is_still_the_first_batch(cluster):
    reads = Reads(cluster)
    base = produce(cluster, batch(200))
    assert len(cluster.replicas.fetch(TP, base, 50, True).records) > 50
    assert reads.calls == []
    assert cluster.replicas.fetch(TP, base, 50, False).records == b""  # the read's answer: nothing fits
    assert reads.calls == ["read"]


def test_a_transactional_append_is_answered_for_read_uncommitted(cluster):
    reads = Reads(cluster)
    base = produce(cluster, batch(producer_id=3, transactional=True), transactional_id="tx")
    assert cluster.replicas.fetch(TP, base, 1 << 20, True, False).records
    assert reads.calls == []
    committed = cluster.replicas.fetch(TP, base, 1 << 20, True, True)
    assert (committed.records, committed.last_stable_offset) == (b"", base)  # the open transaction: nothing


@pytest.mark.parametrize(
    "case",
    [
        "parked below the base",
        "the batches cut by max bytes",
        "notify over",
        "a marker after the append",
        "a roll after the append",
    ],
)
def test_the_log_is_read_where_the_appended_bytes_may_not_be_the_answer(cluster, case):
    first = produce(cluster, batch(producer_id=4, transactional=True), transactional_id="tx")
    cluster.replicas.write_marker(TP, 4, 0, True, NOW)
    reads = Reads(cluster)
    base = produce(cluster, batch(40), batch(40))
    offset, max_bytes = base, 1 << 20
    if case == "parked below the base":
        offset = first
    elif case == "the batches cut by max bytes":
        max_bytes = 150  # the first batch fits, both do not
    elif case == "notify over":
        cluster.replicas.forget_appended()
    elif case == "a marker after the append":
        produce(cluster, batch(producer_id=5, transactional=True), transactional_id="tx")
        reads.calls.clear()
        cluster.replicas.write_marker(TP, 5, 0, False, NOW)
        offset = base + 2
    elif case == "a roll after the append":
        reads.log.roll()
    for committed in (False, True):
        assert cluster.replicas.fetch(TP, offset, max_bytes, True, committed).records
    assert reads.calls == ["read", "read_below"]
