"""The Fetch response fast path: encoded with `struct` for versions 4-18, stored batches copied once.

The second measured exception to "kafka-python encodes every message" (ADR 9, ADR 31): a Fetch response is
mostly stored record batches, and kafka-python's encoder copies them through its buffers and builds
an object per partition. Here the fixed parts are packed and the records appended as they came from
the log, joined once. `tests/unit/adapters/kafka/test_fast_fetch.py` proves with hypothesis that the bytes equal
kafka-python's `FetchResponse` encoding at every version served (topic names or ids, null and empty
records, aborted transactions, errors); a version past `MAX_VERSION` is encoded by kafka-python.

The request is decoded in `fast_fetch_request.py` (ADR 116).
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Sequence

from .primitives import I32, count, string

MIN_VERSION, MAX_VERSION = 4, 18  # v18 answers as v17 (it adds the follower's high watermark)
FLEXIBLE_FROM = 12
SEPARATE_RECORDS = 16 * 1024  # records this large are written from the log's bytes, not copied

_FRAME = struct.Struct(">ii")  # frame size, correlation id
_ERROR_SESSION = struct.Struct(">ihi")  # throttle time, error code, session id (v7+)
_PARTITION_V5 = struct.Struct(">ihqqq")  # index, error, high watermark, last stable, log start
_PARTITION_V4 = struct.Struct(">ihqq")
_ABORTED = struct.Struct(">qq")
_ABORTED_FLEXIBLE = struct.Struct(">qqb")  # ... and an empty tagged-field section

AbortedTxn = tuple[int, int]  # producer id, first offset
PartitionAnswer = tuple[int, int, int, int, int, Sequence[AbortedTxn] | None, int, bytes | None]
"""(index, error code, high watermark, last stable offset, log start offset, aborted transactions,
preferred read replica, records)"""
TopicAnswer = tuple[str | None, uuid.UUID, Sequence[PartitionAnswer]]


def encode_fetch_pieces(
    version: int,
    correlation_id: int,
    topics: Sequence[TopicAnswer],
    error_code: int = 0,
    session_id: int = 0,
    throttle_time_ms: int = 0,
) -> list[bytes]:
    """The same frame as buffers to write in order: the stored records of each partition larger than
    `SEPARATE_RECORDS` stay the log's own bytes (written with one writev, never copied into the
    response), the fixed parts between them are joined."""
    flexible = version >= FLEXIBLE_FROM
    pieces: list[bytes] = []
    parts: list[bytes] = [b"\x00"] if flexible else []
    append = parts.append
    append(
        _ERROR_SESSION.pack(throttle_time_ms, error_code, session_id) if version >= 7 else I32.pack(throttle_time_ms)
    )
    append(count(len(topics), flexible))
    fixed = _PARTITION_V5 if version >= 5 else _PARTITION_V4
    v5 = version >= 5
    v11 = version >= 11
    by_id = version >= 13
    aborted_struct = _ABORTED_FLEXIBLE if flexible else _ABORTED
    for name, topic_id, partitions in topics:
        append(topic_id.bytes if by_id else string(name, flexible))
        append(count(len(partitions), flexible))
        for index, error, high_watermark, last_stable, log_start, aborted, preferred, records in partitions:
            if v5:
                append(fixed.pack(index, error, high_watermark, last_stable, log_start))
            else:
                append(fixed.pack(index, error, high_watermark, last_stable))
            if aborted is None:
                append(b"\x00" if flexible else b"\xff\xff\xff\xff")
            else:
                append(count(len(aborted), flexible))
                for producer_id, first_offset in aborted:
                    append(
                        aborted_struct.pack(producer_id, first_offset, 0)
                        if flexible
                        else aborted_struct.pack(producer_id, first_offset)
                    )
            if v11:
                append(I32.pack(preferred))
            if records is None:
                append(b"\x00" if flexible else b"\xff\xff\xff\xff")
            else:
                append(count(len(records), flexible))
                if len(records) >= SEPARATE_RECORDS:
                    pieces.append(b"".join(parts))
                    pieces.append(records)
                    parts.clear()
                else:
                    append(records)
            if flexible:
                append(b"\x00")
        if flexible:
            append(b"\x00")
    if flexible:
        append(b"\x00")
    pieces.append(b"".join(parts))
    size = sum(map(len, pieces))
    pieces[0] = _FRAME.pack(size + 4, correlation_id) + pieces[0]
    return pieces


_HEAD = struct.Struct(">iib")  # frame size, correlation id, the response header's (empty) tagged fields
# index, error, high watermark, last stable, log start, the aborted transactions (a compact array: null 0, empty
# 1), the preferred read replica
_PARTITION_MIDDLE = struct.Struct(">ihqqqBi")
_VARINT_1 = [bytes([n]) for n in range(0x80)]
_TAGS_TO_THE_END = b"\x00\x00\x00"  # the partition's, its topic's and the response's tagged fields
_heads: dict[tuple[int, object, int, int], bytes] = {}
_HEADS_KEPT = 4096


def _one_partition(
    version: int, correlation_id: int, topic: TopicAnswer, error_code: int, session_id: int
) -> list[bytes] | None:
    """`encode_fetch_pieces` for the commonest answer, one partition of one topic in a flexible version
    with no throttle and no aborted transaction listed (a consumer at the log end answered by the append
    that woke it, ADR 130): the bytes before the partition (the response's error and session, the topic's
    name or id) are kept per version, topic and session, so the answer is two `struct` packs, its
    records and a join. None for anything else (`encode_fetch_pieces` encodes it). Proven byte for byte
    equal to `encode_fetch_pieces`, pieces included, by `tests/unit/adapters/kafka/test_fast_fetch.py`."""
    name, topic_id, partitions = topic
    if len(partitions) != 1:
        return None
    index, error, high_watermark, last_stable, log_start, aborted, preferred, records = partitions[0]
    if records is None or aborted:  # null records, or transactions to list: the general encoder
        return None
    by_id = version >= 13
    key = (version, topic_id.int if by_id else name, error_code, session_id)  # `.int`: no UUID.__hash__ call
    head = _heads.get(key)
    if head is None:
        if len(_heads) >= _HEADS_KEPT:
            _heads.clear()
        head = _heads[key] = (
            _ERROR_SESSION.pack(0, error_code, session_id)
            + b"\x02"  # one topic
            + (topic_id.bytes if by_id else string(name, True))
            + b"\x02"  # one partition
        )
    length = len(records) + 1  # the records' compact length as `count` writes it: one or two bytes mostly
    if length < 0x80:
        varint = _VARINT_1[length]
    elif length < 0x4000:
        varint = bytes(((length & 0x7F) | 0x80, length >> 7))
    else:
        varint = count(length - 1, True)
    # aborted is None (a null array: 0) or empty (1): a list to write takes the general encoder
    middle = (
        _PARTITION_MIDDLE.pack(index, error, high_watermark, last_stable, log_start, aborted is not None, preferred)
        + varint
    )
    size = len(head) + len(middle) + len(records) + 8  # the correlation id, the tags
    front = _HEAD.pack(size, correlation_id, 0)
    if len(records) >= SEPARATE_RECORDS:
        return [front + head + middle, records, _TAGS_TO_THE_END]
    return [b"".join((front, head, middle, records, _TAGS_TO_THE_END))]


class FetchAnswer:
    """A Fetch response the handler built, encoded here rather than by kafka-python."""

    __slots__ = ("topics", "error_code", "throttle_time_ms", "session_id")

    def __init__(
        self, topics: list[TopicAnswer], error_code: int = 0, throttle_time_ms: int = 0, session_id: int = 0
    ) -> None:
        self.topics = topics
        self.error_code = error_code
        self.throttle_time_ms = throttle_time_ms  # set when a client quota throttles the consumer
        self.session_id = session_id  # the fetch session (KIP-227) the answer belongs to, 0 for none

    def encode_frame(self, version: int, correlation_id: int) -> bytes:
        return b"".join(self.encode_pieces(version, correlation_id))

    def encode_pieces(self, version: int, correlation_id: int) -> list[bytes]:
        topics = self.topics
        if FLEXIBLE_FROM <= version <= MAX_VERSION and len(topics) == 1 and not self.throttle_time_ms:
            pieces = _one_partition(version, correlation_id, topics[0], self.error_code, self.session_id)
            if pieces is not None:
                return pieces
        if MIN_VERSION <= version <= MAX_VERSION:
            return encode_fetch_pieces(
                version, correlation_id, self.topics, self.error_code, self.session_id, self.throttle_time_ms
            )
        return [self.reference(version, correlation_id)]

    def as_kafka_python(self, version: int):
        """The same response as the schema's `FetchResponse` message (the reference, and for faults)."""
        from trafka.schema_codec.messages import FetchResponse

        topic_class = FetchResponse.FetchableTopicResponse
        partition_class = topic_class.PartitionData
        return FetchResponse(
            version=version,
            throttle_time_ms=self.throttle_time_ms,
            error_code=self.error_code,
            session_id=self.session_id,
            responses=[
                topic_class(
                    topic=name,
                    topic_id=topic_id,
                    partitions=[
                        partition_class(
                            partition_index=i,
                            error_code=e,
                            high_watermark=hw,
                            last_stable_offset=lso,
                            log_start_offset=start,
                            preferred_read_replica=preferred,
                            records=records,
                            aborted_transactions=None
                            if aborted is None
                            else [
                                partition_class.AbortedTransaction(producer_id=p, first_offset=f) for p, f in aborted
                            ],
                        )
                        for i, e, hw, lso, start, aborted, preferred, records in partitions
                    ],
                )
                for name, topic_id, partitions in self.topics
            ],
        )

    def reference(self, version: int, correlation_id: int) -> bytes:
        from .codec import encode_response  # the schema's encoding (codec imports the handler registry)

        return encode_response(self.as_kafka_python(version), version, correlation_id)
