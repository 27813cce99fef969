"""The one-partition Produce lane against the general path it shortcuts.

A request for one topic and one partition (what a producer with one batch ready sends) is decoded by
`decode_one_partition` into a tuple and answered by `answer_one_partition`, with no request or
response objects. Both must be invisible: for every served version and any such request (valid,
corrupt, too large, for unknown topics and partitions, with tagged fields and long varints), the
lane decodes the fields the general decoder decodes, answers byte for byte what `handle_produce`
and the encoder answer, and leaves the same bytes in the log.
"""

from __future__ import annotations

import struct

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.memory_records import MemoryRecordsBuilder

from trafka.adapters.kafka.apis import build_registry
from trafka.adapters.kafka.apis.produce import Uses, answer_one_partition, handle_produce
from trafka.adapters.kafka.observing import UnobservedBroker
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.adapters.kafka.wire import fast_produce
from trafka.adapters.kafka.wire.codec import ProtocolError, decode_request, encode_response
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import ProduceRequest

VERSIONS = range(fast_produce.MIN_VERSION, fast_produce.LANE_MAX_VERSION + 1)  # v13 names topics by id
REGISTRY = build_registry()
NOW = 1_700_000_000_000
TopicData = ProduceRequest.TopicProduceData


def _batch(values: list[bytes], timestamp: int = NOW) -> bytes:
    builder = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1 << 20)
    for value in values:
        builder.append(timestamp=timestamp, key=None, value=value, headers=[])
    builder.close()
    return bytes(builder.buffer())


def _corrupt(batch: bytes) -> bytes:
    return batch[:-1] + bytes([batch[-1] ^ 0xFF])  # the CRC no longer matches


record_sets = st.one_of(
    st.lists(st.binary(max_size=300), min_size=1, max_size=4).map(_batch),  # long values: two-byte varints
    st.just(_batch([b"x" * 20_000])),  # a three-byte length varint
    st.lists(st.binary(max_size=20), min_size=1, max_size=2).map(_batch).map(_corrupt),
    st.just(_batch([b"a"]) + _batch([b"b"])),  # two batches in one partition
    st.just(_batch([b"late"], timestamp=NOW + 10 * 3_600_000)),  # too far in the future
    st.just(_batch([b"y" * 2_000])),  # over the topic's max.message.bytes
    st.binary(max_size=80),  # not a batch at all
    st.just(b""),
)


@st.composite
def one_partition_requests(draw):
    version = draw(st.sampled_from(VERSIONS))
    request = ProduceRequest[version](
        transactional_id=draw(st.none() | st.text(max_size=8)),
        acks=draw(st.sampled_from([1, -1])),
        timeout_ms=draw(st.integers(0, 60_000)),
        topic_data=[
            TopicData(
                name=draw(st.sampled_from(["orders", "small", "missing"])),
                partition_data=[
                    TopicData.PartitionProduceData(index=draw(st.integers(-1, 2)), records=draw(record_sets))
                ],
            )
        ],
    )
    request.with_header(correlation_id=draw(st.integers(0, 2**31 - 1)), client_id=draw(st.none() | st.text(max_size=8)))
    return version, bytes(request.encode(header=True, framed=False))


class _Recorded(UnobservedBroker):
    """An observer that keeps each partition a Produce reported (a subclass: still observed)."""

    def __init__(self) -> None:
        self.produced: list[tuple] = []

    def partition_produced(self, topic, error, records, size) -> None:
        self.produced.append((topic, error, records, size))


def _context(observer=None):
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    adapters = attrs.evolve(default_adapters(settings), clock_ms=lambda: NOW)
    if observer is not None:
        adapters = attrs.evolve(adapters, observer=observer)
    ctx = bootstrap(settings, adapters)
    ctx.services.catalog.create("orders", 2, 1)
    ctx.services.catalog.create("small", 1, 1, {"max.message.bytes": "1000"})
    return ctx


def _log_bytes(ctx) -> dict[TopicPartition, bytes]:
    return {
        tp: ctx.services.replicas.fetch(tp, 0, 1 << 30, True).records
        for topic in ("orders", "small")
        for tp in ctx.services.catalog.get(topic).topic_partitions()
    }


@pytest.mark.parametrize("alone", [False, True])
@settings(max_examples=300, deadline=None)
@given(requests=st.lists(one_partition_requests(), min_size=1, max_size=8))
def test_the_lane_answers_and_appends_exactly_what_the_general_path_does(alone, requests):
    """The requests one after another through the general path, and together through the lane, or
    `alone`: each a group of its own, as a producer waiting for each answer sends them (ADR 133) (what
    each reports to a metrics observer too; without one, see the next test)."""
    general_observer, lane_observer = _Recorded(), _Recorded()
    general, lane = _context(general_observer), _context(lane_observer)
    client = ClientInfo("test", "127.0.0.1")
    expected, ones = [], []
    for version, frame in requests:
        decoded = decode_request(frame, REGISTRY)
        expected.append(
            encode_response(
                handle_produce(general.view(Uses), decoded.body, version, client), version, decoded.correlation_id
            )
        )
        one = fast_produce.decode_one_partition(frame)
        assert one is not None
        topic = decoded.body.topic_data[0]
        assert one == (
            version,
            decoded.correlation_id,
            decoded.body.acks,
            topic.name,
            topic.partition_data[0].index,
            topic.partition_data[0].records,
            decoded.body.transactional_id,
        )
        ones.append(one)
    if alone:
        assert [answer_one_partition(lane.view(Uses), [one])[0] for one in ones] == expected
    else:
        assert answer_one_partition(lane.view(Uses), ones) == expected
    assert _log_bytes(lane) == _log_bytes(general)
    assert lane_observer.produced == general_observer.produced and len(lane_observer.produced) == len(requests)


