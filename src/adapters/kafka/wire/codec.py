"""Request and response codec on top of trafka's schema-compiled message classes (`wire/messages`).

Bodies go through the classes `schema_codec` compiles from Kafka's JSON schemas (ADRs 71, 92), except
where a room declares a measured `FastDecoder` for some versions (Produce's `fast_produce`, Fetch's
`fast_fetch_request`, proven equal to the schema codec by differential tests, ADRs 9 and 116); a response that encodes itself (a
fast-path answer) does so. This module reads the request header (`primitives.request_header`, which
both fast paths read it with too), picks the class and version, and turns every decoding failure into a
`ProtocolError` for the connection to report.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

import attrs

from ..api import HandlerRegistry, KafkaApi
from .non_null import null_field
from .primitives import request_header

_KEY_VERSION_CORRELATION = struct.Struct(">hhi")
# Kafka 3.x-4.x's APIs (DescribeCluster on: KIP-848, KIP-932, KIP-714, ...) refuse a null in a non-nullable
# field as Kafka's generated parsers do (issue 42); the older ones keep kafka-python's leniency.
_NULL_CHECKED_FROM = 60
_API_VERSIONS = 18


class ProtocolError(Exception):
    """A frame that cannot be a valid request; the connection that sent it is closed."""


@attrs.frozen
class UnsupportedVersion(Exception):
    """A known API at a version the broker does not serve."""

    api_key: int
    api_version: int
    correlation_id: int


class DecodedRequest(NamedTuple):
    handler: KafkaApi
    api_version: int
    correlation_id: int
    client_id: str | None
    body: object


_I32 = struct.Struct(">i")


def decode_request(frame: bytes, registry: HandlerRegistry) -> DecodedRequest:
    """Decode one frame body (without its size prefix) into a request the registry can serve.

    Raises ProtocolError for anything malformed or unknown, UnsupportedVersion for a version outside
    the handler's range.
    """
    if len(frame) < _KEY_VERSION_CORRELATION.size:
        raise ProtocolError(f"truncated request header ({len(frame)} bytes)")
    api_key, api_version, correlation_id = _KEY_VERSION_CORRELATION.unpack_from(frame)
    handler = registry.get(api_key)
    if handler is None:
        raise ProtocolError(f"unknown API key {api_key}")
    if not handler.min_version <= api_version <= handler.max_version:
        raise UnsupportedVersion(api_key, api_version, correlation_id)
    fast = handler.fast_decoder
    if fast is not None and fast.versions[0] <= api_version <= fast.versions[1]:
        try:
            correlation_id, client_id, body = fast.decode(frame, api_version)
        except fast.error as exc:
            raise ProtocolError(str(exc)) from exc
        return DecodedRequest(handler, api_version, correlation_id, client_id, body)
    request_class = handler.request
    flexible = request_class.flexible_version_q(api_version)
    try:
        _, client_id, pos = request_header(frame, flexible)
        # Bytes after the last field are ignored, as Kafka's generated parsers ignore them (librdkafka's
        # all-topics Metadata v13 request carries three).
        body = request_class.decode(memoryview(frame)[pos:], api_version, exact=False)
    except Exception as exc:
        raise ProtocolError(f"malformed {request_class.__name__} v{api_version}: {exc!r}") from exc
    if api_key >= _NULL_CHECKED_FROM:
        null = null_field(request_class, body, api_version)
        if null is not None:
            raise ProtocolError(f"non-nullable field {null} of {request_class.__name__} v{api_version} was null")
    return DecodedRequest(handler, api_version, correlation_id, client_id, body)


def encode_response_pieces(response: object, api_version: int, correlation_id: int) -> list[bytes]:
    """The framed response as buffers to write in order (a Fetch's large record sets stay separate)."""
    encode_pieces = getattr(response, "encode_pieces", None)
    if encode_pieces is not None:
        return encode_pieces(api_version, correlation_id)
    return [encode_response(response, api_version, correlation_id)]


def encode_response(response: object, api_version: int, correlation_id: int) -> bytes:
    """The framed bytes of a response, with the header version the API and version call for."""
    encode_frame = getattr(response, "encode_frame", None)  # a fast-path response encodes itself
    if encode_frame is not None:
        return encode_frame(api_version, correlation_id)
    body = response.encode(api_version)  # type: ignore[attr-defined]
    # Response header v1 (a tagged-field count after the correlation id) for flexible versions, but
    # ApiVersions' (key 18), which stays v0 so that a client can read it before knowing the versions.
    tagged = response.flexible_version_q(api_version) and response.API_KEY != _API_VERSIONS  # type: ignore[attr-defined]
    header = _I32.pack(correlation_id) + (b"\x00" if tagged else b"")
    return _I32.pack(len(header) + len(body)) + header + body
