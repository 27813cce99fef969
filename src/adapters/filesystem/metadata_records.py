"""Internal-log records, encoded and decoded by trafka's schema codec (`trafka.schema_codec`, ADR 92).

KRaft metadata record values are framed as three unsigned varints (frame version 1, record type,
record version) followed by the flexible body; `__consumer_offsets` keys and values start with an
int16 version, then the body. Batches for these logs are built with kafka-python's record builder,
imported when a batch is first built or read (`import kafka` loads its whole client, which a memory
broker's start does not need).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from trafka.domain.varint import encode_uvarint, read_uvarint
from trafka.schema_codec.messages import (  # noqa: F401  (re-exported to the stores)
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
    FeatureLevelRecord,
    GroupMetadataKey,
    GroupMetadataValue,
    Message,
    OffsetCommitKey,
    OffsetCommitValue,
    PartitionRecord,
    ProducerIdsRecord,
    ProducerSnapshot,
    RemoveAccessControlEntryRecord,
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
    ShareSnapshotKey,
    ShareSnapshotValue,
    ShareUpdateKey,
    ShareUpdateValue,
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
    TransactionLogKey,
    TransactionLogValue,
    UserScramCredentialRecord,
)

_VERSION = struct.Struct(">h")


def _kafka_records() -> Any:
    """kafka-python's record batch module, imported on first use. Importing kafka-python 3.0.12 warns
    DeprecationWarning on Python 3.11+ (its schema loader): ignored here only, so that a user's
    `pytest -W error` suite does not fail on a dependency's deprecation."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", r"(read|open)_text is deprecated", DeprecationWarning)
        from kafka.record import default_records

    return default_records


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
}
TYPE_OF = {cls: key for key, cls in METADATA_TYPES.items()}
FRAME_VERSION = 1


def encode_metadata_record(record: Message, version: int) -> bytes:
    header = encode_uvarint(FRAME_VERSION) + encode_uvarint(TYPE_OF[type(record)]) + encode_uvarint(version)
    return header + record.encode(version)


def decode_metadata_record(value: bytes) -> Any | None:
    """The record in a metadata log value, or None for a type trafka does not keep."""
    _, pos = read_uvarint(value, 0)
    record_type, pos = read_uvarint(value, pos)
    version, pos = read_uvarint(value, pos)
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


def encode_group_key(keys: Mapping[Any, Any], kind: int, group_id: str, member_id: str | None) -> bytes:
    """A modern group's record key (consumer, share and streams groups alike): the int16 key version,
    which is the record's type, then the group id and, for a member's record, the member id."""
    fields = {"group_id": group_id}
    if member_id is not None:
        fields["member_id"] = member_id
    return encode_versioned(keys[kind](version=int(kind), **fields), int(kind))


def decode_group_key(keys: Mapping[Any, Any], key: bytes) -> tuple[int, str, str | None] | None:
    """(record type, group id, member id or None) of a modern group's record key, or None for a key
    version that is not one of `keys`' types."""
    (version,) = _VERSION.unpack_from(key)
    cls = keys.get(version)
    if cls is None:
        return None
    decoded = decode_versioned(cls, key)
    return version, decoded.group_id, getattr(decoded, "member_id", None)


def build_batch(
    records: Sequence[tuple[bytes | None, bytes | None]],
    timestamp_ms: int,
    producer_id: int = -1,
    producer_epoch: int = -1,
) -> bytes:
    """A batch of records; with a producer id, a transactional one (as Kafka writes TxnOffsetCommit)."""
    builder = _kafka_records().DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=producer_id >= 0,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=0 if producer_id >= 0 else -1,
        batch_size=2**31 - 1,
    )
    for delta, (key, value) in enumerate(records):
        builder.append(delta, timestamp=timestamp_ms, key=key, value=value, headers=[])
    return bytes(builder.build())


def iter_records(batch: bytes) -> Iterator[tuple[int, bytes | None, bytes | None]]:
    """(offset, key, value) of each record in one batch; control batches yield nothing."""
    parsed = _kafka_records().DefaultRecordBatch(batch)
    if parsed.is_control_batch:
        return
    for record in parsed:
        yield record.offset, record.key, record.value


# KIP-848 consumer groups in `__consumer_offsets` (Kafka's group coordinator record schemas)


# KIP-932 share groups in `__consumer_offsets` and `__share_group_state` (Kafka 4.2's group and share
# coordinator record schemas)
