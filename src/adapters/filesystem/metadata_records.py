"""Internal-log records and their batches, for the stores: the records are encoded and decoded by
`trafka.schema_codec.internal_records` (the one decoder `trafka dump-log` uses too, ADR 101). Batches for these logs are built and read with trafka's record batch
codec (`trafka.schema_codec.records`, ADR 101), the one every reader of whole records shares.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

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
