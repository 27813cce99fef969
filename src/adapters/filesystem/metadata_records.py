"""Internal-log records and their batches, for the stores: the records are encoded and decoded by
`trafka.schema_codec.internal_records` (the one decoder `trafka dump-log` uses too, ADR 101). Batches for these logs are built and read with trafka's record batch
codec (`trafka.schema_codec.records`, ADR 101), the one every reader of whole records shares.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import crc32c

from trafka.schema_codec import records as batch_codec
from trafka.schema_codec.internal_records import (  # noqa: F401  (re-exported to the stores)
    CONSUMER_GROUP_RECORDS,
    FRAME_VERSION,
    METADATA_TYPES,
    SHARE_GROUP_RECORDS,
    STREAMS_GROUP_RECORDS,
    TYPE_OF,
    decode_metadata_record,
    decode_versioned,
    encode_metadata_record,
    encode_versioned,
)
from trafka.schema_codec.messages import (  # noqa: F401  (re-exported to the stores)
    AccessControlEntryRecord,
    ClientQuotaRecord,
    ConfigRecord,
    DelegationTokenRecord,
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
    RemoveDelegationTokenRecord,
    RemoveTopicRecord,
    RemoveUserScramCredentialRecord,
    ShareSnapshotKey,
    ShareSnapshotValue,
    ShareUpdateKey,
    ShareUpdateValue,
    TopicRecord,
    TransactionLogKey,
    TransactionLogValue,
    UserScramCredentialRecord,
)


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
    version = int.from_bytes(key[:2], "big", signed=True)
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
    return batch_codec.build_batch(
        [batch_codec.NewRecord(timestamp_ms, key, value) for key, value in records],
        crc32c.crc32c,
        partition_leader_epoch=0,  # the single node's one epoch, as the internal logs were always written
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=0 if producer_id >= 0 else -1,
        transactional=producer_id >= 0,
    )


def iter_records(batch: bytes) -> Iterator[tuple[int, bytes | None, bytes | None]]:
    """(offset, key, value) of each record in one batch; control batches yield nothing. The internal
    logs are written uncompressed (as Kafka's coordinators write them by default); a compressed batch
    there is corrupt to this reader."""
    if batch_codec.BatchHeader.parse(batch).is_control:
        return
    for record in batch_codec.decode_records(batch):
        yield record.offset, record.key, record.value
