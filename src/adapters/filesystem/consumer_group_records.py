"""KIP-848 consumer group records in `__consumer_offsets`: the domain's `ConsumerGroupRecord` to and
from Kafka's keys (int16 key version = record type, then group [and member]) and flexible values."""

from __future__ import annotations

from typing import Any

from trafka.domain.groups.model import Protocol
from trafka.domain.groups.modern.model import ClassicMemberMetadata
from trafka.domain.groups.modern.records import (
    ConsumerGroupRecord,
    CurrentAssignment,
    GroupEpoch,
    MemberMetadata,
    RecordKind,
    TargetAssignmentEpoch,
    TargetAssignmentMember,
    TopicIdPartitions,
)

from .metadata_records import (
    CONSUMER_GROUP_RECORDS,
    decode_group_key,
    decode_versioned,
    encode_group_key,
    encode_versioned,
)

# Kafka's key and value classes of each kind, from the one table the dump-log decoder reads too (the
# kind is the key version).
KEYS: dict[RecordKind, Any] = {kind: CONSUMER_GROUP_RECORDS[int(kind)][0] for kind in RecordKind}
VALUES: dict[RecordKind, Any] = {kind: CONSUMER_GROUP_RECORDS[int(kind)][1] for kind in RecordKind}
KEY_VERSIONS = frozenset(int(kind) for kind in RecordKind)
VALUE_VERSION = 0


def encode_key(record: ConsumerGroupRecord) -> bytes:
    return encode_group_key(KEYS, record.kind, record.group_id, record.member_id)


def _partitions(cls: Any, partitions: TopicIdPartitions) -> list[Any]:
    return [cls(topic_id=tid, partitions=list(ps)) for tid, ps in partitions]


def encode_value(record: ConsumerGroupRecord) -> bytes | None:
    v = record.value
    if v is None:
        return None
    cls = VALUES[record.kind]
    if isinstance(v, GroupEpoch):
        value = cls(version=VALUE_VERSION, epoch=v.epoch, metadata_hash=v.metadata_hash)
    elif isinstance(v, TargetAssignmentEpoch):
        value = cls(version=VALUE_VERSION, assignment_epoch=v.assignment_epoch)
    elif isinstance(v, MemberMetadata):
        value = cls(
            version=VALUE_VERSION,
            instance_id=v.instance_id,
            rack_id=v.rack_id,
            client_id=v.client_id,
            client_host=v.client_host,
            subscribed_topic_names=list(v.subscribed_topic_names),
            subscribed_topic_regex=v.subscribed_topic_regex or "",  # Kafka writes "" for no regex
            rebalance_timeout_ms=v.rebalance_timeout_ms,
            server_assignor=v.server_assignor,
            classic_member_metadata=_classic(cls, v.classic),
        )
    elif isinstance(v, TargetAssignmentMember):
        value = cls(version=VALUE_VERSION, topic_partitions=_partitions(cls.TopicPartition, v.partitions))
    else:
        value = cls(
            version=VALUE_VERSION,
            member_epoch=v.member_epoch,
            previous_member_epoch=v.previous_member_epoch,
            state=v.state,
            assigned_partitions=_partitions(cls.TopicPartitions, v.assigned),
            partitions_pending_revocation=_partitions(cls.TopicPartitions, v.pending_revocation),
        )
    return encode_versioned(value, VALUE_VERSION)


def _classic(cls: Any, classic: ClassicMemberMetadata | None) -> Any:
    """The tagged ClassicMemberMetadata of a member speaking the classic protocol (ADR 50)."""
    if classic is None:
        return None
    c = cls.ClassicMemberMetadata
    return c(
        session_timeout_ms=classic.session_timeout_ms,
        supported_protocols=[c.ClassicProtocol(name=p.name, metadata=p.metadata) for p in classic.supported_protocols],
    )


def _from_classic(value: Any) -> ClassicMemberMetadata | None:
    if value is None:
        return None
    protocols = tuple(Protocol(p.name, bytes(p.metadata)) for p in value.supported_protocols)
    return ClassicMemberMetadata(value.session_timeout_ms, protocols)


def _ids(entries: Any) -> TopicIdPartitions:
    return tuple((e.topic_id, tuple(e.partitions)) for e in entries)


def decode(key: bytes, value: bytes | None) -> ConsumerGroupRecord | None:
    """The record, or None for a key version that is not a consumer group's."""
    found = decode_group_key(KEYS, key)
    if found is None:
        return None
    version, group_id, member_id = found
    kind = RecordKind(version)
    if value is None:
        return ConsumerGroupRecord(kind, group_id, member_id, None)
    v = decode_versioned(VALUES[kind], value)
    decoded: Any
    if kind is RecordKind.GROUP_EPOCH:
        decoded = GroupEpoch(v.epoch, v.metadata_hash or 0)
    elif kind is RecordKind.TARGET_ASSIGNMENT_EPOCH:
        decoded = TargetAssignmentEpoch(v.assignment_epoch)
    elif kind is RecordKind.MEMBER_METADATA:
        decoded = MemberMetadata(
            v.instance_id,
            v.rack_id,
            v.client_id,
            v.client_host,
            tuple(v.subscribed_topic_names),
            v.subscribed_topic_regex or None,  # "" (Kafka's) or null: no regex
            v.rebalance_timeout_ms,
            v.server_assignor,
            _from_classic(getattr(v, "classic_member_metadata", None)),
        )
    elif kind is RecordKind.TARGET_ASSIGNMENT_MEMBER:
        decoded = TargetAssignmentMember(_ids(v.topic_partitions))
    else:
        decoded = CurrentAssignment(
            v.member_epoch,
            v.previous_member_epoch,
            v.state,
            _ids(v.assigned_partitions),
            _ids(v.partitions_pending_revocation),
        )
    return ConsumerGroupRecord(kind, group_id, member_id, decoded)
