"""KIP-848 consumer group records in `__consumer_offsets`: Kafka's key versions 3, 5, 6, 7 and 8 with
their flexible values, replayed after a restart (last value per key, tombstones delete), kept by the
log cleaner's compaction; the memory store keeps the same contract."""

from __future__ import annotations

import uuid

import pytest

from tests.contract.test_group_metadata_store import CHURN, FileStores, clean, record_count
from trafka.adapters.filesystem import consumer_group_records as codec
from trafka.adapters.memory.offset_store import MemoryOffsetStore
from trafka.domain.groups.modern.records import (
    ConsumerGroupRecord,
    CurrentAssignment,
    GroupEpoch,
    MemberMetadata,
    RecordKind,
    TargetAssignmentEpoch,
    TargetAssignmentMember,
)

T = uuid.UUID(int=42)
RECORDS = [
    ConsumerGroupRecord(RecordKind.GROUP_EPOCH, "g", None, GroupEpoch(3)),
    ConsumerGroupRecord(
        RecordKind.MEMBER_METADATA,
        "g",
        "m1",
        MemberMetadata("i1", None, "client", "/10.0.0.1", ("t", "u"), "t.*", 30_000, "range"),
    ),
    ConsumerGroupRecord(RecordKind.TARGET_ASSIGNMENT_EPOCH, "g", None, TargetAssignmentEpoch(3)),
    ConsumerGroupRecord(RecordKind.TARGET_ASSIGNMENT_MEMBER, "g", "m1", TargetAssignmentMember(((T, (0, 1, 2)),))),
    ConsumerGroupRecord(
        RecordKind.CURRENT_ASSIGNMENT, "g", "m1", CurrentAssignment(3, 2, 0, ((T, (0, 1)),), ((T, (5,)),))
    ),
]


@pytest.fixture
def stores(tmp_path):
    stores = FileStores(str(tmp_path / "logs"))
    yield stores
    if stores.logdir is not None:
        stores.logs.close()
        stores.logdir.unlock()


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.kind.name)
def test_each_record_round_trips_through_kafkas_bytes(record):
    key, value = codec.encode_key(record), codec.encode_value(record)
    assert int.from_bytes(key[:2], "big") == int(record.kind)  # the key version is the record type
    assert value is not None and value[:2] == b"\x00\x00"  # value version 0
    assert codec.decode(key, value) == record
    tombstone = ConsumerGroupRecord(record.kind, record.group_id, record.member_id, None)
    assert codec.decode(key, None) == tombstone


def test_the_group_metadata_key_is_kafkas_bytes():
    key = codec.encode_key(RECORDS[0])
    assert key == b"\x00\x03" + b"\x00\x01g"
    assert codec.encode_value(RECORDS[0]) == b"\x00\x00" + b"\x00\x00\x00\x03" + b"\x00"  # epoch, no tags


def test_records_survive_a_restart_and_tombstones_delete(stores):
    store = stores.open()
    store.store_consumer_group_records(RECORDS)
    newer = ConsumerGroupRecord(RecordKind.GROUP_EPOCH, "g", None, GroupEpoch(4))
    gone = ConsumerGroupRecord(RecordKind.TARGET_ASSIGNMENT_MEMBER, "g", "m1", None)
    store.store_consumer_group_records([newer, gone])
    store = stores.open()
    replayed = {r.key: r for r in store.consumer_group_records()}
    assert replayed[newer.key] == newer
    assert gone.key not in replayed
    assert len(replayed) == 4
    memory = MemoryOffsetStore()
    memory.store_consumer_group_records([*RECORDS, newer, gone])
    assert {r.key: r for r in memory.consumer_group_records()} == replayed


def test_the_cleaner_keeps_the_live_records_and_startup_rewrites_nothing(stores):
    store = stores.open()
    store.store_consumer_group_records(RECORDS)
    for epoch in range(CHURN):
        store.store_consumer_group_records([ConsumerGroupRecord(RecordKind.GROUP_EPOCH, "g", None, GroupEpoch(epoch))])
    written = record_count(stores.log.log)
    store = stores.open()  # replay reads the log as it is
    assert (stores.log.log.log_start_offset, record_count(stores.log.log)) == (0, written)
    live = {r.key: r for r in store.consumer_group_records()}
    assert live[(RecordKind.GROUP_EPOCH, "g", None)].value == GroupEpoch(CHURN - 1)
    assert len(live) == len(RECORDS)
    clean(stores.log.log)
    assert record_count(stores.log.log) == len(RECORDS)  # the last value of each key
    store = stores.open()
    assert {r.key: r for r in store.consumer_group_records()} == live


def test_the_metadata_hash_kafka_tags_onto_the_group_epoch_is_written_and_read():
    # Kafka 4.1+ tags the metadata hash onto ConsumerGroupMetadataValue (tag 0, 8 bytes), and leaves it
    # out when it is 0 (its default)
    value = b"\x00\x00" + b"\x00\x00\x00\x07" + b"\x01" + b"\x00" + b"\x08" + b"\x00" * 7 + b"\x2a"
    key = codec.encode_key(RECORDS[0])
    record = ConsumerGroupRecord(RecordKind.GROUP_EPOCH, "g", None, GroupEpoch(7, 42))
    assert codec.decode(key, value) == record
    assert codec.encode_value(record) == value
    no_hash = ConsumerGroupRecord(RecordKind.GROUP_EPOCH, "g", None, GroupEpoch(7))
    assert codec.encode_value(no_hash) == b"\x00\x00" + b"\x00\x00\x00\x07" + b"\x00"
    assert codec.decode(key, codec.encode_value(no_hash)) == no_hash


def test_a_member_without_a_regex_is_written_and_read_as_kafka_writes_it():
    """Kafka writes SubscribedTopicRegex "" for a member subscribed by names (its member's default), and
    reads "" as no regex: trafka writes the same bytes and reads Kafka's "" as no regex, not a pattern."""
    names_only = MemberMetadata(None, None, "client", "/10.0.0.1", ("t",), None, 30_000, None)
    record = ConsumerGroupRecord(RecordKind.MEMBER_METADATA, "g", "m1", names_only)
    value = codec.encode_value(record)
    regex_at = value.index(b"\x02t") + 2  # after the names (compact array of one: "t")
    assert value[regex_at : regex_at + 1] == b"\x01"  # a compact string of length 0, not null (b"\x00")
    assert codec.decode(codec.encode_key(record), value) == record  # "" read back as no regex
