"""The Fetch request's fast decoder (ADR 116), into the schema codec's own `FetchRequest` objects: every
consumer sends one per answer, and the schema codec's interpreter took a tenth of the broker's busy time
on the end-to-end latency path. Only the shape clients send is read here (no tagged fields set, no null
where the schema has none); any other frame, and any frame this decoder cannot read, is decoded by the
schema codec, so a malformed frame fails exactly as it fails there.
`tests/unit/adapters/kafka/test_fast_fetch_request.py` proves with hypothesis that both give equal
objects at every version served. The response is encoded in `fast_fetch.py` (ADR 31); the two were one
module until it outgrew the line budget (ADR 130).
"""

from __future__ import annotations

import functools
import struct
import uuid
from typing import Any

from .fast_fetch import FLEXIBLE_FROM
from .primitives import I16, I32, request_header, uvarint


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
        if version >= 13:
            decoded = _one_partition(frame, version)
            if decoded is not None:
                return decoded
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


# v13+, one topic by id and one partition, nothing forgotten, no tagged fields: (the top fields,) the topic
# count, its id, the partition count, the partition, its tags, the topic's tags, the forgotten topics' count
_HEADER = struct.Struct(">hhih")  # api key, version, correlation id, client id length
_ONE_V15 = struct.Struct(">iiibiiB16sBiiqiqiBBB")
_ONE_V13 = struct.Struct(">iiiibiiB16sBiiqiqiBBB")  # ... after the replica id


def _one_partition(frame: bytes, version: int) -> tuple[int, str | None, Any] | None:
    """`_decode` of the frame a consumer sends at the log end (librdkafka's, sessionless: one topic by id,
    one partition, no tagged field) read with one `struct` (ADR 134); None for any other frame, which
    `_decode` reads. Proven equal to `_decode` by `tests/unit/adapters/kafka/test_fast_fetch_request.py`."""
    _, _, correlation_id, size = _HEADER.unpack_from(frame, 0)
    end = 10 + size
    length = len(frame)
    if size < 0 or end >= length or frame[end]:  # a null client id, or header tags: `_decode`
        return None
    pos = end + 1
    shape = _ONE_V15 if version >= 15 else _ONE_V13
    rack_at = pos + shape.size
    if rack_at >= length:
        return None
    if version >= 15:
        replica_id = None
        (
            max_wait, min_bytes, max_bytes, isolation, session_id, epoch, topics, raw, partitions,
            index, leader_epoch, offset, last_epoch, log_start, limit, partition_tags, topic_tags, forgotten,
        ) = shape.unpack_from(frame, pos)  # fmt: skip
    else:
        (
            replica_id, max_wait, min_bytes, max_bytes, isolation, session_id, epoch, topics, raw, partitions,
            index, leader_epoch, offset, last_epoch, log_start, limit, partition_tags, topic_tags, forgotten,
        ) = shape.unpack_from(frame, pos)  # fmt: skip
    rack_size = frame[rack_at] - 1  # a compact string of fewer than 127 bytes
    rack_end = rack_at + 1 + rack_size
    if (
        topics != 2
        or partitions != 2
        or partition_tags
        or topic_tags
        or forgotten != 1
        or raw == _ZERO_ID
        or not 0 <= rack_size < 0x7F
        or rack_end >= length
        or frame[rack_end]
    ):
        return None
    topic_id = _ids.get(raw) or _topic_id(raw)
    topic_class, partition_class = _classes()[1:3]
    partition = _new(partition_class)
    partition.__dict__ = fields = {
        "_version": version,
        "partition": index,
        "current_leader_epoch": leader_epoch,
        "fetch_offset": offset,
        "last_fetched_epoch": last_epoch,
        "log_start_offset": log_start,
        "partition_max_bytes": limit,
    }
    if version >= 17:
        fields["replica_directory_id"] = None
        if version >= 18:
            fields["high_watermark"] = _NO_HIGH_WATERMARK
    topic = _new(topic_class)
    topic.__dict__ = {"_version": version, "topic_id": topic_id, "partitions": [partition]}
    request = _new(_classes()[0])
    request.__dict__ = fields = {
        "_version": version,
        "cluster_id": None,
        "replica_state": None,
        "max_wait_ms": max_wait,
        "min_bytes": min_bytes,
        "max_bytes": max_bytes,
        "isolation_level": isolation,
        "session_id": session_id,
        "session_epoch": epoch,
        "topics": [topic],
        "forgotten_topics_data": [],
        "rack_id": frame[rack_at + 1 : rack_end].decode(),
    }
    if replica_id is not None:  # v13-14
        del fields["replica_state"]
        fields["replica_id"] = replica_id
    return correlation_id, frame[10:end].decode(), request


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
    if raw == _ZERO_ID:
        return None, end
    return _ids.get(raw) or _topic_id(raw), end


def _topic_id(raw: bytes) -> uuid.UUID:
    """A consumer names the same topics in every request: one `UUID` each, kept (ADR 130)."""
    if len(_ids) >= _IDS_KEPT:
        _ids.clear()
    topic_id = _ids[raw] = uuid.UUID(bytes=raw)
    return topic_id


_ids: dict[bytes, uuid.UUID] = {}  # `UUID` is immutable: one object is shared by every request naming it
_IDS_KEPT = 4096
