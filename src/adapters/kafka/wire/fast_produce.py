"""The Produce fast path: request decode with `struct`, for versions 3-13 (the response encode is
`fast_produce_answer`).

One of the two measured exceptions to "kafka-python encodes every message" (ADR 9; the Fetch
response is the other, ADR 31): Produce is the request every
producer sends for every batch, and building kafka-python message objects for it cost a third of the
broker's time per request. kafka-python's classes stay the reference: `tests/unit/adapters/kafka/test_fast_produce.py`
proves, with hypothesis, that this module decodes exactly what `ProduceRequest` decodes and encodes
byte for byte what `ProduceResponse` encodes, at every version served (null and empty fields, tagged
fields, unknown tagged fields). Any other API, and any version outside 3-13, goes through kafka-python.
From v13 topics are named by id (a 16-byte uuid where the name was), in the request and the response:
a decoded topic then carries its `topic_id` and no name (the handler resolves it), and an answered
topic is keyed by its id.

Decoding keeps each partition's records as a slice of the frame (one copy, as before); nothing here
looks inside a record batch. Malformed input raises `ProtocolError`, as the generic decoder does.
"""

from __future__ import annotations

import struct
import uuid
from typing import NamedTuple

from .primitives import I16, I32, request_header, uvarint


class ProtocolError(Exception):
    """A malformed Produce frame (the codec reports it as its own ProtocolError)."""


MIN_VERSION, MAX_VERSION = 3, 13
FLEXIBLE_FROM = 9
TOPIC_IDS_FROM = 13
LANE_MAX_VERSION = 12  # the one-partition lane reads topic names; a v13 request takes the general path

_ACKS_TIMEOUT = struct.Struct(">hi")
_ACKS_TIMEOUT_COUNT = struct.Struct(">hii")
_HEAD_CLIENT = struct.Struct(">hhih")  # api key, version, correlation id, client id length


class PartitionProduceData:
    __slots__ = ("index", "records")

    def __init__(self, index: int, records: bytes | None) -> None:
        self.index = index
        self.records = records


class TopicProduceData:
    __slots__ = ("name", "partition_data", "topic_id")

    def __init__(
        self, name: str, partition_data: list[PartitionProduceData] | None, topic_id: uuid.UUID | None = None
    ) -> None:
        self.name = name  # from v13 "" until the handler resolves `topic_id` (and "" for an unknown id)
        self.partition_data = partition_data
        self.topic_id = topic_id


class ProduceRequestView:
    """The fields of a ProduceRequest the broker uses, under kafka-python's attribute names."""

    __slots__ = ("transactional_id", "acks", "timeout_ms", "topic_data")

    def __init__(
        self, transactional_id: str | None, acks: int, timeout_ms: int, topic_data: list[TopicProduceData] | None
    ) -> None:
        self.transactional_id = transactional_id
        self.acks = acks
        self.timeout_ms = timeout_ms
        self.topic_data = topic_data


# -- decoding --------------------------------------------------------------------------------------
# Two straight-line decoders (classic v3-8, flexible v9-11): no per-field calls, so that a
# one-partition request costs a handful of `unpack_from`s.

_I32_I32 = struct.Struct(">ii")


def _skip_tagged_fields(buf: bytes, pos: int) -> int:
    if buf[pos] == 0:
        return pos + 1
    count, pos = uvarint(buf, pos)
    for _ in range(count):
        _, pos = uvarint(buf, pos)
        size, pos = uvarint(buf, pos)
        pos += size
    return pos


def _checked_end(frame: bytes, pos: int, size: int) -> int:
    end = pos + size
    if end > len(frame):
        raise ProtocolError("field past the end of the frame")
    return end


