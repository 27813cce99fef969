"""Framing and request decoding: any bytes end in a request or a clean protocol error."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trafka.adapters.kafka.apis import build_registry
from trafka.adapters.kafka.wire.codec import DecodedRequest, ProtocolError, UnsupportedVersion, decode_request
from trafka.adapters.kafka.wire.framing import FrameError, FrameReader
from trafka.schema_codec.messages import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, ProduceRequest

REGISTRY = build_registry()


def _request_frame(request, version: int, correlation_id: int = 7) -> bytes:
    request.with_header(correlation_id=correlation_id, client_id="test")
    return bytes(request.encode(version=version, header=True))


def test_decodes_a_real_request_with_its_header():
    frame = _request_frame(MetadataRequest[12](topics=None, allow_auto_topic_creation=False), 12)
    decoded = decode_request(frame, REGISTRY)
    assert (decoded.api_version, decoded.correlation_id, decoded.client_id) == (12, 7, "test")
    assert decoded.body.topics is None and decoded.body.allow_auto_topic_creation is False


def test_a_truncated_body_is_a_protocol_error():
    records = b"x" * 100
    request = ProduceRequest[9](
        transactional_id=None,
        acks=1,
        timeout_ms=100,
        topic_data=[
            ProduceRequest.TopicProduceData(
                name="t",
                partition_data=[ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=records)],
            )
        ],
    )
    frame = _request_frame(request, 9)
    assert decode_request(frame, REGISTRY).body.topic_data[0].partition_data[0].records == records
    with pytest.raises(ProtocolError):
        decode_request(frame[:-10], REGISTRY)
    # Trailing bytes are ignored, as Kafka ignores them (librdkafka sends some with Metadata v13).
    assert decode_request(frame + b"\0\1\0", REGISTRY).body.acks == 1


def test_unknown_api_key_and_unsupported_version():
    with pytest.raises(ProtocolError, match="unknown API key"):
        decode_request(struct.pack(">hhi", 999, 0, 1) + b"\xff\xff", REGISTRY)
    with pytest.raises(UnsupportedVersion) as info:
        decode_request(struct.pack(">hhi", MetadataRequest.API_KEY, 99, 5) + b"\xff\xff", REGISTRY)
    assert (info.value.api_key, info.value.api_version, info.value.correlation_id) == (3, 99, 5)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300))
def test_any_frame_body_decodes_or_fails_cleanly(frame):
    try:
        assert isinstance(decode_request(frame, REGISTRY), DecodedRequest)
    except (ProtocolError, UnsupportedVersion):
        pass


@settings(max_examples=300, deadline=None)
@given(
    key=st.sampled_from([k for k, _, _ in REGISTRY.supported()]),
    version=st.integers(min_value=-1, max_value=20),
    tail=st.binary(max_size=200),
)
def test_garbage_after_a_valid_header_prefix_fails_cleanly(key, version, tail):
    frame = struct.pack(">hhi", key, version, 1) + tail
    try:
        decode_request(frame, REGISTRY)
    except (ProtocolError, UnsupportedVersion):
        pass


@given(st.lists(st.binary(max_size=40), max_size=10))
def test_frame_reader_reassembles_frames_from_any_chunking(chunks):
    bodies = [c for c in chunks if c]
    stream = b"".join(struct.pack(">i", len(b)) + b for b in bodies)
    reader = FrameReader(1 << 20)
    out = []
    for i in range(0, len(stream), 3):
        reader.feed(stream[i : i + 3])
        while (frame := reader.next_frame()) is not None:
            out.append(frame)
    assert out == bodies and reader.buffered == 0


@pytest.mark.parametrize("size", [-1, 0, (1 << 20) + 1, 2**31 - 1])
def test_frame_sizes_are_checked_before_the_body_arrives(size):
    reader = FrameReader(1 << 20)
    reader.feed(struct.pack(">i", size))
    with pytest.raises(FrameError):
        reader.next_frame()


def test_api_versions_is_computed_from_the_registry():
    from trafka.adapters.kafka.apis.api_versions import handle_api_versions
    from trafka.adapters.memory import MemoryCatalogStore
    from trafka.domain.features import FeatureControl

    class Ctx:
        registry = REGISTRY
        features = FeatureControl(MemoryCatalogStore(), 1)

        class replicas:
            @staticmethod
            def metadata_log_end_offset():
                return 0

    response = handle_api_versions(
        Ctx(), ApiVersionsRequest[3](client_software_name="t", client_software_version="1"), 3, None
    )
    advertised = {(k.api_key, k.min_version, k.max_version) for k in response.api_keys}
    assert advertised == set(REGISTRY.supported())
    assert {k for k, _, _ in advertised} >= {0, 1, 2, 3, 18, 19, 20, 32, 37, 60, 75}
    encoded = response.encode(version=3)
    decoded = ApiVersionsResponse.decode(encoded, version=3)  # kafka-python's class reads trafka's
    assert {(k.api_key, k.min_version, k.max_version) for k in decoded.api_keys} == advertised


def test_registry_refuses_versions_the_schema_lacks():
    from trafka.adapters.kafka.api import HandlerRegistry, KafkaApi, top_level_error

    def api(request, versions):
        return KafkaApi(request, None, versions, lambda *a: None, None, top_level_error, read_only=False)

    with pytest.raises(ValueError):
        HandlerRegistry().register(api(ProduceRequest, (0, 11)))
    with pytest.raises(ValueError):
        HandlerRegistry().register(api(MetadataRequest, (0, 99)))


@pytest.mark.parametrize(
    ("header", "failure"),
    [
        (struct.pack(">h", 9) + b"c", "the client id runs past the frame"),
        (struct.pack(">h", -1) + b"\x80", "a bad varint in the request header"),  # a tagged-field count cut short
        (struct.pack(">h", -1) + b"\x01\x00\x09", "the header's tagged fields run past the frame"),
    ],
)
@pytest.mark.parametrize(("api_key", "version"), [(3, 12), (0, 9), (1, 12)])  # Metadata, Produce, Fetch
def test_the_codec_and_both_fast_paths_read_the_request_header_alike(api_key, version, header, failure):
    with pytest.raises(ProtocolError, match=failure):
        decode_request(struct.pack(">hhi", api_key, version, 7) + header, REGISTRY)
