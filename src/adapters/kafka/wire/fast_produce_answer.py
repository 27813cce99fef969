"""The Produce fast path's response encode with `struct`, for versions 3-13 (ADR 9; the request
decode is `fast_produce`).

`tests/unit/adapters/kafka/test_fast_produce.py` proves, with hypothesis, that this module encodes byte
for byte what kafka-python's `ProduceResponse` encodes at every version served. From v13 an answered
topic is keyed by its id. Any version outside 3-13 goes through the schema's encoding.
"""

from __future__ import annotations

import functools
import struct
import uuid
from collections.abc import Sequence

from .fast_produce import FLEXIBLE_FROM, MAX_VERSION, MIN_VERSION
from .primitives import I32, count, string

_PARTITION_V5 = struct.Struct(">ihqqq")  # index, error code, base offset, log append time, log start offset
_PARTITION_V3 = struct.Struct(">ihqq")  # (v3-4: no log start offset)
_CORRELATION = struct.Struct(">ii")  # frame size, correlation id

RecordErrors = tuple[tuple[int, str | None], ...]
"""(batch index, message) of each record a partition refused (ProduceResponse v8's record_errors)"""

PartitionAnswer = tuple[int, int, int, int, int, str | None, RecordErrors]
"""(index, error code, base offset, log append time, log start offset, error message, record errors)"""

TopicKey = str | uuid.UUID
"""How an answered topic is named: its name, or from v13 its id."""


def _topic_key(key: TopicKey, flexible: bool) -> bytes:
    return key.bytes if isinstance(key, uuid.UUID) else string(key, flexible)


# What follows a partition's fixed fields: v8 adds record_errors (empty) and error_message (null is
# the common case), flexible versions a tagged-field count after each struct.
_NULL_TAIL = {False: b"\x00\x00\x00\x00\xff\xff", True: b"\x01\x00\x00"}


def encode_produce_response(
    version: int,
    correlation_id: int,
    topics: Sequence[tuple[TopicKey, Sequence[PartitionAnswer]]],
    throttle_time_ms: int = 0,
) -> bytes:
    """The framed ProduceResponse, byte for byte as kafka-python's `ProduceResponse` encodes it
    (no current leader, no node endpoints: a single broker never sends them)."""
    if (
        throttle_time_ms == 0
        and version >= 5
        and len(topics) == 1
        and len(topics[0][1]) == 1
        and topics[0][1][0][5] is None
        and not topics[0][1][0][6]
    ):
        # One partition, no error message: what a producer sending to one partition gets back.
        name, ((index, error, base_offset, append_time, start_offset, _, _),) = topics[0]
        return encode_one_partition(version, correlation_id, name, index, error, base_offset, append_time, start_offset)
    flexible = version >= FLEXIBLE_FROM
    parts = [b"\x00" if flexible else b"", count(len(topics), flexible)]
    append = parts.append
    fixed = _PARTITION_V5 if version >= 5 else _PARTITION_V3
    v5 = version >= 5
    v8 = version >= 8
    for name, partitions in topics:
        append(_topic_key(name, flexible))
        append(count(len(partitions), flexible))
        for index, error, base_offset, append_time, start_offset, message, record_errors in partitions:
            if v5:
                append(fixed.pack(index, error, base_offset, append_time, start_offset))
            else:
                append(fixed.pack(index, error, base_offset, append_time))
            if v8:
                if message is None and not record_errors:
                    append(_NULL_TAIL[flexible])
                    continue
                append(count(len(record_errors), flexible))
                for batch_index, batch_message in record_errors:
                    append(I32.pack(batch_index))
                    append(string(batch_message, flexible))
                    if flexible:
                        append(b"\x00")
                append(string(message, flexible))
            if flexible:
                append(b"\x00")
        if flexible:
            append(b"\x00")
    append(I32.pack(throttle_time_ms))
    if flexible:
        append(b"\x00")
    body = b"".join(parts)
    return _CORRELATION.pack(len(body) + 4, correlation_id) + body


