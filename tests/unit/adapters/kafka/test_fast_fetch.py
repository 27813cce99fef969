"""The Fetch response fast path against kafka-python, its reference: byte for byte at every version
served, for any topics, partitions, errors, watermarks, aborted transactions and records."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.kafka_python_oracle import kafka_python_frame
from trafka.adapters.kafka.wire import fast_fetch

VERSIONS = range(fast_fetch.MIN_VERSION, fast_fetch.MAX_VERSION + 1)

int16 = st.integers(-(2**15), 2**15 - 1)
int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
aborted = st.none() | st.lists(st.tuples(int64, int64), max_size=3)
# Record sets past SEPARATE_RECORDS are written as a piece of their own: both kinds are generated.
large = st.integers(fast_fetch.SEPARATE_RECORDS, fast_fetch.SEPARATE_RECORDS + 100).map(lambda n: b"r" * n)
records = st.none() | st.binary(max_size=200) | large
partitions = st.lists(st.tuples(int32, int16, int64, int64, int64, aborted, int32, records), max_size=3)
topic_ids = st.builds(uuid.UUID, bytes=st.binary(min_size=16, max_size=16))
topics = st.lists(st.tuples(st.text(max_size=10), topic_ids, partitions), max_size=3)


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=80, deadline=None)
@given(correlation_id=int32, answer=topics, error=int16, throttle=st.integers(0, 2**31 - 1), session=int32)
def test_encode_is_byte_identical_to_kafka_python(version, correlation_id, answer, error, throttle, session):
    fetch = fast_fetch.FetchAnswer(answer, error, throttle, session)
    reference = kafka_python_frame(fetch.as_kafka_python(version), version, correlation_id)
    assert fetch.reference(version, correlation_id) == reference
    assert fetch.encode_frame(version, correlation_id) == reference
    pieces = fetch.encode_pieces(version, correlation_id)
    assert b"".join(pieces) == reference


def test_large_record_sets_are_written_from_the_logs_own_bytes():
    stored = b"r" * fast_fetch.SEPARATE_RECORDS
    fetch = fast_fetch.FetchAnswer(
        [("t", uuid.uuid4(), [(0, 0, 5, 5, 0, None, -1, stored), (1, 0, 1, 1, 0, None, -1, b"x")])]
    )
    pieces = fetch.encode_pieces(12, 7)
    assert len(pieces) == 3 and pieces[1] is stored
    assert b"".join(pieces) == fetch.reference(12, 7)


def test_a_version_past_the_fast_path_is_encoded_by_kafka_python(monkeypatch):
    version = fast_fetch.MAX_VERSION
    monkeypatch.setattr(fast_fetch, "MAX_VERSION", version - 1)  # kafka-python knows no version past Kafka's
    fetch = fast_fetch.FetchAnswer([("t", uuid.uuid4(), [(0, 0, 5, 5, 0, None, -1, b"")])])
    from kafka.protocol.consumer import FetchResponse

    decoded = FetchResponse.decode(fetch.encode_frame(version, 3)[4:], version=version, header=True)
    assert decoded.header.correlation_id == 3 and decoded.responses[0].partitions[0].high_watermark == 5


one_partition = st.tuples(int32, int16, int64, int64, int64, st.none() | st.just(()) | aborted, int32, records)


@pytest.mark.parametrize("version", range(fast_fetch.FLEXIBLE_FROM, fast_fetch.MAX_VERSION + 1))
@settings(max_examples=80, deadline=None)
@given(
    correlation_ids=st.lists(int32, min_size=1, max_size=3),
    topic=st.tuples(st.text(max_size=10), topic_ids),
    partition=one_partition,
    watermarks=st.lists(st.tuples(int64, int64, int64), min_size=1, max_size=3),
    error=int16,
    throttle=st.sampled_from([0, 0, 7]),
    session=int32,
)
def test_one_partition_answers_are_the_general_encoders_piece_for_piece(
    version, correlation_ids, topic, partition, watermarks, error, throttle, session
):
    """ADR 130: the one-partition encoder keeps the bytes before the partition per version, topic and
    session; whatever it is asked after (other correlation ids, offsets, records), its pieces are the
    general encoder's, and those are kafka-python's bytes."""
    for correlation_id, (high, stable, start) in zip(correlation_ids, watermarks * 3):
        partitions = [(partition[0], partition[1], high, stable, start, *partition[5:])]
        answer = [(topic[0], topic[1], partitions)]
        fetch = fast_fetch.FetchAnswer(answer, error, throttle, session)
        pieces = fetch.encode_pieces(version, correlation_id)
        assert pieces == fast_fetch.encode_fetch_pieces(version, correlation_id, answer, error, session, throttle)
        assert b"".join(pieces) == kafka_python_frame(fetch.as_kafka_python(version), version, correlation_id)


def test_the_one_partition_encoder_takes_the_answers_a_parked_fetch_gives(monkeypatch):
    """The answers of a consumer at the log end (no throttle, no aborted transaction listed, records)
    take the kept head; anything else is left to the general encoder."""
    calls = []
    general = fast_fetch.encode_fetch_pieces
    monkeypatch.setattr(fast_fetch, "encode_fetch_pieces", lambda *a: calls.append(a) or general(*a))
    topic_id = uuid.uuid4()

    def answer(aborted, records, throttle=0, version=16):
        partitions = [(0, 0, 5, 5, 0, aborted, -1, records)]
        return fast_fetch.FetchAnswer([("t", topic_id, partitions)], 0, throttle).encode_pieces(version, 1)

    answer(None, b"x")
    answer((), b"x" * fast_fetch.SEPARATE_RECORDS)
    assert calls == []
    answer([(1, 2)], b"x")
    answer((), None)
    answer((), b"x", throttle=5)
    answer((), b"x", version=11)
    assert len(calls) == 4


@pytest.mark.parametrize("size", [0, 125, 126, 127, 128, 16381, 16382, 16383, 16384, 2**21])
def test_the_one_partition_encoder_writes_the_records_length_as_count_does(size):
    """ADR 134: the records' compact length written in place (one byte, two, or `count` past 14 bits)."""
    answer = [("t", uuid.uuid4(), [(0, 0, 5, 5, 0, None, -1, b"r" * size)])]
    pieces = fast_fetch.FetchAnswer(answer).encode_pieces(16, 3)
    assert pieces == fast_fetch.encode_fetch_pieces(16, 3, answer)
