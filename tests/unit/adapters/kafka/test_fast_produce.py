"""The Produce fast path against kafka-python, its reference: for every served version, any request
kafka-python encodes decodes to the same fields, and any response encodes to the same bytes (topics by
name, and from v13 by id)."""

from __future__ import annotations

import struct
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.protocol.producer import ProduceRequest, ProduceResponse

from tests.kafka_python_oracle import kafka_python_frame
from trafka.adapters.kafka.apis import build_registry
from trafka.adapters.kafka.wire import fast_produce, fast_produce_answer
from trafka.adapters.kafka.wire.codec import decode_request

VERSIONS = range(fast_produce.MIN_VERSION, fast_produce.MAX_VERSION + 1)
REGISTRY = build_registry()

names = st.text(min_size=0, max_size=12)
nullable_names = st.none() | names
records = st.none() | st.binary(max_size=64)
int16 = st.integers(-(2**15), 2**15 - 1)
int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
unknown_tags = st.dictionaries(st.integers(10, 2000), st.binary(max_size=8), max_size=2)

TopicData = ProduceRequest.TopicProduceData
PartitionData = TopicData.PartitionProduceData
TopicResponse = ProduceResponse.TopicProduceResponse
PartitionResponse = TopicResponse.PartitionProduceResponse


def by_id(version: int) -> bool:
    return version >= fast_produce.TOPIC_IDS_FROM


def topic_keys(version: int):
    """How a request or response names a topic at `version`: its name, or from v13 its id."""
    return st.uuids() if by_id(version) else names


def _topic(key, version: int, **fields):
    return TopicData(**({"topic_id": key} if by_id(version) else {"name": key}), **fields)


@st.composite
def produce_requests(draw, version):
    topics = draw(st.lists(st.tuples(topic_keys(version), st.lists(st.tuples(int32, records), max_size=3)), max_size=3))
    request = ProduceRequest[version](
        transactional_id=draw(nullable_names),
        acks=draw(int16),
        timeout_ms=draw(int32),
        topic_data=[
            _topic(key, version, partition_data=[PartitionData(index=i, records=r) for i, r in parts])
            for key, parts in topics
        ],
    )
    request.with_header(correlation_id=draw(int32), client_id=draw(nullable_names))
    return request


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def _tags(tags: dict[int, bytes]) -> bytes:
    return _uvarint(len(tags)) + b"".join(_uvarint(t) + _uvarint(len(v)) + v for t, v in sorted(tags.items()))


def _compact(value: bytes | None) -> bytes:
    return b"\x00" if value is None else _uvarint(len(value) + 1) + value


@st.composite
def flexible_frames_with_unknown_tags(draw, version):
    """A flexible Produce frame whose every struct carries unknown tagged fields (kafka-python
    decodes and skips them but never writes them, so the test writes the frame itself)."""
    client_id = draw(nullable_names)
    head = struct.pack(">hhi", 0, version, draw(int32))
    head += b"\xff\xff" if client_id is None else struct.pack(">h", len(client_id.encode())) + client_id.encode()
    body = _tags(draw(unknown_tags))
    txn = draw(nullable_names)
    body += _compact(None if txn is None else txn.encode()) + struct.pack(">hi", draw(int16), draw(int32))
    topics = draw(st.lists(st.tuples(topic_keys(version), st.lists(st.tuples(int32, records), max_size=3)), max_size=3))
    body += _uvarint(len(topics) + 1)
    for key, parts in topics:
        body += (key.bytes if by_id(version) else _compact(key.encode())) + _uvarint(len(parts) + 1)
        for index, data in parts:
            body += struct.pack(">i", index) + _compact(data) + _tags(draw(unknown_tags))
        body += _tags(draw(unknown_tags))
    body += _tags(draw(unknown_tags))
    return head + body


def _fields(request) -> tuple:
    return (
        request.transactional_id,
        request.acks,
        request.timeout_ms,
        [
            (
                t.name,
                t.topic_id,
                [(p.index, None if p.records is None else bytes(p.records)) for p in t.partition_data],
            )
            for t in request.topic_data
        ],
    )


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_decode_matches_kafka_python(version, data):
    request = data.draw(produce_requests(version))
    frame = bytes(request.encode(header=True, framed=False))
    reference = ProduceRequest.decode(frame, version=version, header=True)
    correlation_id, client_id, fast = fast_produce.decode_produce(frame, version)
    assert (correlation_id, client_id) == (reference.header.correlation_id, reference.header.client_id)
    assert _fields(fast) == _fields(reference)