def encode_one_partition(
    version: int,
    correlation_id: int,
    name: TopicKey,
    index: int,
    error: int,
    base_offset: int,
    append_time: int,
    start_offset: int,
) -> bytes:
    """`encode_produce_response` of one topic's one partition with no error message, no record errors
    and no throttle, for v5 and later (what the lane answers a producer): one `pack` of the frame."""
    frame, size, head, tail = _one_partition_frame(name, version)
    return frame.pack(size, correlation_id, head, index, error, base_offset, append_time, start_offset, tail)


@functools.lru_cache(maxsize=4096)
def _one_partition_frame(name: TopicKey, version: int) -> tuple[struct.Struct, int, bytes, bytes]:
    """The framed one-partition response as one struct: size and correlation id, the pieces before
    the partition's fixed fields, the fields, the pieces after; with its frame size."""
    head, tail = _one_partition_pieces(name, version)
    frame = struct.Struct(f">ii{len(head)}s{_PARTITION_V5.format[1:]}{len(tail)}s")
    return frame, frame.size - 4, head, tail


def _one_partition_pieces(name: TopicKey, version: int) -> tuple[bytes, bytes]:
    """What comes before and after the partition's fixed fields in a one-partition response with no
    error message and no throttle (v5 and later), by the general encoder's own rules."""
    flexible = version >= FLEXIBLE_FROM
    head = (b"\x00" if flexible else b"") + count(1, flexible) + _topic_key(name, flexible) + count(1, flexible)
    tail = b""
    if version >= 8:
        tail += _NULL_TAIL[flexible]
    elif flexible:
        tail += b"\x00"
    if flexible:
        tail += b"\x00"  # the topic's tagged fields
    tail += I32.pack(0)
    if flexible:
        tail += b"\x00"
    return head, tail


class ProduceAnswer:
    """A Produce response the handler built, encoded by this module rather than by kafka-python."""

    __slots__ = ("topics", "throttle_time_ms")

    def __init__(self, topics: list[tuple[TopicKey, list[PartitionAnswer]]], throttle_time_ms: int = 0) -> None:
        self.topics = topics
        self.throttle_time_ms = throttle_time_ms  # set when a client quota throttles the producer

    def encode_pieces(self, version: int, correlation_id: int) -> list[bytes]:
        return [self.encode_frame(version, correlation_id)]

    def encode_frame(self, version: int, correlation_id: int) -> bytes:
        if MIN_VERSION <= version <= MAX_VERSION:
            return encode_produce_response(version, correlation_id, self.topics, self.throttle_time_ms)
        return self._reference(version, correlation_id)  # a version this module does not cover

    def _reference(self, version: int, correlation_id: int) -> bytes:
        from .codec import encode_response  # the schema's encoding (codec imports the handler registry)

        return encode_response(self.as_kafka_python(version), version, correlation_id)

    def as_kafka_python(self, version: int):
        """The same response as the schema's `ProduceResponse` message (the reference, faults, the authorizer)."""
        from trafka.schema_codec.messages import ProduceResponse

        topic = ProduceResponse.TopicProduceResponse
        partition = topic.PartitionProduceResponse
        return ProduceResponse(
            version=version,
            throttle_time_ms=self.throttle_time_ms,
            responses=[
                topic(
                    name=None if isinstance(name, uuid.UUID) else name,
                    topic_id=name if isinstance(name, uuid.UUID) else None,
                    partition_responses=[
                        partition(
                            index=i,
                            error_code=e,
                            base_offset=b,
                            log_append_time_ms=t,
                            log_start_offset=s,
                            record_errors=[
                                partition.BatchIndexAndErrorMessage(
                                    batch_index=batch_index, batch_index_error_message=batch_message
                                )
                                for batch_index, batch_message in r
                            ],
                            error_message=m,
                        )
                        for i, e, b, t, s, m, r in partitions
                    ],
                )
                for name, partitions in self.topics
            ],
        )
