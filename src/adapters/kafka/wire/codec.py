"""Request and response codec on top of kafka-python's schema-generated message classes.

Headers and bodies go through `kafka.protocol` (pinned to kafka-python 3.0.x, whose classes are
compiled from Kafka's JSON schemas), except where a room declares a measured `FastDecoder` for some
versions (Produce's `fast_produce`, proven equal to kafka-python's by differential tests, ADR 9); a
response that encodes itself (a fast-path answer) does so. This module only picks the class and
version, checks that a body was consumed exactly, and turns every decoding failure into a
`ProtocolError` for the connection to report.
"""

from __future__ import annotations

import functools
import struct
from typing import NamedTuple

import attrs
from kafka.protocol.api_header import RequestHeader

from ..api import HandlerRegistry, KafkaApi

_KEY_VERSION_CORRELATION = struct.Struct(">hhi")


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


@functools.cache
def _header_decoder(flexible: bool):
    """kafka.protocol's compiled decoder for request header v2 (flexible) or v1.

    The client id is a non-compact nullable string in both, as Kafka keeps it.
    """
    return RequestHeader._struct.compiled_decode_from(
        2 if flexible else 1, compact=False, tagged=flexible, data_class=RequestHeader
    )


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
        view = memoryview(frame)
        header, pos = _header_decoder(flexible)(view, 0)
        decode_from = request_class._struct.compiled_decode_from(
            api_version, compact=flexible, tagged=flexible, data_class=request_class[None]
        )
        body, end = decode_from(view, pos)
    except Exception as exc:
        raise ProtocolError(f"malformed {request_class.__name__} v{api_version}: {exc!r}") from exc
    if end > len(frame):
        raise ProtocolError(f"truncated {request_class.__name__} v{api_version}")
    # Bytes after the last field are ignored, as Kafka's generated parsers ignore them (librdkafka's
    # all-topics Metadata v13 request carries three).
    return DecodedRequest(handler, api_version, correlation_id, header.client_id, body)


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
    response.API_VERSION = api_version  # type: ignore[attr-defined]
    response.with_header(correlation_id=correlation_id)  # type: ignore[attr-defined]
    return bytes(response.encode(header=True, framed=True))  # type: ignore[attr-defined]