def _decode_classic(frame: bytes, pos: int) -> tuple[ProduceRequestView, int]:
    (size,) = I16.unpack_from(frame, pos)
    pos += 2
    transactional_id = None
    if size >= 0:
        end = _checked_end(frame, pos, size)
        transactional_id = frame[pos:end].decode()
        pos = end
    acks, timeout_ms, topic_count = _ACKS_TIMEOUT_COUNT.unpack_from(frame, pos)
    pos += 10
    if topic_count < 0:
        return ProduceRequestView(transactional_id, acks, timeout_ms, None), pos
    topics = []
    for _ in range(topic_count):
        (size,) = I16.unpack_from(frame, pos)
        pos += 2
        name = None
        if size >= 0:
            end = _checked_end(frame, pos, size)
            name = frame[pos:end].decode()
            pos = end
        (partition_count,) = I32.unpack_from(frame, pos)
        pos += 4
        partitions = None
        if partition_count >= 0:
            partitions = []
            for _ in range(partition_count):
                index, size = _I32_I32.unpack_from(frame, pos)
                pos += 8
                records = None
                if size >= 0:
                    end = _checked_end(frame, pos, size)
                    records = frame[pos:end]
                    pos = end
                partitions.append(PartitionProduceData(index, records))
        topics.append(TopicProduceData(name, partitions))  # type: ignore[arg-type]
    return ProduceRequestView(transactional_id, acks, timeout_ms, topics), pos


def _decode_flexible(frame: bytes, pos: int, by_id: bool = False) -> tuple[ProduceRequestView, int]:
    # Every varint and tagged-field count of a typical request is one byte: read inline, the
    # general helpers only for longer ones.
    size = frame[pos]
    size, pos = (size, pos + 1) if size < 0x80 else uvarint(frame, pos)
    transactional_id = None
    if size:
        end = _checked_end(frame, pos, size - 1)
        transactional_id = frame[pos:end].decode()
        pos = end
    acks, timeout_ms = _ACKS_TIMEOUT.unpack_from(frame, pos)
    pos += 6
    topic_count = frame[pos]
    topic_count, pos = (topic_count, pos + 1) if topic_count < 0x80 else uvarint(frame, pos)
    if topic_count == 0:
        return ProduceRequestView(transactional_id, acks, timeout_ms, None), _skip_tagged_fields(frame, pos)
    length = len(frame)
    topics = []
    for _ in range(topic_count - 1):
        topic_id = None
        if by_id:
            end = pos + 16
            if end > length:
                raise ProtocolError("field past the end of the frame")
            topic_id = uuid.UUID(bytes=frame[pos:end])
            name = ""
            pos = end
        else:
            size = frame[pos]
            size, pos = (size, pos + 1) if size < 0x80 else uvarint(frame, pos)
            name = None
            if size:
                end = pos + size - 1
                if end > length:
                    raise ProtocolError("field past the end of the frame")
                name = frame[pos:end].decode()
                pos = end
        partition_count = frame[pos]
        partition_count, pos = (partition_count, pos + 1) if partition_count < 0x80 else uvarint(frame, pos)
        partitions = None
        if partition_count:
            partitions = []
            for _ in range(partition_count - 1):
                (index,) = I32.unpack_from(frame, pos)
                pos += 4
                size = frame[pos]
                size, pos = (size, pos + 1) if size < 0x80 else uvarint(frame, pos)
                records = None
                if size:
                    end = pos + size - 1
                    if end > length:
                        raise ProtocolError("field past the end of the frame")
                    records = frame[pos:end]
                    pos = end
                pos = pos + 1 if frame[pos] == 0 else _skip_tagged_fields(frame, pos)
                partitions.append(PartitionProduceData(index, records))
        pos = pos + 1 if frame[pos] == 0 else _skip_tagged_fields(frame, pos)
        topics.append(TopicProduceData(name, partitions, topic_id))  # type: ignore[arg-type]
    return ProduceRequestView(transactional_id, acks, timeout_ms, topics), _skip_tagged_fields(frame, pos)


