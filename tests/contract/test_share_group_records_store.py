"""KIP-932 share group records in `__consumer_offsets`: Kafka 4.2's key versions 10-15 with their
flexible values, byte for byte; replayed after a restart beside the consumer group records (last value
per key, tombstones delete) and kept by the log cleaner's compaction; the memory store keeps the same
contract."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.contract.test_group_metadata_store import CHURN, FileStores, clean, record_count
from trafka.adapters.filesystem import share_group_records as codec
from trafka.adapters.memory.offset_store import MemoryOffsetStore
from trafka.domain.groups.modern.records import (
    ConsumerGroupRecord,
    GroupEpoch,
    RecordKind,
    TargetAssignmentEpoch,
    TargetAssignmentMember,
)
from trafka.domain.groups.share.records import (
    ShareCurrentAssignment,
    ShareGroupRecord,
    ShareMemberMetadata,
    ShareRecordKind,
    StatePartitionMetadata,
)

K = ShareRecordKind
T = uuid.UUID(int=42)
RECORDS = [
    ShareGroupRecord(K.MEMBER_METADATA, "g", "m1", ShareMemberMetadata(None, "client", "/10.0.0.1", ("t",))),
    ShareGroupRecord(K.GROUP_EPOCH, "g", None, GroupEpoch(3)),
    ShareGroupRecord(K.TARGET_ASSIGNMENT_MEMBER, "g", "m1", TargetAssignmentMember(((T, (0, 1)),))),
    ShareGroupRecord(K.TARGET_ASSIGNMENT_EPOCH, "g", None, TargetAssignmentEpoch(3)),
    ShareGroupRecord(K.CURRENT_ASSIGNMENT, "g", "m1", ShareCurrentAssignment(3, 2, 2, ((T, (0, 1)),))),
    ShareGroupRecord(K.STATE_PARTITION_METADATA, "g", None, StatePartitionMetadata(initialized=((T, "t", (0,)),))),
]


@pytest.fixture
def stores(tmp_path):
    stores = FileStores(str(tmp_path / "logs"))
    yield stores
    if stores.logdir is not None:
        stores.logs.close()
        stores.logdir.unlock()


def test_key_bytes_are_kafkas():
    # ShareGroupMetadataKey: int16 11, then the group id as an int16-length string (not flexible)
    key = codec.encode_key(ShareGroupRecord(K.GROUP_EPOCH, "g1", None, GroupEpoch(7)))
    assert key == b"\x00\x0b" + b"\x00\x02g1"
    key = codec.encode_key(ShareGroupRecord(K.CURRENT_ASSIGNMENT, "g", "m", None))
    assert key == b"\x00\x0e" + b"\x00\x01g" + b"\x00\x01m"
    # ShareGroupMetadataValue v0 as Kafka 4.2.2's schema has it: int16 0, int32 epoch, int64 MetadataHash
    # (not tagged: Kafka's kafka-dump-log could not read a value without it), no tagged fields
    assert codec.encode_value(ShareGroupRecord(K.GROUP_EPOCH, "g", None, GroupEpoch(7))) == bytes.fromhex(
        "0000" + "00000007" + "0000000000000000" + "00"
    )


def test_a_group_epoch_value_trafka_wrote_before_is_still_read():
    # the 7-byte layout of earlier trafka versions: epoch, no MetadataHash, no tagged fields
    key = codec.encode_key(ShareGroupRecord(K.GROUP_EPOCH, "g", None, GroupEpoch(7)))
    assert codec.decode(key, bytes.fromhex("0000" + "00000007" + "00")) == ShareGroupRecord(
        K.GROUP_EPOCH, "g", None, GroupEpoch(7)
    )


def test_current_assignment_value_bytes_are_kafkas():
    tid = uuid.UUID(int=1)
    value = codec.encode_value(
        ShareGroupRecord(K.CURRENT_ASSIGNMENT, "g", "m", ShareCurrentAssignment(3, 2, 2, ((tid, (0, 5)),)))
    )
    expected = (
        b"\x00\x00"  # value version 0
        + (3).to_bytes(4, "big")
        + (2).to_bytes(4, "big")
        + b"\x02"  # MemberState STABLE
        + b"\x02"  # compact array of 1
        + tid.bytes
        + b"\x03"
        + (0).to_bytes(4, "big")
        + (5).to_bytes(4, "big")
        + b"\x00"  # the struct's tagged fields
        + b"\x00"  # the value's tagged fields
    )
    assert value == expected


uuids = st.uuids()
names = st.text(max_size=8)
partitions = st.lists(st.integers(0, 2**31 - 1), max_size=4).map(tuple)
topic_partitions = st.lists(st.tuples(uuids, partitions), max_size=3).map(tuple)
values = st.one_of(
    st.builds(GroupEpoch, st.integers(0, 2**31 - 1)),
    st.builds(TargetAssignmentEpoch, st.integers(0, 2**31 - 1)),
    st.builds(ShareMemberMetadata, st.none() | names, names, names, st.lists(names, max_size=3).map(tuple)),
    st.builds(TargetAssignmentMember, topic_partitions),
    st.builds(
        ShareCurrentAssignment, st.integers(0, 99), st.integers(0, 99), st.sampled_from([0, 1, 2]), topic_partitions
    ),
    st.builds(
        StatePartitionMetadata,
        st.lists(st.tuples(uuids, names, partitions), max_size=2).map(tuple),
        st.lists(st.tuples(uuids, names, partitions), max_size=2).map(tuple),
        st.lists(st.tuples(uuids, names), max_size=2).map(tuple),
    ),
)
KIND_OF = {
    GroupEpoch: K.GROUP_EPOCH,
    TargetAssignmentEpoch: K.TARGET_ASSIGNMENT_EPOCH,
    ShareMemberMetadata: K.MEMBER_METADATA,
    TargetAssignmentMember: K.TARGET_ASSIGNMENT_MEMBER,
    ShareCurrentAssignment: K.CURRENT_ASSIGNMENT,
    StatePartitionMetadata: K.STATE_PARTITION_METADATA,
}


@given(value=values, group=names, member=names)
def test_every_record_round_trips(value, group, member):
    kind = KIND_OF[type(value)]
    record = ShareGroupRecord(kind, group, member if kind in (10, 13, 14) else None, value)
    assert codec.decode(codec.encode_key(record), codec.encode_value(record)) == record
    tombstone = ShareGroupRecord(kind, group, record.member_id, None)
    assert codec.decode(codec.encode_key(tombstone), None) == tombstone


def test_records_survive_a_restart_beside_consumer_group_records_and_tombstones_delete(stores):
    store = stores.open()
    consumer = ConsumerGroupRecord(RecordKind.GROUP_EPOCH, "c", None, GroupEpoch(9))
    store.store_consumer_group_records([consumer])
    store.store_share_group_records(RECORDS)
    newer = ShareGroupRecord(K.GROUP_EPOCH, "g", None, GroupEpoch(4))
    gone = ShareGroupRecord(K.TARGET_ASSIGNMENT_MEMBER, "g", "m1", None)
    store.store_share_group_records([newer, gone])
    store = stores.open()
    replayed = {r.key: r for r in store.share_group_records()}
    assert replayed[newer.key] == newer
    assert gone.key not in replayed
    assert len(replayed) == len(RECORDS) - 1
    assert store.consumer_group_records() == [consumer]
    memory = MemoryOffsetStore()
    memory.store_share_group_records([*RECORDS, newer, gone])
    assert {r.key: r for r in memory.share_group_records()} == replayed


def test_the_cleaner_keeps_the_live_share_group_records_and_startup_rewrites_nothing(stores):
    store = stores.open()
    store.store_share_group_records(RECORDS)
    for epoch in range(CHURN):
        store.store_share_group_records([ShareGroupRecord(K.GROUP_EPOCH, "g", None, GroupEpoch(epoch))])
    written = record_count(stores.log.log)
    store = stores.open()  # replay reads the log as it is
    assert (stores.log.log.log_start_offset, record_count(stores.log.log)) == (0, written)
    live = {r.key: r for r in store.share_group_records()}
    assert live[(K.GROUP_EPOCH, "g", None)].value == GroupEpoch(CHURN - 1)
    assert len(live) == len(RECORDS)
    clean(stores.log.log)
    assert record_count(stores.log.log) == len(RECORDS)  # the last value of each key
    store = stores.open()
    assert {r.key: r for r in store.share_group_records()} == live


def test_the_metadata_hash_beside_the_group_epoch_is_written_and_read_as_kafka_lays_it_out():
    # Kafka 4.2's ShareGroupMetadataValue v0: epoch 7, MetadataHash int64 (not tagged), no tagged fields
    value = b"\x00\x00" + b"\x00\x00\x00\x07" + (-42).to_bytes(8, "big", signed=True) + b"\x00"
    key = codec.encode_key(RECORDS[1])
    record = ShareGroupRecord(K.GROUP_EPOCH, "g", None, GroupEpoch(7, -42))
    assert codec.decode(key, value) == record
    assert codec.encode_value(record) == value
    older = b"\x00\x00" + b"\x00\x00\x00\x07" + b"\x00"  # what trafka wrote before it kept the hash
    assert codec.decode(key, older) == ShareGroupRecord(K.GROUP_EPOCH, "g", None, GroupEpoch(7))
