"""The Produce fast path: request decode and response encode with `struct`, for versions 3-11.

This is the one place a hand-written codec is allowed (see ADR 9): Produce is the request every
producer sends for every batch, and building kafka-python message objects for it cost a third of the
broker's time per request. kafka-python's classes stay the reference: `tests/unit/test_fast_produce.py`
proves, with hypothesis, that this module decodes exactly what `ProduceRequest` decodes and encodes
byte for byte what `ProduceResponse` encodes, at every version served (null and empty fields, tagged
fields, unknown tagged fields). Any other API, and any version outside 3-11, goes through kafka-python.

Decoding keeps each partition's records as a slice of the frame (one copy, as before); nothing here
looks inside a record batch. Malformed input raises `ProtocolError`, as the generic decoder does.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence


class ProtocolError(Exception):
    """A malformed Produce frame (the codec reports it as its own ProtocolError)."""

MIN_VERSION, MAX_VERSION = 3, 11
FLEXIBLE_FROM = 9

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_ACKS_TIMEOUT = struct.Struct(">hi")
_HEAD = struct.Struct(">hhi")
_PARTITION_V5 = struct.Struct(">ihqqq")  # index, error code, base offset, log append time, log start offset
_PARTITION_V3 = struct.Struct(">ihqq")  # (v3-4: no log start offset)
_CORRELATION = struct.Struct(">ii")  # frame size, correlation id


class PartitionProduceData:
    __slots__ = ("index", "records")

    def __init__(self, index: int, records: bytes | None) -> None:
        self.index = index
        self.records = records


class TopicProduceData:
    __slots__ = ("name", "partition_data")

    def __init__(self, name: str, partition_data: list[PartitionProduceData] | None) -> None:
        self.name = name
        self.partition_data = partition_data


class ProduceRequestView:
    """The fields of a ProduceRequest the broker uses, under kafka-python's attribute names."""

    __slots__ = ("transactional_id", "acks", "timeout_ms", "topic_data")

    def __init__(self, transactional_id: str | None, acks: int, timeout_ms: int, topic_data: list[TopicProduceData] | None) -> None:
        self.transactional_id = transactional_id
        self.acks = acks
        self.timeout_ms = timeout_ms
        self.topic_data = topic_data


# -- decoding --------------------------------------------------------------------------------------


def _uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift > 28:
            raise ProtocolError("varint too long")


def _skip_tagged_fields(buf: bytes, pos: int) -> int:
    count, pos = _uvarint(buf, pos)
    for _ in range(count):
        _, pos = _uvarint(buf, pos)
        size, pos = _uvarint(buf, pos)
        pos += size
    return pos


class _Reader:
    """Reads the fields of one version's layout; `flexible` picks compact lengths and tagged fields."""

    __slots__ = ("buf", "flexible")

    def __init__(self, buf: bytes, flexible: bool) -> None:
        self.buf = buf
        self.flexible = flexible

    def length(self, pos: int, wide: bool) -> tuple[int, int]:
        """A length prefix: -1 for null."""
        if self.flexible:
            value, pos = _uvarint(self.buf, pos)
            return value - 1, pos
        if wide:
            return _I32.unpack_from(self.buf, pos)[0], pos + 4
        return _I16.unpack_from(self.buf, pos)[0], pos + 2

    def string(self, pos: int) -> tuple[str | None, int]:
        size, pos = self.length(pos, False)
        if size < 0:
            return None, pos
        end = pos + size
        if end > len(self.buf):
            raise ProtocolError("string past the end of the frame")
        return self.buf[pos:end].decode(), end