@pytest.mark.parametrize("version", [v for v in VERSIONS if v >= fast_produce.FLEXIBLE_FROM])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_unknown_tagged_fields_are_skipped_as_kafka_python_skips_them(version, data):
    frame = data.draw(flexible_frames_with_unknown_tags(version))
    reference = ProduceRequest.decode(frame, version=version, header=True)
    correlation_id, client_id, fast = fast_produce.decode_produce(frame, version)
    assert (correlation_id, client_id) == (reference.header.correlation_id, reference.header.client_id)
    assert _fields(fast) == _fields(reference)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_codec_takes_the_fast_path_for_served_versions(version):
    request = ProduceRequest[version](transactional_id=None, acks=1, timeout_ms=100, topic_data=[])
    request.with_header(correlation_id=5, client_id="c")
    decoded = decode_request(bytes(request.encode(header=True)), REGISTRY)
    assert isinstance(decoded.body, fast_produce.ProduceRequestView)
    assert (decoded.correlation_id, decoded.client_id, decoded.api_version) == (5, "c", version)


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=40, deadline=None)
@given(frame=st.binary(max_size=80), data=st.data())
def test_truncated_or_garbled_frames_are_protocol_errors(version, frame, data):
    request = data.draw(produce_requests(version))
    good = bytes(request.encode(header=True, framed=False))
    cut = good[: data.draw(st.integers(8, max(8, len(good) - 1)))] if len(good) > 8 else good
    for candidate in (cut, good[:8] + frame):
        try:
            fast_produce.decode_produce(candidate, version)
        except fast_produce.ProtocolError:
            pass


record_errors = st.lists(st.tuples(int32, nullable_names), max_size=3).map(tuple)
partition_answers = st.tuples(int32, int16, int64, int64, int64, nullable_names, record_errors)


def _response_key(key, version: int) -> dict:
    return {"topic_id": key} if by_id(version) else {"name": key}


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=60, deadline=None)
@given(
    correlation_id=int32,
    throttle=int32,
    data=st.data(),
)
def test_encode_is_byte_identical_to_kafka_python(version, correlation_id, throttle, data):
    topics = data.draw(st.lists(st.tuples(topic_keys(version), st.lists(partition_answers, max_size=3)), max_size=3))
    reference = ProduceResponse(
        version=version,
        throttle_time_ms=throttle,
        responses=[
            TopicResponse(
                **_response_key(name, version),
                partition_responses=[
                    PartitionResponse(
                        index=i,
                        error_code=e,
                        base_offset=b,
                        log_append_time_ms=t,
                        log_start_offset=s,
                        record_errors=[
                            PartitionResponse.BatchIndexAndErrorMessage(batch_index=x, batch_index_error_message=y)
                            for x, y in r
                        ],
                        error_message=m,
                    )
                    for i, e, b, t, s, m, r in parts
                ],
            )
            for name, parts in topics
        ],
    )
    reference.API_VERSION = version
    reference.with_header(correlation_id=correlation_id)
    expected = bytes(reference.encode(header=True, framed=True))
    assert fast_produce_answer.encode_produce_response(version, correlation_id, topics, throttle) == expected


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=40, deadline=None)
@given(correlation_id=int32, data=st.data(), answer=st.tuples(int32, int16, int64, int64, int64))
def test_the_one_partition_shortcut_is_byte_identical_to_kafka_python(version, correlation_id, data, answer):
    """What a producer writing one partition gets back (no throttle, no error message) takes a
    shortcut of precomputed pieces: the same bytes as kafka-python's."""
    name = data.draw(topic_keys(version))
    i, e, b, t, s = answer
    reference = ProduceResponse(
        version=version,
        throttle_time_ms=0,
        responses=[
            TopicResponse(
                **_response_key(name, version),
                partition_responses=[
                    PartitionResponse(
                        index=i,
                        error_code=e,
                        base_offset=b,
                        log_append_time_ms=t,
                        log_start_offset=s,
                        record_errors=[],
                        error_message=None,
                    )
                ],
            )
        ],
    )
    reference.API_VERSION = version
    reference.with_header(correlation_id=correlation_id)
    expected = bytes(reference.encode(header=True, framed=True))
    assert (
        fast_produce_answer.encode_produce_response(version, correlation_id, [(name, [(i, e, b, t, s, None, ())])])
        == expected
    )
    if version >= 5:  # the lane's one pack (`answer_one_partition`)
        assert fast_produce_answer.encode_one_partition(version, correlation_id, name, i, e, b, t, s) == expected


@pytest.mark.parametrize("version", range(fast_produce.MIN_VERSION, fast_produce.MAX_VERSION + 1))
@pytest.mark.parametrize("throttle", [0, 1, 8_000])
def test_a_throttled_answer_carries_its_throttle_time(version, throttle):
    topic = uuid.UUID(int=7) if version >= 13 else "t"  # v13 names topics by id
    answer = fast_produce_answer.ProduceAnswer([(topic, [(0, 0, 42, -1, 0, None, ())])], throttle)
    assert answer.encode_frame(version, 5) == kafka_python_frame(answer.as_kafka_python(version), version, 5)
    decoded = ProduceResponse.decode(answer.encode_frame(version, 5)[4:], version=version, header=True)
    assert decoded.throttle_time_ms == throttle


def test_a_version_past_the_fast_path_is_encoded_by_kafka_python(monkeypatch):
    version = fast_produce.MAX_VERSION - 1
    monkeypatch.setattr(fast_produce, "MAX_VERSION", version - 1)  # kafka-python knows no version past Kafka's
    answer = fast_produce_answer.ProduceAnswer([("t", [(0, 0, 42, -1, 0, None, ())])])
    decoded = ProduceResponse.decode(answer.encode_frame(version, 9)[4:], version=version, header=True)
    assert decoded.header.correlation_id == 9
    assert decoded.responses[0].partition_responses[0].base_offset == 42