def test_without_metrics_the_lane_answers_the_same():
    """Nothing collects metrics (the `UnobservedBroker`): the lane skips its observer calls, and
    answers and appends as with an observer."""
    requests = [_one(version, "orders", n % 2, _batch([b"v%d" % n])) for n, version in enumerate(VERSIONS)]
    observer = _Recorded()
    unobserved, observed = _context(), _context(observer)
    assert isinstance(unobserved.services.observer, UnobservedBroker) and observer.produced == []
    ones = [fast_produce.decode_one_partition(frame) for frame in requests]
    assert answer_one_partition(unobserved.view(Uses), ones) == answer_one_partition(observed.view(Uses), ones)
    assert _log_bytes(unobserved) == _log_bytes(observed)
    assert [(topic, records) for topic, _, records, _ in observer.produced] == [("orders", 1)] * len(requests)


def _one(version: int, topic: str, index: int, records: bytes) -> bytes:
    request = ProduceRequest[version](
        transactional_id=None,
        acks=-1,
        timeout_ms=1000,
        topic_data=[
            TopicData(name=topic, partition_data=[TopicData.PartitionProduceData(index=index, records=records)])
        ],
    )
    request.with_header(correlation_id=version, client_id="test")
    return bytes(request.encode(header=True, framed=False))


@pytest.mark.parametrize("version", VERSIONS)
def test_other_shapes_take_the_general_path(version):
    def frame(topic_data, **header):
        request = ProduceRequest[version](transactional_id=None, acks=1, timeout_ms=100, topic_data=topic_data)
        request.with_header(correlation_id=7, client_id="c", **header)
        return bytes(request.encode(header=True, framed=False))

    part = TopicData.PartitionProduceData
    batch = _batch([b"v"])
    assert fast_produce.decode_one_partition(
        frame([TopicData(name="t", partition_data=[part(index=0, records=batch)])])
    )
    for topic_data in (
        [],  # no topic
        [TopicData(name="t", partition_data=[])],  # no partition
        [TopicData(name="t", partition_data=[part(index=0, records=batch), part(index=1, records=batch)])],
        [TopicData(name="t", partition_data=[part(index=0, records=batch)]), TopicData(name="u", partition_data=[])],
        [TopicData(name="t", partition_data=[part(index=0, records=None)])],  # null records
        [TopicData(name="", partition_data=[part(index=0, records=batch)])],  # empty topic name
    ):
        assert fast_produce.decode_one_partition(frame(topic_data)) is None, topic_data


def test_topics_by_id_take_the_general_path():
    import uuid

    request = ProduceRequest[13](
        transactional_id=None,
        acks=1,
        timeout_ms=100,
        topic_data=[
            TopicData(
                topic_id=uuid.uuid4(), partition_data=[TopicData.PartitionProduceData(index=0, records=_batch([b"v"]))]
            )
        ],
    )
    request.with_header(correlation_id=7, client_id="c")
    assert fast_produce.decode_one_partition(bytes(request.encode(header=True, framed=False))) is None


def test_produce_v13_resolves_topic_ids_and_answers_by_id():
    import uuid

    from trafka.domain.errors import ErrorCode
    from trafka.schema_codec.messages import ProduceResponse

    ctx = _context()
    known, unknown = ctx.services.catalog.get("orders").topic_id, uuid.uuid4()
    request = ProduceRequest[13](
        transactional_id=None,
        acks=1,
        timeout_ms=100,
        topic_data=[
            TopicData(topic_id=key, partition_data=[TopicData.PartitionProduceData(index=1, records=_batch([b"v"]))])
            for key in (known, unknown)
        ],
    )
    request.with_header(correlation_id=7, client_id="c")
    decoded = decode_request(bytes(request.encode(header=True, framed=False)), REGISTRY)
    answer = handle_produce(ctx.view(Uses), decoded.body, 13, ClientInfo("test", "127.0.0.1"))
    response = ProduceResponse.decode(encode_response(answer, 13, 7)[4:], version=13, header=True)
    assert [(t.topic_id, t.partition_responses[0].error_code) for t in response.responses] == [
        (known, ErrorCode.NONE),
        (unknown, ErrorCode.UNKNOWN_TOPIC_ID),
    ]
    assert _log_bytes(ctx)[TopicPartition("orders", 1)]
    assert answer.as_kafka_python(13).responses[0].topic_id == known


@given(frame=st.binary(max_size=120))
def test_any_bytes_decode_to_a_request_or_none(frame):
    one = fast_produce.decode_one_partition(b"\x00\x00" + frame)
    assert one is None or isinstance(one, fast_produce.OnePartition)


def test_a_varint_past_five_bytes_takes_the_general_path_which_refuses_it():
    """The lane's records length read as a long varint: the lane declines (its caller expects a request or
    None, never an exception), and the general decoder reports the frame as malformed."""
    head = struct.pack(">hhih", 0, 9, 7, -1) + b"\x00"  # Produce v9, no client id, no header tagged fields
    body = b"\x00" + struct.pack(">hi", 1, 100) + b"\x02\x02t\x02" + struct.pack(">i", 0) + b"\xff" * 6 + b"\x01"
    assert fast_produce.decode_one_partition(head + body) is None
    with pytest.raises(ProtocolError, match="ProduceRequest v9"):
        decode_request(head + body, REGISTRY)


@pytest.mark.parametrize("frame", [b"", b"\x00", b"\x00\x00", b"\x00\x01\x00\x09", b"\x01\x00" + b"\x00" * 40])
def test_the_lane_leaves_short_frames_and_other_apis_to_the_general_path(frame):
    from trafka.adapters.kafka.apis.produce import API

    assert API.lane is not None and API.lane.decode(frame) is None
