"""The connection's sans-I/O core (issue 40, item 5): bytes fed in, one action per frame out (serve,
lane, answer, decode off the loop, close), SASL's steps and bounds, the mute and the client info, all
without a socket, a task or a clock."""

from __future__ import annotations

import logging
import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.adapters.kafka.test_sasl_reauthentication import USERS, authenticator, handshake, token
from trafka.adapters.kafka.apis import build_registry
from trafka.adapters.kafka.connection.core import (
    CLOSE,
    DECODE_OFF_LOOP_BYTES,
    Answer,
    Close,
    ConnectionCore,
    DecodeOffLoop,
    LaneGroup,
)
from trafka.adapters.kafka.request_context import Endpoint
from trafka.adapters.kafka.wire.codec import DecodedRequest
from trafka.domain.security import ANONYMOUS, KafkaPrincipal
from trafka.schema_codec.messages import ApiVersionsRequest, FetchRequest, MetadataRequest, ProduceRequest

from .test_produce_lane import _batch

REGISTRY = build_registry()
PRODUCE = REGISTRY.get(0)
LANE_DECODE = PRODUCE.lane.decode
MAX_REQUEST_BYTES = 4 << 20


def _core(**extra) -> ConnectionCore:
    return ConnectionCore(
        REGISTRY,
        MAX_REQUEST_BYTES,
        "10.0.0.1:5000",
        "10.0.0.1",
        "PLAINTEXT",
        Endpoint("h", 9092),
        lane_decode=LANE_DECODE,
        **extra,
    )


