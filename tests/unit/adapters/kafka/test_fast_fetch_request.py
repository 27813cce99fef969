"""The Fetch request fast decoder (ADR 116) against the schema codec, its reference: at every version
served, any request the schema codec encodes (tagged fields set or not, topics by name or by id,
sessions, forgotten topics, rack ids) decodes to an equal `FetchRequest`, attribute for attribute, and
any frame, however cut or garbled, decodes to what the schema codec decodes or fails where it fails."""

from __future__ import annotations

import struct
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trafka.adapters.kafka.apis import build_registry
from trafka.adapters.kafka.wire import fast_fetch_request as fast_fetch
from trafka.adapters.kafka.wire.codec import ProtocolError, decode_request
from trafka.adapters.kafka.wire.primitives import request_header
from trafka.schema_codec.messages import FetchRequest, Message

VERSIONS = range(fast_fetch.REQUEST_VERSIONS[0], fast_fetch.REQUEST_VERSIONS[1] + 1)
REGISTRY = build_registry()

Topic = FetchRequest.FetchTopic
Partition = Topic.FetchPartition
Forgotten = FetchRequest.ForgottenTopic

int8 = st.integers(-(2**7), 2**7 - 1)
int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
texts = st.text(max_size=12)
# the zero id is the schema codec's None: both kinds are drawn
topic_ids = st.sampled_from([uuid.UUID(int=0)]) | st.uuids()


def _key(version: int):
    return topic_ids.map(lambda i: {"topic_id": i}) if version >= 13 else texts.map(lambda n: {"topic": n})


@st.composite
def fetch_requests(draw, version: int, tagged: bool):
    """A FetchRequest at `version`; with `tagged`, the tagged fields (followers' and brokers') may be set."""
    maybe = (lambda strategy: st.none() | strategy) if tagged else (lambda strategy: st.none())
    partitions = st.builds(
        lambda index, leader, offset, last, start, limit, directory, high: Partition(
            version=version,
            partition=index,
            current_leader_epoch=leader,
            fetch_offset=offset,
            last_fetched_epoch=last,
            log_start_offset=start,
            partition_max_bytes=limit,
            **({} if directory is None else {"replica_directory_id": directory}),
            **({} if high is None else {"high_watermark": high}),
        ),
        int32,
        int32,
        int64,
        int32,
        int64,
        int32,
        maybe(st.uuids()),
        maybe(int64),
    )
    topics = st.builds(
        lambda key, parts: Topic(version=version, partitions=parts, **key),
        _key(version),
        st.lists(partitions, max_size=3),
    )
    forgotten = st.builds(
        lambda key, parts: Forgotten(version=version, partitions=parts, **key),
        _key(version),
        st.lists(int32, max_size=4),
    )
    fields = {
        "replica_id": draw(int32),
        "max_wait_ms": draw(int32),
        "min_bytes": draw(int32),
        "max_bytes": draw(int32),
        "isolation_level": draw(int8),
        "session_id": draw(int32),
        "session_epoch": draw(int32),
        "topics": draw(st.lists(topics, max_size=3)),
        "forgotten_topics_data": draw(st.lists(forgotten, max_size=2)),
        "rack_id": draw(texts),
    }
    cluster = draw(maybe(texts))
    if cluster is not None:
        fields["cluster_id"] = cluster
    state = draw(maybe(st.tuples(int32, int64)))
    if state is not None and version >= 15:
        fields["replica_state"] = FetchRequest.ReplicaState(
            version=version, replica_id=state[0], replica_epoch=state[1]
        )
    request = FetchRequest(version=version, **fields)
    request.with_header(correlation_id=draw(int32), client_id=draw(st.none() | texts))
    return request


def _reference(frame: bytes, version: int):
    """The general path: the header as the codec reads it, the body by the schema codec."""
    correlation_id, client_id, pos = request_header(frame, version >= fast_fetch.FLEXIBLE_FROM)
    return correlation_id, client_id, FetchRequest.decode(memoryview(frame)[pos:], version, exact=False)


def _dump(value):
    """Everything a decoded message holds, recursively: which attributes are set, and to what."""
    if isinstance(value, Message):
        return (type(value).__qualname__, {k: _dump(v) for k, v in vars(value).items()})
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value


def _decoded(frame: bytes, version: int):
    try:
        correlation_id, client_id, body = fast_fetch.decode_fetch(frame, version)
    except fast_fetch.ProtocolError:
        return "error"
    return correlation_id, client_id, _dump(body)


def _referenced(frame: bytes, version: int):
    try:
        correlation_id, client_id, body = _reference(frame, version)
    except Exception:
        return "error"
    return correlation_id, client_id, _dump(body)


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_decode_equals_the_schema_codec(version, data):
    request = data.draw(fetch_requests(version, tagged=False))
    frame = bytes(request.encode(header=True))
    correlation_id, client_id, body = fast_fetch._decode(frame, version)  # read here, not handed over
    assert (correlation_id, client_id, _dump(body)) == _referenced(frame, version)


@pytest.mark.parametrize("version", [v for v in VERSIONS if v >= fast_fetch.FLEXIBLE_FROM])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_tagged_fields_decode_as_the_schema_codec_decodes_them(version, data):
    request = data.draw(fetch_requests(version, tagged=True))
    frame = bytes(request.encode(header=True))
    assert _decoded(frame, version) == _referenced(frame, version)


