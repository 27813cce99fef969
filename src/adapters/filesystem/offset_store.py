"""Committed offsets and group metadata in `__consumer_offsets-0`, in Kafka's key and value format.

Keys are OffsetCommitKey v1 (group, topic, partition), values OffsetCommitValue v4 as Kafka 4.2 writes
them (offset, leader epoch, metadata, commit timestamp, and the tagged topic id when the commit named the
topic by id); a deleted offset is a tombstone (null value). A group's metadata
is GroupMetadataKey v2 (group) with GroupMetadataValue v3, the version Kafka 4 writes (0-4 are read);
a deleted group gets a tombstone for it after its offsets' tombstones. Offsets a
transaction commits (TxnOffsetCommit) are written at once as a transactional batch of its producer
and decided by the marker written when the transaction ends, as in Kafka; replay keeps undecided ones
staged, so a transaction survives a restart. The log is replayed at startup as it is: the log
cleaner compacts it (it is a compacted topic with Kafka's 100 MiB offsets.topic.segment.bytes), as
Kafka's LogCleaner compacts `__consumer_offsets`; the store never rewrites it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping

from trafka.domain.control import COMMIT, control_type
from trafka.domain.groups.group_metadata import CommittedOffset, GroupMetadata, MemberMetadata
from trafka.domain.groups.modern.records import ConsumerGroupRecord, RecordKey
from trafka.domain.groups.share.records import ShareGroupRecord, ShareRecordKey
from trafka.domain.groups.streams.records import StreamsGroupRecord, StreamsRecordKey
from trafka.domain.topics import TopicPartition

from . import consumer_group_records, share_group_records, streams_group_records
from .internal_log import InternalLog
from .metadata_records import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    decode_versioned,
    encode_versioned,
    iter_records,
)

KEY_VERSION = 1
VALUE_VERSION = 4  # Kafka's offsetCommitValueVersion without an expire timestamp
ZERO_ID = uuid.UUID(int=0)  # Kafka's ZERO_UUID: the tagged topic id's default, not written
GROUP_KEY_VERSION = 2
GROUP_VALUE_VERSION = 3  # Kafka's MetadataVersion.groupMetadataValueVersion(): the last non-flexible one


def _key(group_id: str, tp: TopicPartition) -> bytes:
    return encode_versioned(
        OffsetCommitKey(version=KEY_VERSION, group=group_id, topic=tp.topic, partition=tp.partition), KEY_VERSION
    )


def _value(committed: CommittedOffset) -> bytes:
    value = OffsetCommitValue(
        version=VALUE_VERSION,
        offset=committed.offset,
        leader_epoch=committed.leader_epoch,
        metadata=committed.metadata or "",
        commit_timestamp=committed.commit_timestamp_ms,
        topic_id=committed.topic_id or ZERO_ID,
    )
    return encode_versioned(value, VALUE_VERSION)


class FileOffsetStore:
    def __init__(self, offsets_log: InternalLog) -> None:
        self._log = offsets_log
        self._groups: dict[str, dict[TopicPartition, CommittedOffset]] = {}
        # producer id -> group -> staged offsets (None: a staged deletion), decided by a marker
        self._staged: dict[int, dict[str, dict[TopicPartition, CommittedOffset | None]]] = {}
        self._metadata: dict[str, GroupMetadata] = {}
        self._consumer_groups: dict[RecordKey, ConsumerGroupRecord] = {}  # KIP-848 groups: last value per key
        self._share_groups: dict[ShareRecordKey, ShareGroupRecord] = {}  # KIP-932 groups: last value per key
        self._streams_groups: dict[StreamsRecordKey, StreamsGroupRecord] = {}  # KIP-1071 groups: likewise
        for header, batch in offsets_log.batches():
            if header.is_control:
                if header.is_transactional:
                    decided = self._staged.pop(header.producer_id, {})
                    if control_type(batch) == COMMIT:
                        for group_id, offsets in decided.items():
                            self._apply(group_id, offsets)
                continue
            target = self._staged.setdefault(header.producer_id, {}) if header.is_transactional else None
            for _, key, value in iter_records(batch):
                if key is None:
                    continue
                key_version = int.from_bytes(key[:2], "big")
                if key_version == GROUP_KEY_VERSION:
                    self._replay_group(key, value)
                    continue
                if key_version in consumer_group_records.KEY_VERSIONS:
                    self._replay_consumer_group(consumer_group_records.decode(key, value))
                    continue
                if key_version in streams_group_records.KEY_VERSIONS:
                    self._replay_streams_group(streams_group_records.decode(key, value))
                    continue
                if key_version in share_group_records.KEY_VERSIONS:
                    self._replay_share_group(share_group_records.decode(key, value))
                    continue
                if key_version > KEY_VERSION:
                    continue  # another coordinator record trafka does not keep
                group_id, tp, committed = _decode(key, value)
                if target is not None:
                    target.setdefault(group_id, {})[tp] = committed
                else:
                    self._apply(group_id, {tp: committed})
        self._groups = {g: offsets for g, offsets in self._groups.items() if offsets}

    def _replay_group(self, key: bytes, value: bytes | None) -> None:
        group_id = decode_versioned(GroupMetadataKey, key).group
        if value is None:
            self._metadata.pop(group_id, None)
        else:
            self._metadata[group_id] = _decode_group(value)

    def _replay_consumer_group(self, record: ConsumerGroupRecord | None) -> None:
        if record is None:
            return
        if record.value is None:
            self._consumer_groups.pop(record.key, None)
        else:
            self._consumer_groups[record.key] = record

    def store_consumer_group_records(self, records: Iterable[ConsumerGroupRecord]) -> None:
        written = list(records)
        if not written:
            return
        self._log.append(
            [(consumer_group_records.encode_key(r), consumer_group_records.encode_value(r)) for r in written]
        )
        for record in written:
            self._replay_consumer_group(record)

    def consumer_group_records(self) -> list[ConsumerGroupRecord]:
        return list(self._consumer_groups.values())

    def _replay_streams_group(self, record: StreamsGroupRecord | None) -> None:
        if record is None:
            return
        if record.value is None:
            self._streams_groups.pop(record.key, None)
        else:
            self._streams_groups[record.key] = record

    def store_streams_group_records(self, records: Iterable[StreamsGroupRecord]) -> None:
        written = list(records)
        if not written:
            return
        self._log.append(
            [(streams_group_records.encode_key(r), streams_group_records.encode_value(r)) for r in written]
        )
        for record in written:
            self._replay_streams_group(record)

    def streams_group_records(self) -> list[StreamsGroupRecord]:
        return list(self._streams_groups.values())

    def _replay_share_group(self, record: ShareGroupRecord | None) -> None:
        if record is None:
            return
        if record.value is None:
            self._share_groups.pop(record.key, None)
        else:
            self._share_groups[record.key] = record

    def store_share_group_records(self, records: Iterable[ShareGroupRecord]) -> None:
        written = list(records)
        if not written:
            return
        self._log.append([(share_group_records.encode_key(r), share_group_records.encode_value(r)) for r in written])
        for record in written:
            self._replay_share_group(record)

    def share_group_records(self) -> list[ShareGroupRecord]:
        return list(self._share_groups.values())

    def _apply(self, group_id: str, offsets: Mapping[TopicPartition, CommittedOffset | None]) -> None:
        committed = self._groups.setdefault(group_id, {})
        for tp, value in offsets.items():
            if value is None:
                committed.pop(tp, None)
            else:
                committed[tp] = value

    def commit(self, group_id: str, offsets: Mapping[TopicPartition, CommittedOffset]) -> None:
        self._log.append([(_key(group_id, tp), _value(c)) for tp, c in offsets.items()])
        self._groups.setdefault(group_id, {}).update(offsets)

    def fetch(self, group_id: str) -> Mapping[TopicPartition, CommittedOffset]:
        return dict(self._groups.get(group_id, {}))

    def delete(self, group_id: str, partitions: Iterable[TopicPartition]) -> None:
        committed = self._groups.get(group_id, {})
        gone = [tp for tp in partitions if tp in committed]
        self._log.append([(_key(group_id, tp), None) for tp in gone])
        for tp in gone:
            del committed[tp]

    def delete_group(self, group_id: str) -> None:
        """Offset tombstones, then the group's, in one batch (Kafka's DeleteGroups writes the same)."""
        committed = self._groups.pop(group_id, {})
        self._log.append([(_key(group_id, tp), None) for tp in committed] + [(_group_key(group_id), None)])
        self._metadata.pop(group_id, None)

    def groups(self) -> list[str]:
        return list(self._groups)

    def store_group(self, group_id: str, metadata: GroupMetadata | None) -> None:
        if metadata is None:
            self._log.append([(_group_key(group_id), None)])
            self._metadata.pop(group_id, None)
            return
        self._log.append([(_group_key(group_id), _group_value(metadata))])
        self._metadata[group_id] = metadata

    def group_metadata(self) -> Mapping[str, GroupMetadata]:
        return dict(self._metadata)

    def stage_transactional(
        self, producer_id: int, producer_epoch: int, group_id: str, offsets: Mapping[TopicPartition, CommittedOffset]
    ) -> None:
        """Written now as a transactional batch of the producer, as Kafka writes TxnOffsetCommit."""
        self._log.append([(_key(group_id, tp), _value(c)) for tp, c in offsets.items()], producer_id, producer_epoch)
        self._staged.setdefault(producer_id, {}).setdefault(group_id, {}).update(offsets)

    def end_transactional(self, producer_id: int, producer_epoch: int, commit: bool) -> None:
        decided = self._staged.pop(producer_id, None)
        if decided is None:
            return
        self._log.append_marker(producer_id, producer_epoch, commit)
        if commit:
            for group_id, offsets in decided.items():
                self._apply(group_id, offsets)

    def has_pending(self, group_id: str, tp: TopicPartition | None = None) -> bool:
        if tp is None:
            return any(staged.get(group_id) for staged in self._staged.values())
        return any(tp in staged.get(group_id, {}) for staged in self._staged.values())


def _decode(key: bytes, value: bytes | None) -> tuple[str, TopicPartition, CommittedOffset | None]:
    k = decode_versioned(OffsetCommitKey, key)
    tp = TopicPartition(k.topic, k.partition)
    if value is None:
        return k.group, tp, None
    v = decode_versioned(OffsetCommitValue, value)
    return (
        k.group,
        tp,
        CommittedOffset(
            v.offset,
            v.leader_epoch if v.version >= 3 else -1,
            v.metadata,
            v.commit_timestamp,
            v.topic_id if v.version >= 4 and v.topic_id != ZERO_ID else None,
        ),
    )


def _group_key(group_id: str) -> bytes:
    return encode_versioned(GroupMetadataKey(version=GROUP_KEY_VERSION, group=group_id), GROUP_KEY_VERSION)


def _group_value(metadata: GroupMetadata) -> bytes:
    member = GroupMetadataValue.MemberMetadata
    value = GroupMetadataValue(
        version=GROUP_VALUE_VERSION,
        protocol_type=metadata.protocol_type,
        generation=metadata.generation_id,
        protocol=metadata.protocol_name,
        leader=metadata.leader_id,
        current_state_timestamp=metadata.current_state_timestamp_ms,
        members=[
            member(
                version=GROUP_VALUE_VERSION,
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                rebalance_timeout=m.rebalance_timeout_ms,
                session_timeout=m.session_timeout_ms,
                subscription=m.subscription,
                assignment=m.assignment,
            )
            for m in metadata.members
        ],
    )
    return encode_versioned(value, GROUP_VALUE_VERSION)


def _decode_group(value: bytes) -> GroupMetadata:
    """Any value version Kafka has written (0-4); fields a version lacks take the schema's defaults."""
    v = decode_versioned(GroupMetadataValue, value)
    return GroupMetadata(
        protocol_type=v.protocol_type,
        generation_id=v.generation,
        protocol_name=v.protocol,
        leader_id=v.leader,
        current_state_timestamp_ms=v.current_state_timestamp,
        members=tuple(
            MemberMetadata(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                rebalance_timeout_ms=m.rebalance_timeout,
                session_timeout_ms=m.session_timeout,
                subscription=bytes(m.subscription),
                assignment=bytes(m.assignment),
            )
            for m in v.members
        ),
    )