def decode_produce(frame: bytes, version: int) -> tuple[int, str | None, ProduceRequestView]:
    """(correlation id, client id, request) of a Produce frame (without its size prefix)."""
    try:
        correlation_id, client_id, pos = request_header(frame, version >= FLEXIBLE_FROM)
        if version >= FLEXIBLE_FROM:
            request, pos = _decode_flexible(frame, pos, version >= TOPIC_IDS_FROM)
        else:
            request, pos = _decode_classic(frame, pos)
    except ProtocolError:
        raise
    except (struct.error, IndexError, UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"malformed ProduceRequest v{version}: {exc!r}") from exc
    if pos > len(frame):
        raise ProtocolError(f"truncated ProduceRequest v{version}")
    return correlation_id, client_id, request


# -- the one-partition shape ----------------------------------------------------------------------
# A producer with one batch ready sends a request for one topic and one partition. Its fields are
# read straight into a tuple, with no request objects; anything else (several topics or partitions,
# a null field, a varint past one or two bytes, a tagged field) returns None and takes the general
# decoder. `tests/unit/adapters/kafka/test_produce_lane.py` checks the answer against the general path.

_CLASSIC_ONE = struct.Struct(">hiih")  # acks, timeout, topic count, name length
_I32_I32_I32 = struct.Struct(">iii")  # partition count, index, records length


class OnePartition(NamedTuple):
    version: int
    correlation_id: int
    acks: int
    topic: str
    index: int  # type: ignore[assignment]  # Kafka's field name; it shadows tuple.index, which nothing calls
    records: bytes
    transactional_id: str | None = None


_new = tuple.__new__  # a named tuple built without its Python-level __new__ (one per request)


def decode_one_partition(frame: bytes) -> OnePartition | None:
    """A Produce v3-12 frame for one topic and one partition, or None for any other shape (or version)."""
    try:
        _, version, correlation_id, size = _HEAD_CLIENT.unpack_from(frame, 0)
        pos = 10 + (size if size > 0 else 0)
        if version >= FLEXIBLE_FROM:
            if version > LANE_MAX_VERSION or frame[pos] != 0:  # header tagged fields
                return None
            size = frame[pos + 1]  # transactional id: compact nullable string
            if size >= 0x80:
                return None
            transactional_id = frame[pos + 2 : pos + 1 + size].decode() if size else None
            pos += 2 + (size - 1 if size else 0)
            acks, _ = _ACKS_TIMEOUT.unpack_from(frame, pos)
            if frame[pos + 6] != 2:  # one topic
                return None
            size = frame[pos + 7]
            if not 1 < size < 0x80:
                return None
            pos += 8
            end = pos + size - 1
            topic = frame[pos:end].decode()
            if frame[end] != 2:  # one partition
                return None
            (index,) = I32.unpack_from(frame, end + 1)
            pos = end + 5
            size = frame[pos]
            if size < 0x80:
                pos += 1
            else:
                second = frame[pos + 1]
                if second >= 0x80:
                    size, pos = uvarint(frame, pos)
                else:
                    size = (size & 0x7F) | second << 7
                    pos += 2
            if not size:
                return None
            end = pos + size - 1
            if end + 3 > len(frame) or frame[end] or frame[end + 1] or frame[end + 2]:  # the three tagged-field counts
                return None
            return _new(OnePartition, (version, correlation_id, acks, topic, index, frame[pos:end], transactional_id))
        if version < MIN_VERSION:
            return None
        (size,) = I16.unpack_from(frame, pos)  # transactional id
        transactional_id = frame[pos + 2 : pos + 2 + size].decode() if size >= 0 else None
        pos += 2 + (size if size > 0 else 0)
        acks, _, topics, size = _CLASSIC_ONE.unpack_from(frame, pos)
        if topics != 1 or size < 1:
            return None
        pos += 12
        end = pos + size
        topic = frame[pos:end].decode()
        partitions, index, size = _I32_I32_I32.unpack_from(frame, end)
        if partitions != 1 or size < 0:
            return None
        pos = end + 12
        end = pos + size
        if end > len(frame):
            return None
        return _new(OnePartition, (version, correlation_id, acks, topic, index, frame[pos:end], transactional_id))
    except (struct.error, IndexError, UnicodeDecodeError, ValueError):  # ValueError: a varint past five bytes
        return None
