"""KIP-932 share group records in `__consumer_offsets`: the domain's `ShareGroupRecord` to and from
Kafka's keys (int16 key version = record type 10-15, then group [and member]) and flexible values."""

from __future__ import annotations

from typing import Any

from trafka.domain.groups.modern.records import GroupEpoch, TargetAssignmentEpoch, TargetAssignmentMember
from trafka.domain.groups.share.records import (
    ShareCurrentAssignment,
    ShareGroupRecord,
    ShareMemberMetadata,
    ShareRecordKind,
    StatePartitionMetadata,
)

from .metadata_records import (
    SHARE_GROUP_RECORDS,
    decode_group_key,
    decode_versioned,
    encode_group_key,
    encode_versioned,
)

# Kafka's key and value classes of each kind, from the one table the dump-log decoder reads too (the
# kind is the key version).
KEYS: dict[ShareRecordKind, Any] = {kind: SHARE_GROUP_RECORDS[int(kind)][0] for kind in ShareRecordKind}
VALUES: dict[ShareRecordKind, Any] = {kind: SHARE_GROUP_RECORDS[int(kind)][1] for kind in ShareRecordKind}
# (9, ShareGroupPartitionMetadata, which Kafka 4.0 wrote and 4.1 replaced by a metadata hash, is not
# one of them: the offset store reads past it as past any other coordinator's record)
KEY_VERSIONS = frozenset(int(kind) for kind in ShareRecordKind)
VALUE_VERSION = 0


def encode_key(record: ShareGroupRecord) -> bytes:
    return encode_group_key(KEYS, record.kind, record.group_id, record.member_id)


def encode_value(record: ShareGroupRecord) -> bytes | None:
    v = record.value
    if v is None:
        return None
    cls = VALUES[record.kind]
    if isinstance(v, GroupEpoch):
        value = cls(version=VALUE_VERSION, epoch=v.epoch, metadata_hash=v.metadata_hash)
    elif isinstance(v, TargetAssignmentEpoch):
        value = cls(version=VALUE_VERSION, assignment_epoch=v.assignment_epoch)
    elif isinstance(v, ShareMemberMetadata):
        value = cls(
            version=VALUE_VERSION,
            rack_id=v.rack_id,
            client_id=v.client_id,
            client_host=v.client_host,
            subscribed_topic_names=list(v.subscribed_topic_names),
        )
    elif isinstance(v, TargetAssignmentMember):
        value = cls(
            version=VALUE_VERSION,
            topic_partitions=[cls.TopicPartition(topic_id=t, partitions=list(ps)) for t, ps in v.partitions],
        )
    elif isinstance(v, ShareCurrentAssignment):
        value = cls(
            version=VALUE_VERSION,
            member_epoch=v.member_epoch,
            previous_member_epoch=v.previous_member_epoch,
            state=v.state,
            assigned_partitions=[cls.TopicPartitions(topic_id=t, partitions=list(ps)) for t, ps in v.assigned],
        )
    else:
        info = cls.TopicPartitionsInfo
        value = cls(
            version=VALUE_VERSION,
            initializing_topics=[info(topic_id=t, topic_name=n, partitions=list(ps)) for t, n, ps in v.initializing],
            initialized_topics=[info(topic_id=t, topic_name=n, partitions=list(ps)) for t, n, ps in v.initialized],
            deleting_topics=[cls.TopicInfo(topic_id=t, topic_name=n) for t, n in v.deleting],
        )
    return encode_versioned(value, VALUE_VERSION)


def decode(key: bytes, value: bytes | None) -> ShareGroupRecord | None:
    """The record, or None for a key version that is not a share group's."""
    found = decode_group_key(KEYS, key)
    if found is None:
        return None
    version, group_id, member_id = found
    kind = ShareRecordKind(version)
    if value is None:
        return ShareGroupRecord(kind, group_id, member_id, None)
    if kind is ShareRecordKind.GROUP_EPOCH:
        return ShareGroupRecord(kind, group_id, member_id, _group_epoch(value))
    v = decode_versioned(VALUES[kind], value)
    decoded: Any
    if kind is ShareRecordKind.TARGET_ASSIGNMENT_EPOCH:
        decoded = TargetAssignmentEpoch(v.assignment_epoch)
    elif kind is ShareRecordKind.MEMBER_METADATA:
        decoded = ShareMemberMetadata(v.rack_id, v.client_id, v.client_host, tuple(v.subscribed_topic_names))
    elif kind is ShareRecordKind.TARGET_ASSIGNMENT_MEMBER:
        decoded = TargetAssignmentMember(tuple((e.topic_id, tuple(e.partitions)) for e in v.topic_partitions))
    elif kind is ShareRecordKind.CURRENT_ASSIGNMENT:
        decoded = ShareCurrentAssignment(
            v.member_epoch,
            v.previous_member_epoch,
            v.state,
            tuple((e.topic_id, tuple(e.partitions)) for e in v.assigned_partitions),
        )
    else:
        decoded = StatePartitionMetadata(
            tuple((e.topic_id, e.topic_name, tuple(e.partitions)) for e in v.initializing_topics),
            tuple((e.topic_id, e.topic_name, tuple(e.partitions)) for e in v.initialized_topics),
            tuple((e.topic_id, e.topic_name) for e in v.deleting_topics),
        )
    return ShareGroupRecord(kind, group_id, member_id, decoded)


def _group_epoch(value: bytes) -> GroupEpoch:
    """ShareGroupMetadataValue's epoch and metadata hash. Kafka 4.2's v0 is the epoch and an int64
    MetadataHash (not a tagged field: `kafka-dump-log` could not read the 7-byte values trafka wrote
    before, epoch and no hash); such an older value is still read, its epoch being where it is in both
    layouts, its hash 0."""
    try:
        v = decode_versioned(VALUES[ShareRecordKind.GROUP_EPOCH], value)
        return GroupEpoch(int(v.epoch), int(v.metadata_hash))
    except Exception:  # the older layout: int16 version, int32 epoch, an empty tagged-field section
        return GroupEpoch(int.from_bytes(value[2:6], "big", signed=True))
