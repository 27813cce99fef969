"""Produce, fetch and list offsets through the domain, against the in-memory adapter."""

from __future__ import annotations

import struct

import pytest

from tests.batches import make_batch, read_batches
from tests.unit.conftest import Cluster
from trafka.domain.configs import BrokerPolicy
from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition

NOW = 1_700_000_000_000
TP = TopicPartition("t", 0)


@pytest.fixture
def loaded(cluster: Cluster) -> Cluster:
    cluster.catalog.create("t", 1, 1)
    for i in range(5):  # batches of 2 records: offsets 2i, 2i+1 with timestamps 100i, 100i+50
        result = cluster.replicas.produce(
            TP, make_batch([(100 * i, b"k", b"a%d" % i), (100 * i + 50, None, b"b%d" % i)]), NOW
        )
        assert result.error == ErrorCode.NONE and result.base_offset == 2 * i
    return cluster


def test_offsets_are_assigned_consecutively_and_served_as_stored(loaded: Cluster):
    fetched = loaded.replicas.fetch(TP, 0, 1 << 20, min_one_batch=True)
    assert fetched.error == ErrorCode.NONE
    assert (fetched.high_watermark, fetched.last_stable_offset, fetched.log_start_offset) == (10, 10, 0)
    batches = read_batches(fetched.records)
    assert [b.base_offset for b in batches] == [0, 2, 4, 6, 8]
    assert [m.value for b in batches for m in list(b)][:3] == [b"a0", b"b0", b"a1"]


def test_fetch_returns_the_whole_batch_containing_the_offset(loaded: Cluster):
    fetched = loaded.replicas.fetch(TP, 3, 1 << 20, min_one_batch=True)
    assert [b.base_offset for b in read_batches(fetched.records)] == [2, 4, 6, 8]


def test_max_bytes_cuts_at_batch_boundaries_but_returns_at_least_one_batch(loaded: Cluster):
    one = len(loaded.replicas.fetch(TP, 0, 1, min_one_batch=True).records)
    assert len(read_batches(loaded.replicas.fetch(TP, 0, 1, min_one_batch=True).records)) == 1
    assert loaded.replicas.fetch(TP, 0, 1, min_one_batch=False).records == b""
    two = loaded.replicas.fetch(TP, 0, 2 * one + 1, min_one_batch=False).records
    assert len(read_batches(two)) == 2


def test_fetch_at_the_end_is_empty_and_past_it_is_out_of_range(loaded: Cluster):
    assert loaded.replicas.fetch(TP, 10, 1 << 20, True).records == b""
    assert loaded.replicas.fetch(TP, 11, 1 << 20, True).error == ErrorCode.OFFSET_OUT_OF_RANGE
    assert loaded.replicas.fetch(TP, -1, 1 << 20, True).error == ErrorCode.OFFSET_OUT_OF_RANGE


def test_unknown_partitions(loaded: Cluster):
    for tp in (TopicPartition("t", 1), TopicPartition("nope", 0)):
        assert loaded.replicas.fetch(tp, 0, 100, True).error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert loaded.replicas.produce(tp, make_batch([(1, None, b"x")]), NOW).error == (
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        )
        assert loaded.replicas.list_offset(tp, -1).error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_a_bad_batch_appends_nothing(loaded: Cluster):
    bad = bytearray(make_batch([(1, None, b"x")]))
    bad[-1] ^= 0xFF
    assert loaded.replicas.produce(TP, bytes(bad), NOW).error == ErrorCode.CORRUPT_MESSAGE
    assert loaded.replicas.watermarks(TP) == (0, 10)


def test_max_message_bytes_topic_override(cluster: Cluster):
    cluster.catalog.create("small", 1, 1, {"max.message.bytes": "200"})
    result = cluster.replicas.produce(TopicPartition("small", 0), make_batch([(1, None, b"x" * 300)]), NOW)
    assert result.error == ErrorCode.MESSAGE_TOO_LARGE


def test_broker_message_max_bytes():
    cluster = Cluster(BrokerPolicy(message_max_bytes=200))
    cluster.catalog.create("t", 1, 1)
    assert cluster.replicas.produce(TP, make_batch([(1, None, b"x" * 300)]), NOW).error == (ErrorCode.MESSAGE_TOO_LARGE)


@pytest.mark.parametrize(
    ("timestamp", "offset", "found"),
    [
        (-2, 0, -1),
        (-1, 10, -1),
        (-3, 9, 450),
        (0, 0, 0),
        (49, 1, 50),
        (51, 2, 100),
        (250, 5, 250),
        (451, -1, -1),
    ],
)
def test_list_offsets(loaded: Cluster, timestamp, offset, found):
    result = loaded.replicas.list_offset(TP, timestamp)
    assert (result.error, result.offset, result.timestamp) == (ErrorCode.NONE, offset, found)


@pytest.mark.parametrize("compression", [1, 2, 3, 4])
def test_offsets_for_times_look_inside_compressed_batches(cluster: Cluster, compression):
    cluster.catalog.create("t", 1, 1)
    cluster.replicas.produce(TP, make_batch([(10, None, b"a"), (30, None, b"b"), (20, None, b"c")], compression), NOW)
    assert cluster.replicas.list_offset(TP, 25).offset == 1
    assert (cluster.replicas.list_offset(TP, -3).offset, cluster.replicas.list_offset(TP, -3).timestamp) == (1, 30)


