"""The Fetch response fast path: encoded with `struct` for versions 4-18, stored batches copied once.

The second measured exception to "kafka-python encodes every message" (ADR 9, ADR 31): a Fetch response is
mostly stored record batches, and kafka-python's encoder copies them through its buffers and builds
an object per partition. Here the fixed parts are packed and the records appended as they came from
the log, joined once. `tests/unit/adapters/kafka/test_fast_fetch.py` proves with hypothesis that the bytes equal
kafka-python's `FetchResponse` encoding at every version served (topic names or ids, null and empty
records, aborted transactions, errors); a version past `MAX_VERSION` is encoded by kafka-python.

The request (ADR 116) is decoded here too, into the schema codec's own `FetchRequest` objects: every
consumer sends one per answer, and the schema codec's interpreter took a tenth of the broker's busy
time on the end-to-end latency path. Only the shape clients send is read here (no tagged fields set,
no null where the schema has none); any other frame, and any frame this decoder cannot read, is
decoded by the schema codec, so a malformed frame fails exactly as it fails there.
`tests/unit/adapters/kafka/test_fast_fetch_request.py` proves with hypothesis that both give equal
objects at every version served.
"""

from __future__ import annotations

import functools
import struct
import uuid
from collections.abc import Sequence
from typing import Any

from .primitives import I16, I32, count, request_header, string, uvarint

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
_PARTITION_HEAD = struct.Struct(">ihqqq")
_PREFERRED = struct.Struct(">i")
_TAGS_TO_THE_END = b"\x00\x00\x00"  # the partition's, its topic's and the response's tagged fields
_NO_ABORTED, _EMPTY_ABORTED = b"\x00", b"\x01"  # compact arrays: null, empty
_heads: dict[tuple[int, object, int, int], bytes] = {}
_HEADS_KEPT = 4096


