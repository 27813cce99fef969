"""KIP-1071 streams group records in `__consumer_offsets`: Kafka's key versions 17 and 19-23 with their
flexible values, replayed after a restart (last value per key, tombstones delete); the memory store
keeps the same contract."""

from __future__ import annotations

import pytest

from tests.contract.test_group_metadata_store import FileStores
from trafka.adapters.filesystem import streams_group_records as codec
from trafka.adapters.memory.offset_store import MemoryOffsetStore
from trafka.domain.groups.streams import Subtopology, TasksTuple, TopicInfo, Topology
from trafka.domain.groups.streams.records import (
    AssignmentEpoch,
    CurrentAssignment,
    GroupEpoch,
    MemberMetadata,
    StreamsGroupRecord,
    StreamsRecordKind,
    TargetTasks,
)

K = StreamsRecordKind
TOPOLOGY = Topology(
    3,
    (
        Subtopology("0", source_topics=("clicks",), repartition_sink_topics=("app-rekeyed-repartition",)),
        Subtopology(
            "1",
            source_topics=("users",),
            state_changelog_topics=(TopicInfo("app-store-changelog", 0, 0, (("cleanup.policy", "compact"),)),),
            repartition_source_topics=(TopicInfo("app-rekeyed-repartition", 4, 1),),
            copartition_groups=(frozenset({"users", "app-rekeyed-repartition"}),),
        ),
    ),
)
RECORDS = [
    StreamsGroupRecord(K.METADATA, "g", None, GroupEpoch(3)),
    StreamsGroupRecord(K.TOPOLOGY, "g", None, TOPOLOGY),
    StreamsGroupRecord(
        K.MEMBER_METADATA,
        "g",
        "m1",
        MemberMetadata(None, "r1", "client", "/10.0.0.1", 30_000, 3, "p1", ("localhost", 8080), (("zone", "a"),)),
    ),
    StreamsGroupRecord(K.TARGET_ASSIGNMENT_EPOCH, "g", None, AssignmentEpoch(3)),
    StreamsGroupRecord(
        K.TARGET_ASSIGNMENT_MEMBER, "g", "m1", TargetTasks(TasksTuple({"0": frozenset({0, 1})}, {"1": frozenset({2})}))
    ),
    StreamsGroupRecord(
        K.CURRENT_ASSIGNMENT,
        "g",
        "m1",
        CurrentAssignment(3, 2, 0, TasksTuple({"0": frozenset({0})}), TasksTuple({"1": frozenset({1})})),
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
    assert codec.decode(key, None) == StreamsGroupRecord(record.kind, record.group_id, record.member_id, None)


def test_records_survive_a_restart_and_tombstones_delete(stores):
    store = stores.open()
    store.store_streams_group_records(RECORDS)
    newer = StreamsGroupRecord(K.METADATA, "g", None, GroupEpoch(4))
    gone = StreamsGroupRecord(K.TARGET_ASSIGNMENT_MEMBER, "g", "m1", None)
    store.store_streams_group_records([newer, gone])
    store = stores.open()
    replayed = {r.key: r for r in store.streams_group_records()}
    assert replayed[newer.key] == newer
    assert gone.key not in replayed
    assert len(replayed) == 5
    memory = MemoryOffsetStore()
    memory.store_streams_group_records([*RECORDS, newer, gone])
    assert {r.key: r for r in memory.streams_group_records()} == replayed


def test_the_group_epoch_is_written_with_its_hash_and_validated_topology_epoch_as_kafka_lays_them_out():
    """StreamsGroupMetadataValue v0: epoch, MetadataHash (int64), then tagged ValidatedTopologyEpoch
    (tag 0, left out at its default -1) and LastAssignmentConfigs (tag 1)."""
    record = StreamsGroupRecord(K.METADATA, "g", None, GroupEpoch(5, (("num.standby.replicas", "0"),), -42, 3))
    value = codec.encode_value(record)
    assert value is not None
    config = b"\x02" + b"\x15num.standby.replicas" + b"\x020" + b"\x00"  # one entry: key, value, no tags
    head = b"\x00\x00" + (5).to_bytes(4, "big") + (-42).to_bytes(8, "big", signed=True)
    tags = b"\x02" + b"\x00\x04" + (3).to_bytes(4, "big") + b"\x01" + bytes([len(config)]) + config
    assert value == head + tags
    assert codec.decode(codec.encode_key(record), value) == record
    unvalidated = StreamsGroupRecord(K.METADATA, "g", None, GroupEpoch(5, (), 0, -1))
    encoded = codec.encode_value(unvalidated)
    assert encoded is not None and codec.decode(codec.encode_key(unvalidated), encoded) == unvalidated