def test_list_offsets_on_an_empty_log(cluster: Cluster):
    cluster.catalog.create("t", 1, 1)
    assert cluster.replicas.list_offset(TP, -3).offset == -1
    assert cluster.replicas.list_offset(TP, 5).offset == -1
    assert cluster.replicas.list_offset(TP, -1).offset == 0


def test_log_append_time_topics_stamp_the_broker_clock(cluster: Cluster):
    cluster.catalog.create("t", 1, 1, {"message.timestamp.type": "LogAppendTime"})
    result = cluster.replicas.produce(TP, make_batch([(1, None, b"a")]), NOW)
    assert result.log_append_time_ms == NOW
    (batch,) = read_batches(cluster.replicas.fetch(TP, 0, 1 << 20, True).records)
    assert [m.timestamp for m in list(batch)] == [NOW]


@pytest.mark.parametrize("together", [False, True])
def test_a_partition_written_from_empty_is_fetched_without_a_scan_for_producer_state(cluster: Cluster, together):
    """The first fetch asks for the last stable offset, which needs the partition's producer state.
    A log produced to from offset 0 has none before that, so the state starts empty rather than
    being rebuilt by reading every batch header written since."""
    cluster.catalog.create("fresh", 1, 1)
    tp = TopicPartition("fresh", 0)
    batches = [make_batch([(NOW, None, b"%d" % i)]) for i in range(3)]
    if together:
        cluster.replicas.produce_many([(tp, b, None, 3) for b in batches], NOW)
    else:
        for batch in batches:
            cluster.replicas.produce(tp, batch, NOW)
    log = cluster.logs.get(tp)
    log.batch_headers = lambda *args: pytest.fail("the producer state was rebuilt from the log")
    assert cluster.replicas.fetch(tp, 0, 1 << 20, True).last_stable_offset == 3
    idempotent = make_batch([(NOW, None, b"i")], producer_id=5, producer_epoch=0, base_sequence=0)
    assert cluster.replicas.produce(tp, idempotent, NOW).base_offset == 3
    assert cluster.replicas.produce(tp, idempotent, NOW).base_offset == 3  # a retry: its original offset


@pytest.mark.parametrize(
    ("attributes", "valid_crc", "error"),
    [
        (0x10, False, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),  # before the CRC is checked
        (0x10, True, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
        (0x30, True, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED),  # a transactional control batch: the id first
        (0x20, True, ErrorCode.INVALID_RECORD),  # a control batch
        (0x20, False, ErrorCode.CORRUPT_MESSAGE),
    ],
)
def test_a_transactional_batch_without_a_transactional_id_is_refused_before_any_other_check(
    cluster: Cluster, attributes: int, valid_crc: bool, error: ErrorCode
):
    """Kafka's handleProduceRequest refuses it before the log validates anything, whether the batch is
    valid (the one-batch check) or not (the general validator's path)."""
    cluster.catalog.create("t", 1, 1)
    batch = bytearray(make_batch([(NOW, b"k", b"v")], producer_id=7, producer_epoch=0, base_sequence=0))
    struct.pack_into(">h", batch, 21, attributes)
    crc = cluster.replicas.checksum(memoryview(batch)[21:])
    struct.pack_into(">I", batch, 17, crc if valid_crc else crc ^ 1)
    assert cluster.replicas.produce(TP, bytes(batch), NOW).error == error
    assert cluster.replicas.watermarks(TP) == (0, 0)


def _lone_cases() -> dict[str, tuple[dict[str, str], bytes, str | None]]:
    corrupt = bytearray(make_batch([(NOW, None, b"v")]))
    struct.pack_into(">I", corrupt, 17, 0)  # a wrong CRC
    return {
        "plain": ({}, make_batch([(NOW, b"k", b"v"), (NOW + 1, None, b"w")]), None),
        "log append time": ({"message.timestamp.type": "LogAppendTime"}, make_batch([(1, None, b"a")]), None),
        "corrupt": ({}, bytes(corrupt), None),
        "idempotent": ({}, make_batch([(NOW, None, b"i")], producer_id=5, producer_epoch=0, base_sequence=0), None),
        "transactional without an id": (
            {},
            make_batch([(NOW, None, b"t")], producer_id=7, producer_epoch=0, base_sequence=0, transactional=True),
            None,
        ),
    }


@pytest.mark.parametrize("case", sorted(_lone_cases()))
def test_a_lone_request_in_produce_many_is_answered_and_stored_as_in_a_group(case: str):
    """`produce_many` answers a group of one request at once (ADR 133): the answer, the log's bytes and
    what a parked fetch is answered from are those of the group path (the same request followed by
    another partition's), twice in a row (the second at a non-zero offset)."""
    configs, batch, transactional_id = _lone_cases()[case]
    other = TopicPartition("u", 0)
    alone, grouped = Cluster(), Cluster()
    for cluster in (alone, grouped):
        cluster.catalog.create("t", 1, 1, configs)
        cluster.catalog.create("u", 1, 1)
    for round_ in range(2):
        (lone,) = alone.replicas.produce_many([(TP, batch, transactional_id, 9)], NOW + round_)
        first, _ = grouped.replicas.produce_many(
            [(TP, batch, transactional_id, 9), (other, make_batch([(NOW, None, b"o")]), None, 9)], NOW + round_
        )
        assert lone == first
        assert alone.replicas.watermarks(TP) == grouped.replicas.watermarks(TP)
        fetched = [c.replicas.fetch(TP, 0, 1 << 20, True) for c in (alone, grouped)]
        assert bytes(fetched[0].records or b"") == bytes(fetched[1].records or b"")
        for cluster in (alone, grouped):
            cluster.replicas.forget_appended()
