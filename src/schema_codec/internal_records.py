"""The internal topics' records, one decoder for the broker and the operator commands (ADR 101).

`__cluster_metadata` values are framed as three unsigned varints (frame version 1, record type, record
version) followed by the flexible body; `__consumer_offsets`, `__transaction_state` and
`__share_group_state` keys and values start with an int16 version, then the body. The bodies are the
classes `trafka.schema_codec.messages` compiles from Kafka's record schemas. The filesystem adapter
writes and replays them (`adapters/filesystem/metadata_records.py`); `trafka dump-log` prints them.
"""

from __future__ import annotations

import struct
from typing import Any

from .messages import (
    AccessControlEntryRecord,
    ClientQuotaRecord,
    ConfigRecord,
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataKey,
    ConsumerGroupTargetAssignmentMetadataValue,
    DelegationTokenRecord,
    FeatureLevelRecord,
    Message,
    PartitionRecord,
    ProducerIdsRecord,
    RemoveAccessControlEntryRecord,
    RemoveDelegationTokenRecord,
    RemoveTopicRecord,
    RemoveUserScramCredentialRecord,
    ShareGroupCurrentMemberAssignmentKey,
    ShareGroupCurrentMemberAssignmentValue,
    ShareGroupMemberMetadataKey,
    ShareGroupMemberMetadataValue,
    ShareGroupMetadataKey,
    ShareGroupMetadataValue,
    ShareGroupStatePartitionMetadataKey,
    ShareGroupStatePartitionMetadataValue,
    ShareGroupTargetAssignmentMemberKey,
    ShareGroupTargetAssignmentMemberValue,
    ShareGroupTargetAssignmentMetadataKey,
    ShareGroupTargetAssignmentMetadataValue,
    StreamsGroupCurrentMemberAssignmentKey,
    StreamsGroupCurrentMemberAssignmentValue,
    StreamsGroupMemberMetadataKey,
    StreamsGroupMemberMetadataValue,
    StreamsGroupMetadataKey,
    StreamsGroupMetadataValue,
    StreamsGroupTargetAssignmentMemberKey,
    StreamsGroupTargetAssignmentMemberValue,
    StreamsGroupTargetAssignmentMetadataKey,
    StreamsGroupTargetAssignmentMetadataValue,
    StreamsGroupTopologyKey,
    StreamsGroupTopologyValue,
    TopicRecord,
    UserScramCredentialRecord,
)

_VERSION = struct.Struct(">h")
FRAME_VERSION = 1

# KRaft record types (Kafka's MetadataRecordType)
METADATA_TYPES: dict[int, type[Message]] = {
    2: TopicRecord,
    3: PartitionRecord,
    4: ConfigRecord,
    9: RemoveTopicRecord,
    12: FeatureLevelRecord,
    15: ProducerIdsRecord,
    11: UserScramCredentialRecord,
    22: RemoveUserScramCredentialRecord,
    18: AccessControlEntryRecord,
    19: RemoveAccessControlEntryRecord,
    14: ClientQuotaRecord,
    10: DelegationTokenRecord,
    26: RemoveDelegationTokenRecord,
}
TYPE_OF = {cls: key for key, cls in METADATA_TYPES.items()}

# `__consumer_offsets` key versions of KIP-848 consumer groups -> (key, value) classes.
CONSUMER_GROUP_RECORDS: dict[int, tuple[Any, Any]] = {
    3: (ConsumerGroupMetadataKey, ConsumerGroupMetadataValue),
    5: (ConsumerGroupMemberMetadataKey, ConsumerGroupMemberMetadataValue),
    6: (ConsumerGroupTargetAssignmentMetadataKey, ConsumerGroupTargetAssignmentMetadataValue),
    7: (ConsumerGroupTargetAssignmentMemberKey, ConsumerGroupTargetAssignmentMemberValue),
    8: (ConsumerGroupCurrentMemberAssignmentKey, ConsumerGroupCurrentMemberAssignmentValue),
}

# `__consumer_offsets` key versions of KIP-932 share groups -> (key, value) classes.
SHARE_GROUP_RECORDS: dict[int, tuple[Any, Any]] = {
    10: (ShareGroupMemberMetadataKey, ShareGroupMemberMetadataValue),
    11: (ShareGroupMetadataKey, ShareGroupMetadataValue),
    12: (ShareGroupTargetAssignmentMetadataKey, ShareGroupTargetAssignmentMetadataValue),
    13: (ShareGroupTargetAssignmentMemberKey, ShareGroupTargetAssignmentMemberValue),
    14: (ShareGroupCurrentMemberAssignmentKey, ShareGroupCurrentMemberAssignmentValue),
    15: (ShareGroupStatePartitionMetadataKey, ShareGroupStatePartitionMetadataValue),
}

# `__consumer_offsets` key versions of KIP-1071 streams groups -> (key, value) classes.
STREAMS_GROUP_RECORDS: dict[int, tuple[Any, Any]] = {
    17: (StreamsGroupMetadataKey, StreamsGroupMetadataValue),
    19: (StreamsGroupMemberMetadataKey, StreamsGroupMemberMetadataValue),
    20: (StreamsGroupTargetAssignmentMetadataKey, StreamsGroupTargetAssignmentMetadataValue),
    21: (StreamsGroupTargetAssignmentMemberKey, StreamsGroupTargetAssignmentMemberValue),
    22: (StreamsGroupCurrentMemberAssignmentKey, StreamsGroupCurrentMemberAssignmentValue),
    23: (StreamsGroupTopologyKey, StreamsGroupTopologyValue),
}


def _uvarint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if not value:
            out.append(byte)
            return bytes(out)
        out.append(byte | 0x80)


def _read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def encode_metadata_record(record: Message, version: int) -> bytes:
    header = _uvarint(FRAME_VERSION) + _uvarint(TYPE_OF[type(record)]) + _uvarint(version)
    return header + record.encode(version)


def metadata_record_type(value: bytes) -> tuple[int, int]:
    """(record type, record version) of a metadata log value."""
    _, pos = _read_uvarint(value, 0)
    record_type, pos = _read_uvarint(value, pos)
    version, _ = _read_uvarint(value, pos)
    return record_type, version


def decode_metadata_record(value: bytes) -> Any | None:
    """The record in a metadata log value, or None for a type not decoded here."""
    _, pos = _read_uvarint(value, 0)
    record_type, pos = _read_uvarint(value, pos)
    version, pos = _read_uvarint(value, pos)
    cls = METADATA_TYPES.get(record_type)
    if cls is None or version > cls.max_version:
        return None
    return cls.decode(value[pos:], version, exact=False)  # bytes after the record are ignored, as Kafka does


def encode_versioned(record: Message, version: int) -> bytes:
    """int16 version, then the body: the `__consumer_offsets` key and value format."""
    return _VERSION.pack(version) + record.encode(version)


def decode_versioned(cls: type[Message], data: bytes) -> Any:
    """A versioned key or value; a version past the schema's is read as its highest (as Kafka's coordinators
    read a newer record's known fields)."""
    (version,) = _VERSION.unpack_from(data)
    return cls.decode(data[2:], min(version, cls.max_version), exact=False)