@pytest.mark.parametrize("version", VERSIONS)
@settings(max_examples=60, deadline=None)
@given(data=st.data(), garbage=st.binary(max_size=40))
def test_cut_or_garbled_frames_decode_or_fail_as_the_schema_codec(version, data, garbage):
    good = bytes(data.draw(fetch_requests(version, tagged=False)).encode(header=True))
    cut = data.draw(st.integers(8, len(good)))
    at = data.draw(st.integers(8, len(good)))
    flipped = bytearray(good)
    if at < len(good):
        flipped[at] = data.draw(st.integers(0, 255))
    for frame in (good[:cut], good[:cut] + garbage, bytes(flipped)):
        assert _decoded(frame, version) == _referenced(frame, version)


def test_null_arrays_and_strings_are_left_to_the_schema_codec():
    """A null topics array or rack id is not a shape clients send: the codec decides (it reads None)."""
    head = struct.pack(">hhih", 1, 11, 7, 1) + b"c"
    body = struct.pack(">iiiibii", -1, 500, 1, 1000, 0, 0, -1) + struct.pack(">i", -1) + struct.pack(">i", 0)
    frame = head + body + struct.pack(">h", -1)
    assert _decoded(frame, 11) == _referenced(frame, 11)
    assert _decoded(frame, 11)[2][1]["topics"] is None


@pytest.mark.parametrize("version", [4, 11, 12, 13, 17])
def test_the_codec_takes_the_fast_decoder(version, monkeypatch):
    request = FetchRequest(version=version, max_wait_ms=100, min_bytes=1, topics=[])
    request.with_header(correlation_id=9, client_id="c")
    taken = []
    original = fast_fetch._decode
    monkeypatch.setattr(fast_fetch, "_decode", lambda *a: taken.append(a) or original(*a))
    decoded = decode_request(bytes(request.encode(header=True)), REGISTRY)
    assert taken
    assert isinstance(decoded.body, FetchRequest)
    assert (decoded.correlation_id, decoded.client_id, decoded.body.max_wait_ms) == (9, "c", 100)


def test_a_malformed_frame_is_a_protocol_error_of_the_codec():
    frame = struct.pack(">hhih", 1, 12, 7, -1) + b"\x00" + b"\x01\x02"
    with pytest.raises(ProtocolError, match="FetchRequest v12"):
        decode_request(frame, REGISTRY)


def test_a_topic_id_named_again_is_the_same_uuid_and_the_kept_ids_are_bounded():
    """ADR 130: the decoder keeps one `UUID` per raw id (immutable, so shared), equal to the codec's;
    past `_IDS_KEPT` distinct ids it starts over, so a client naming random ids holds no memory."""

    def decoded_id(topic_id: uuid.UUID):
        request = FetchRequest(
            version=16,
            max_wait_ms=1,
            min_bytes=1,
            max_bytes=1,
            isolation_level=0,
            session_id=0,
            session_epoch=-1,
            topics=[Topic(version=16, topic_id=topic_id, partitions=[])],
            forgotten_topics_data=[],
            rack_id="",
        )
        request.with_header(correlation_id=1, client_id="c")
        frame = bytes(request.encode(header=True))
        found = fast_fetch._decode(frame, 16)[2].topics[0].topic_id
        assert found == _reference(frame, 16)[2].topics[0].topic_id
        return found

    named = uuid.uuid4()
    assert decoded_id(named) is decoded_id(named) == named
    for _ in range(fast_fetch._IDS_KEPT + 10):
        decoded_id(uuid.uuid4())
        assert len(fast_fetch._ids) <= fast_fetch._IDS_KEPT


@st.composite
def one_partition_requests(draw, version: int, tagged: bool):
    """The frame a consumer sends at the log end: one topic by id, one partition, nothing forgotten."""
    request = draw(fetch_requests(version, tagged))
    partition = Partition(
        version=version, partition=draw(int32), fetch_offset=draw(int64), partition_max_bytes=draw(int32)
    )
    request.topics = [Topic(version=version, topic_id=draw(st.uuids().filter(lambda i: i.int)), partitions=[partition])]
    request.forgotten_topics_data = []
    return request


@pytest.mark.parametrize("version", [v for v in VERSIONS if v >= 13])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_the_one_partition_frame_is_read_in_one_go_as_decode_reads_it(version, data):
    """ADR 134: the consumer's sessionless one-partition frame is read by `_one_partition` (not handed to
    `_decode`), to what the schema codec reads; with a tagged field set it is left to `_decode`."""
    request = data.draw(one_partition_requests(version, tagged=False))
    frame = bytes(request.encode(header=True))
    fast = fast_fetch._one_partition(frame, version)
    referenced = _referenced(frame, version)
    if referenced[1] is not None and len(request.rack_id.encode()) < 0x7E:  # a client id, a short rack id
        assert fast is not None
    if fast is not None:
        correlation_id, client_id, body = fast
        assert (correlation_id, client_id, _dump(body)) == referenced
    tagged = bytes(data.draw(one_partition_requests(version, tagged=True)).encode(header=True))
    fast = fast_fetch._one_partition(tagged, version)
    assert fast is None or (fast[0], fast[1], _dump(fast[2])) == _referenced(tagged, version)


@pytest.mark.parametrize("version", [v for v in VERSIONS if v >= 13])
@settings(max_examples=60, deadline=None)
@given(data=st.data(), garbage=st.binary(max_size=40))
def test_a_cut_or_garbled_one_partition_frame_decodes_or_fails_as_the_schema_codec(version, data, garbage):
    good = bytes(data.draw(one_partition_requests(version, tagged=False)).encode(header=True))
    cut = data.draw(st.integers(8, len(good)))
    at = data.draw(st.integers(8, len(good)))
    flipped = bytearray(good)
    if at < len(good):
        flipped[at] = data.draw(st.integers(0, 255))
    for frame in (good[:cut], good[:cut] + garbage, bytes(flipped)):
        assert _decoded(frame, version) == _referenced(frame, version)