def decode_produce(frame: bytes, version: int) -> tuple[int, str | None, ProduceRequestView]:
    """(correlation id, client id, request) of a Produce frame (without its size prefix)."""
    flexible = version >= FLEXIBLE_FROM
    try:
        _, _, correlation_id = _HEAD.unpack_from(frame, 0)
        # The request header's client id is a non-compact nullable string in every header version.
        client_id, pos = _Reader(frame, False).string(8)
        if flexible:
            pos = _skip_tagged_fields(frame, pos)
        read = _Reader(frame, flexible)
        transactional_id, pos = read.string(pos)
        acks, timeout_ms = _ACKS_TIMEOUT.unpack_from(frame, pos)
        pos += 6
        topic_count, pos = read.length(pos, True)
        topics: list[TopicProduceData] | None = None
        if topic_count >= 0:
            topics = []
            for _ in range(topic_count):
                name, pos = read.string(pos)
                partition_count, pos = read.length(pos, True)
                partitions: list[PartitionProduceData] | None = None
                if partition_count >= 0:
                    partitions = []
                    for _ in range(partition_count):
                        (index,) = _I32.unpack_from(frame, pos)
                        size, pos = read.length(pos + 4, True)
                        records = None
                        if size >= 0:
                            end = pos + size
                            if end > len(frame):
                                raise ProtocolError("records past the end of the frame")
                            records = frame[pos:end]
                            pos = end
                        if flexible:
                            pos = _skip_tagged_fields(frame, pos)
                        partitions.append(PartitionProduceData(index, records))
                if flexible:
                    pos = _skip_tagged_fields(frame, pos)
                topics.append(TopicProduceData(name, partitions))  # type: ignore[arg-type]
        if flexible:
            pos = _skip_tagged_fields(frame, pos)
    except ProtocolError:
        raise
    except (struct.error, IndexError, UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"malformed ProduceRequest v{version}: {exc!r}") from exc
    if pos > len(frame):
        raise ProtocolError(f"truncated ProduceRequest v{version}")
    return correlation_id, client_id, ProduceRequestView(transactional_id, acks, timeout_ms, topics)


# -- encoding --------------------------------------------------------------------------------------


def _uvarint_bytes(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _string(value: str | None, flexible: bool) -> bytes:
    if value is None:
        return b"\x00" if flexible else b"\xff\xff"
    data = value.encode()
    return (_uvarint_bytes(len(data) + 1) if flexible else _I16.pack(len(data))) + data


def _count(n: int, flexible: bool) -> bytes:
    return _uvarint_bytes(n + 1) if flexible else _I32.pack(n)


PartitionAnswer = tuple[int, int, int, int, int, str | None]
"""(index, error code, base offset, log append time, log start offset, error message)"""


def encode_produce_response(
    version: int, correlation_id: int, topics: Sequence[tuple[str, Sequence[PartitionAnswer]]], throttle_time_ms: int = 0
) -> bytes:
    """The framed ProduceResponse, byte for byte as kafka-python's `ProduceResponse` encodes it
    (no record errors, no current leader, no node endpoints: a single broker never sends them)."""
    flexible = version >= FLEXIBLE_FROM
    parts = [b"\x00" if flexible else b"", _count(len(topics), flexible)]
    partition = _PARTITION_V5 if version >= 5 else _PARTITION_V3
    for name, partitions in topics:
        parts.append(_string(name, flexible))
        parts.append(_count(len(partitions), flexible))
        for index, error, base_offset, append_time, start_offset, message in partitions:
            if version >= 5:
                parts.append(partition.pack(index, error, base_offset, append_time, start_offset))
            else:
                parts.append(partition.pack(index, error, base_offset, append_time))
            if version >= 8:
                parts.append(_count(0, flexible))  # record_errors
                parts.append(_string(message, flexible))
            if flexible:
                parts.append(b"\x00")
        if flexible:
            parts.append(b"\x00")
    parts.append(_I32.pack(throttle_time_ms))
    if flexible:
        parts.append(b"\x00")
    body = b"".join(parts)
    return _CORRELATION.pack(len(body) + 4, correlation_id) + body


class ProduceAnswer:
    """A Produce response the handler built, encoded by this module rather than by kafka-python."""

    __slots__ = ("topics",)

    def __init__(self, topics: list[tuple[str, list[PartitionAnswer]]]) -> None:
        self.topics = topics

    def encode_frame(self, version: int, correlation_id: int) -> bytes:
        if MIN_VERSION <= version <= MAX_VERSION:
            return encode_produce_response(version, correlation_id, self.topics)
        return self._reference(version, correlation_id)  # a version this module does not cover

    def _reference(self, version: int, correlation_id: int) -> bytes:
        from kafka.protocol.producer import ProduceResponse

        topic = ProduceResponse.TopicProduceResponse
        partition = topic.PartitionProduceResponse
        response = ProduceResponse(
            version=version, throttle_time_ms=0,
            responses=[
                topic(name=name, partition_responses=[
                    partition(index=i, error_code=e, base_offset=b, log_append_time_ms=t, log_start_offset=s,
                              record_errors=[], error_message=m)
                    for i, e, b, t, s, m in partitions
                ])
                for name, partitions in self.topics
            ],
        )
        response.API_VERSION = version
        response.with_header(correlation_id=correlation_id)
        return bytes(response.encode(header=True, framed=True))