def framed(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + body


def _encoded(request, version: int, correlation_id: int = 1) -> bytes:
    request.with_header(correlation_id=correlation_id, client_id="core")
    return bytes(request.encode(version=version, header=True))


def metadata(correlation_id: int = 1) -> bytes:
    return framed(_encoded(MetadataRequest[12](topics=None, allow_auto_topic_creation=False), 12, correlation_id))


def produce(correlation_id: int, acks: int = -1) -> bytes:
    data = ProduceRequest.TopicProduceData
    request = ProduceRequest[9](
        transactional_id=None,
        acks=acks,
        timeout_ms=1000,
        topic_data=[data(name="t", partition_data=[data.PartitionProduceData(index=0, records=_batch([b"v"]))])],
    )
    return framed(_encoded(request, 9, correlation_id))


def _actions(core: ConnectionCore, lane_open: bool = True, room: int = 32) -> list:
    actions = []
    while (frame := core.next_frame()) is not None:
        if isinstance(frame, Close):
            actions.append(frame)
            break
        actions.append(core.handle(frame, 0, lane_open, room))
    return actions


def test_a_request_is_decoded_for_serving_and_more_bytes_are_asked_for_between():
    core = _core()
    whole = metadata(5)
    core.frames.feed(whole[:7])
    assert core.next_frame() is None  # not a whole frame yet
    core.frames.feed(whole[7:])
    (action,) = _actions(core)
    assert type(action) is DecodedRequest
    assert action.handler.name == "Metadata" and action.correlation_id == 5 and action.api_version == 12


def test_consecutive_lane_frames_are_one_group_and_the_frame_behind_them_comes_next():
    core = _core()
    core.frames.feed(produce(1) + produce(2) + produce(3) + metadata(4) + produce(5))
    group, request, last = _actions(core)
    assert type(group) is LaneGroup and [one.correlation_id for one in group] == [1, 2, 3]
    assert type(request) is DecodedRequest and request.correlation_id == 4
    assert type(last) is LaneGroup and [one.correlation_id for one in last] == [5]


def test_the_group_stops_at_the_room_left_and_the_lane_closed_serves_produce_as_any_request():
    core = _core()
    core.frames.feed(produce(1) + produce(2) + produce(3))
    assert [len(group) for group in _actions(core, room=2)] == [2, 1]
    core.frames.feed(produce(4) + produce(0, acks=0))  # acks=0 is not the lane's shape
    first, second = _actions(core, lane_open=False)
    assert type(first) is DecodedRequest and first.handler.name == "Produce" and first.correlation_id == 4
    assert type(second) is DecodedRequest and second.body.acks == 0


def test_a_large_frame_without_a_fast_decoder_is_decoded_off_the_loop_and_produce_is_not():
    core = _core()
    body = _encoded(MetadataRequest[12](topics=None, allow_auto_topic_creation=False), 12)
    large = body + bytes(DECODE_OFF_LOOP_BYTES)  # trailing bytes past the request: the codec's business
    core.frames.feed(framed(large))
    (action,) = _actions(core)
    assert type(action) is DecodeOffLoop and action.frame == large
    assert type(core.decoded(large, ValueError("x"))) is Close
    data = ProduceRequest.TopicProduceData
    huge = ProduceRequest[9](
        transactional_id=None,
        acks=1,
        timeout_ms=1000,
        topic_data=[
            data(name="t", partition_data=[data.PartitionProduceData(index=0, records=_batch([bytes(1 << 20)]))])
        ],
    )
    core.frames.feed(framed(_encoded(huge, 9)))
    (action,) = _actions(core, lane_open=False, room=32)
    assert type(action) is DecodedRequest  # Produce's fast decoder is cheap at any size


def test_a_large_fetch_is_decoded_off_the_loop_although_it_has_a_fast_decoder():
    """A Fetch frame is large by its partitions, each one decoded (ADR 116): off the loop, as before."""
    topic = FetchRequest.FetchTopic
    partitions = [topic.FetchPartition(partition=i, fetch_offset=0, partition_max_bytes=1) for i in range(40_000)]
    request = FetchRequest[16](max_wait_ms=0, min_bytes=1, topics=[topic(topic_id=uuid.uuid4(), partitions=partitions)])
    large = _encoded(request, 16)
    assert len(large) >= DECODE_OFF_LOOP_BYTES
    core = _core()
    core.frames.feed(framed(large))
    (action,) = _actions(core)
    assert type(action) is DecodeOffLoop and action.frame == large


def test_unsupported_versions_close_but_api_versions_answers_and_garbage_closes(caplog):
    core = _core()
    core.frames.feed(
        framed(
            _encoded(MetadataRequest[12](topics=None, allow_auto_topic_creation=False), 12)[:2]
            + b"\x00\x63"
            + bytes(10)
        )
    )
    with caplog.at_level(logging.WARNING, "trafka.server"):
        assert _actions(core) == [CLOSE]
    assert "unsupported version 99 of API key 3" in caplog.text
    core = _core()
    core.frames.feed(framed(b"\x00\x12\x00\x63\x00\x00\x00\x07\x00\x00"))  # ApiVersions v99
    (answer,) = _actions(core)
    assert type(answer) is Answer and answer.data[4:8] == (7).to_bytes(4, "big")
    core = _core()
    core.frames.feed(framed(b"\x00\x03\x00\x0c\x00"))  # Metadata v12 cut short
    assert _actions(core) == [CLOSE]


def test_a_frame_over_the_bound_closes_before_its_body_arrives(caplog):
    core = _core()
    core.frames.feed((MAX_REQUEST_BYTES + 1).to_bytes(4, "big"))
    with caplog.at_level(logging.WARNING, "trafka.server"):
        assert core.next_frame() is CLOSE
    assert "exceeds the maximum request size" in caplog.text


def test_sasl_bounds_frames_answers_its_steps_and_then_serves_as_the_principal(caplog):
    core = _core(authenticator=authenticator(0), sasl_max_receive_size=1000, failed_authentication_delay_ms=100)
    assert core.authenticating and core.frames.max_frame_bytes == 1000
    core.frames.feed(framed(handshake("PLAIN")) + framed(token(b"\0alice\0" + USERS["alice"].encode())) + metadata(3))
    first, second, request = _actions(core)
    assert type(first) is Answer and type(second) is Answer
    assert not core.authenticating and core.frames.max_frame_bytes == MAX_REQUEST_BYTES  # the SASL bound is lifted
    assert type(request) is DecodedRequest
    assert core.principal == KafkaPrincipal("User", "alice")
    assert core.client("c").principal is core.principal


def test_a_request_before_authentication_closes_after_the_failed_authentication_delay(caplog):
    core = _core(authenticator=authenticator(0), sasl_max_receive_size=1000, failed_authentication_delay_ms=100)
    core.frames.feed(metadata(3))
    with caplog.at_level(logging.INFO, "trafka.server"):
        (close,) = _actions(core)
    assert type(close) is Close and close.delay_s == 0.1
    assert "closing connection from 10.0.0.1:5000" in caplog.text
    core = _core(authenticator=authenticator(0), sasl_max_receive_size=1000)
    core.frames.feed((1001).to_bytes(4, "big"))
    with caplog.at_level(logging.INFO, "trafka.server"):
        assert core.next_frame() is CLOSE
    assert "Failing SASL authentication due to invalid receive size" in caplog.text


def test_an_expired_sasl_session_closes_at_the_next_frame():
    core = _core(authenticator=authenticator(1000), sasl_max_receive_size=1000)
    core.frames.feed(framed(handshake("PLAIN")) + framed(token(b"\0alice\0" + USERS["alice"].encode())))
    _actions(core)
    core.frames.feed(metadata(3))
    frame = core.next_frame()
    assert type(core.handle(frame, 500, True, 32)) is DecodedRequest
    core.frames.feed(metadata(4))
    assert core.handle(core.next_frame(), 5000, True, 32) is CLOSE


def test_the_mute_keeps_the_latest_end_and_the_client_info_is_kept_while_nothing_changes():
    core = _core()
    core.mute(100, now=5.0)
    core.mute(10, now=5.0)
    assert core.muted_until == 5.1
    core.connection = identity = object()
    first = core.client("a")
    assert core.client("a") is first and first.connection is identity and first.principal is ANONYMOUS
    assert first.host == "10.0.0.1" and first.listener == "PLAINTEXT" and first.advertised == Endpoint("h", 9092)
    assert core.client(None).client_id == "" and core.client("b") is not first


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["produce", "metadata"]), min_size=1, max_size=12), st.integers(1, 5), st.data())
def test_every_frame_becomes_exactly_one_request_in_order_however_the_bytes_are_cut(kinds, room, data):
    stream = b"".join(produce(n) if kind == "produce" else metadata(n) for n, kind in enumerate(kinds))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    core = _core()
    seen = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)]):
        core.frames.feed(stream[start:end])
        for action in _actions(core, room=room):
            if type(action) is LaneGroup:
                assert 1 <= len(action) <= room
                seen += [("produce", one.correlation_id) for one in action]
            else:
                seen.append((action.handler.name.lower(), action.correlation_id))
    assert seen == [(kind, n) for n, kind in enumerate(kinds)]


def test_api_versions_before_anything_else_is_a_request_like_any():
    core = _core()
    core.frames.feed(framed(_encoded(ApiVersionsRequest[3](client_software_name="t", client_software_version="1"), 3)))
    (action,) = _actions(core)
    assert type(action) is DecodedRequest and action.handler.name == "ApiVersions"