def _one_partition(
    version: int, correlation_id: int, topic: TopicAnswer, error_code: int, session_id: int
) -> list[bytes] | None:
    """`encode_fetch_pieces` for the commonest answer, one partition of one topic in a flexible version
    with no throttle and no aborted transaction listed (a consumer at the log end answered by the append
    that woke it, ADR 130): the bytes before the partition (the response's error and session, the topic's
    name or id) are kept per version, topic and session, so the answer is three `struct` packs, its
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
    middle = (
        _PARTITION_HEAD.pack(index, error, high_watermark, last_stable, log_start)
        + (_NO_ABORTED if aborted is None else _EMPTY_ABORTED)
        + _PREFERRED.pack(preferred)
        + count(len(records), True)
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


# -- decoding the request ---------------------------------------------------------------------------


class ProtocolError(Exception):
    """A malformed Fetch frame (the codec reports it as its own ProtocolError)."""


class _Unusual(Exception):
    """A frame this decoder leaves to the schema codec."""


REQUEST_VERSIONS = (4, 18)
_TOP_V4 = struct.Struct(">iiiib")  # replica id, max wait, min bytes, max bytes, isolation level
_TOP_V7 = struct.Struct(">iiiibii")  # ... session id, session epoch
_TOP_V15 = struct.Struct(">iiibii")  # v15+: the replica id moved into the (tagged) replica state
_WANTED_V4 = struct.Struct(">iqi")  # partition, fetch offset, partition max bytes
_WANTED_V5 = struct.Struct(">iqqi")  # ... log start offset
_WANTED_V9 = struct.Struct(">iiqqi")  # ... current leader epoch
_WANTED_V12 = struct.Struct(">iiqiqi")  # ... last fetched epoch
_ZERO_ID = bytes(16)
_NO_HIGH_WATERMARK = 2**63 - 1  # the schema's default for the v18 tagged HighWatermark
_new = object.__new__


@functools.cache
def _classes() -> tuple[Any, Any, Any, Any]:
    from trafka.schema_codec.messages import FetchRequest

    topic = FetchRequest.FetchTopic
    return FetchRequest, topic, topic.FetchPartition, FetchRequest.ForgottenTopic


def decode_fetch(frame: bytes, version: int) -> tuple[int, str | None, Any]:
    """(correlation id, client id, the schema codec's `FetchRequest`) of a Fetch frame (no size prefix)."""
    try:
        return _decode(frame, version)
    except (_Unusual, struct.error, IndexError, UnicodeDecodeError, ValueError):
        return _reference(frame, version)


def _reference(frame: bytes, version: int) -> tuple[int, str | None, Any]:
    """The schema codec's decoding of the same frame, its failures as `ProtocolError`."""
    request_class = _classes()[0]
    try:
        correlation_id, client_id, pos = request_header(frame, version >= FLEXIBLE_FROM)
        body = request_class.decode(memoryview(frame)[pos:], version, exact=False)
    except Exception as exc:
        raise ProtocolError(f"malformed FetchRequest v{version}: {exc!r}") from exc
    return correlation_id, client_id, body


def _decode(frame: bytes, version: int) -> tuple[int, str | None, Any]:
    request_class, topic_class, partition_class, forgotten_class = _classes()
    flexible = version >= FLEXIBLE_FROM
    correlation_id, client_id, pos = request_header(frame, flexible)
    length = len(frame)
    fields: dict[str, Any] = {"_version": version}
    if version >= 15:
        max_wait, min_bytes, max_bytes, isolation, session_id, epoch = _TOP_V15.unpack_from(frame, pos)
        pos += _TOP_V15.size
        fields["cluster_id"] = None
        fields["replica_state"] = None
    elif version >= 7:
        replica_id, max_wait, min_bytes, max_bytes, isolation, session_id, epoch = _TOP_V7.unpack_from(frame, pos)
        pos += _TOP_V7.size
        if flexible:
            fields["cluster_id"] = None
        fields["replica_id"] = replica_id
    else:
        replica_id, max_wait, min_bytes, max_bytes, isolation = _TOP_V4.unpack_from(frame, pos)
        pos += _TOP_V4.size
        fields["replica_id"] = replica_id
    fields["max_wait_ms"] = max_wait
    fields["min_bytes"] = min_bytes
    fields["max_bytes"] = max_bytes
    fields["isolation_level"] = isolation
    if version >= 7:
        fields["session_id"] = session_id
        fields["session_epoch"] = epoch
    by_id = version >= 13
    partition_struct = (
        _WANTED_V12 if version >= 12 else _WANTED_V9 if version >= 9 else _WANTED_V5 if version >= 5 else _WANTED_V4
    )
    step = partition_struct.size
    topics = []
    count_, pos = _count(frame, pos, flexible)
    for _ in range(count_):
        key, pos = _topic_key(frame, pos, by_id, flexible, length)
        partitions = []
        partition_count, pos = _count(frame, pos, flexible)
        for _ in range(partition_count):
            values = partition_struct.unpack_from(frame, pos)
            pos += step
            partition = _new(partition_class)
            if version >= 12:
                index, leader_epoch, offset, last_epoch, log_start, limit = values
                partition.__dict__ = {
                    "_version": version,
                    "partition": index,
                    "current_leader_epoch": leader_epoch,
                    "fetch_offset": offset,
                    "last_fetched_epoch": last_epoch,
                    "log_start_offset": log_start,
                    "partition_max_bytes": limit,
                }
                if frame[pos]:  # ReplicaDirectoryId or HighWatermark set (followers only)
                    raise _Unusual
                pos += 1
                if version >= 17:
                    partition.__dict__["replica_directory_id"] = None
                    if version >= 18:
                        partition.__dict__["high_watermark"] = _NO_HIGH_WATERMARK
            elif version >= 9:
                index, leader_epoch, offset, log_start, limit = values
                partition.__dict__ = {
                    "_version": version,
                    "partition": index,
                    "current_leader_epoch": leader_epoch,
                    "fetch_offset": offset,
                    "log_start_offset": log_start,
                    "partition_max_bytes": limit,
                }
            elif version >= 5:
                index, offset, log_start, limit = values
                partition.__dict__ = {
                    "_version": version,
                    "partition": index,
                    "fetch_offset": offset,
                    "log_start_offset": log_start,
                    "partition_max_bytes": limit,
                }
            else:
                index, offset, limit = values
                partition.__dict__ = {
                    "_version": version,
                    "partition": index,
                    "fetch_offset": offset,
                    "partition_max_bytes": limit,
                }
            partitions.append(partition)
        if flexible:
            if frame[pos]:
                raise _Unusual
            pos += 1
        topic = _new(topic_class)
        topic.__dict__ = {"_version": version, "topic_id" if by_id else "topic": key, "partitions": partitions}
        topics.append(topic)
    fields["topics"] = topics
    if version >= 7:
        forgotten = []
        count_, pos = _count(frame, pos, flexible)
        for _ in range(count_):
            key, pos = _topic_key(frame, pos, by_id, flexible, length)
            indexes, pos = _count(frame, pos, flexible)
            end = pos + 4 * indexes
            if end > length:
                raise _Unusual
            gone = _new(forgotten_class)
            gone.__dict__ = {
                "_version": version,
                "topic_id" if by_id else "topic": key,
                "partitions": list(struct.unpack_from(f">{indexes}i", frame, pos)),
            }
            pos = end
            if flexible:
                if frame[pos]:
                    raise _Unusual
                pos += 1
            forgotten.append(gone)
        fields["forgotten_topics_data"] = forgotten
    if version >= 11:
        fields["rack_id"], pos = _string(frame, pos, flexible, length)
    if flexible and frame[pos]:  # ClusterId or ReplicaState set (brokers only)
        raise _Unusual
    request = _new(request_class)
    request.__dict__ = fields
    return correlation_id, client_id, request


def _count(frame: bytes, pos: int, flexible: bool) -> tuple[int, int]:
    """An array's length; a null array (none of the request's arrays may be null) is left to the codec."""
    if flexible:
        size = frame[pos]
        size, pos = (size, pos + 1) if size < 0x80 else uvarint(frame, pos)
        if not size:
            raise _Unusual
        return size - 1, pos
    (size,) = I32.unpack_from(frame, pos)
    if size < 0:
        raise _Unusual
    return size, pos + 4


def _string(frame: bytes, pos: int, flexible: bool, length: int) -> tuple[str, int]:
    """A non-nullable (compact) string; a null one is left to the codec."""
    if flexible:
        size = frame[pos]
        size, pos = (size, pos + 1) if size < 0x80 else uvarint(frame, pos)
        size -= 1
    else:
        (size,) = I16.unpack_from(frame, pos)
        pos += 2
    end = pos + size
    if size < 0 or end > length:
        raise _Unusual
    return frame[pos:end].decode(), end


def _topic_key(frame: bytes, pos: int, by_id: bool, flexible: bool, length: int) -> tuple[Any, int]:
    """A topic's name, or from v13 its id (the zero id reads as None, as the schema codec reads it)."""
    if not by_id:
        return _string(frame, pos, flexible, length)
    end = pos + 16
    if end > length:
        raise _Unusual
    raw = frame[pos:end]
    return (None if raw == _ZERO_ID else uuid.UUID(bytes=raw)), end
