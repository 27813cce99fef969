"""KIP-1101: consumer, share and streams groups write Kafka's metadata hash beside their group epoch
(tests/kafka/test_metadata_hash.py proves the hash is Kafka's), and a group loaded with a hash other
than its topics' gets a new epoch, as Kafka's next heartbeat gives it. A streams group's epoch record
also carries the topology epoch last configured ready (Kafka's ValidatedTopologyEpoch)."""

from __future__ import annotations

import uuid

import xxhash

from tests.unit.domain.groups.consumer_harness import Client, FakeTopics, Harness
from trafka.domain.groups.metadata_hash import MetadataHasher, group_hash, topic_hash
from trafka.domain.groups.modern.records import GroupEpoch, RecordKind
from trafka.domain.groups.share import ShareGroupCoordinator, ShareGroupSettings, ShareHeartbeat
from trafka.domain.groups.share.records import ShareRecordKind
from trafka.domain.groups.streams import EMPTY, StreamsGroupCoordinator, StreamsGroupSettings, StreamsHeartbeat
from trafka.domain.groups.streams.records import StreamsRecordKind
from trafka.domain.topics import Topic

from .test_streams_group_state_machine import WORD_COUNT

H = xxhash.xxh3_64_intdigest


def _kafka_hash(*topics: Topic) -> int:
    return group_hash(H, {t.name: topic_hash(H, t.name, t.topic_id, t.partition_count) for t in topics})


def _epoch_records(records, kind):
    return [r.value for r in records if r.kind is kind and r.value is not None]


def test_a_consumer_group_writes_its_topics_hash_and_a_grown_topic_moves_it():
    harness = Harness(hasher=MetadataHasher(H), fake_topics=FakeTopics(t=6, u=2))
    client = Client("m1", topics=("t", "u"))
    harness.heartbeat(client)
    t, u = harness.topics.get("t"), harness.topics.get("u")
    assert t is not None and u is not None
    first = _kafka_hash(t, u)
    assert first != 0
    assert _epoch_records(harness.coordinator.take_records(), RecordKind.GROUP_EPOCH) == [GroupEpoch(1, first)]
    harness.topics.grow("u", 4)
    harness.heartbeat(client)
    grown = harness.topics.get("u")
    assert grown is not None
    assert _epoch_records(harness.coordinator.take_records(), RecordKind.GROUP_EPOCH) == [
        GroupEpoch(2, _kafka_hash(t, grown))
    ]


def test_a_consumer_group_without_existing_topics_has_hash_zero():
    harness = Harness(hasher=MetadataHasher(H), fake_topics=FakeTopics(t=1))
    harness.heartbeat(Client("m1", topics=("missing",)))
    assert _epoch_records(harness.coordinator.take_records(), RecordKind.GROUP_EPOCH) == [GroupEpoch(1, 0)]


def test_a_consumer_group_loaded_with_another_hash_gets_a_new_epoch_and_with_its_own_none():
    harness = Harness(hasher=MetadataHasher(H))
    client = Client("m1")
    harness.heartbeat(client)
    records = harness.coordinator.take_records()
    again = Harness(hasher=MetadataHasher(H), fake_topics=harness.topics)
    again.coordinator.load(records, 0)
    assert again.coordinator.take_records() == []  # its own hash: nothing to write
    stale = [
        r if r.kind is not RecordKind.GROUP_EPOCH else type(r)(r.kind, r.group_id, r.member_id, GroupEpoch(1))
        for r in records
    ]  # what trafka wrote before it kept the hash
    older = Harness(hasher=MetadataHasher(H), fake_topics=harness.topics)
    older.coordinator.load(stale, 0)
    assert _epoch_records(older.coordinator.take_records(), RecordKind.GROUP_EPOCH) == [
        GroupEpoch(2, harness.group.metadata_hash)
    ]


def test_a_share_group_writes_its_topics_hash():
    topics = FakeTopics(t=3)
    share = ShareGroupCoordinator(ShareGroupSettings(), topics, lambda g: False, MetadataHasher(H))
    share.heartbeat(ShareHeartbeat("g", "a", 0, subscribed_topic_names=("t",)), 0)
    t = topics.get("t")
    assert t is not None
    assert _epoch_records(share.take_records(), ShareRecordKind.GROUP_EPOCH) == [GroupEpoch(1, _kafka_hash(t))]


class _Topics:
    """Topics by name with ids that change when a topic is created again."""

    def __init__(self) -> None:
        self.topics = {"lines": Topic("lines", uuid.uuid4(), 3)}

    def get(self, name: str) -> Topic | None:
        return self.topics.get(name)

    def create(self, infos) -> None:
        for info in infos:
            self.topics.setdefault(info.name, Topic(info.name, uuid.uuid4(), info.partitions or 3))


def _streams_join(streams: StreamsGroupCoordinator, now: int = 0):
    request = StreamsHeartbeat(
        "app", "m", 0, rebalance_timeout_ms=30_000, topology=WORD_COUNT, owned=EMPTY, process_id="p"
    )
    return streams.heartbeat(request, now)


def test_a_streams_group_hashes_its_required_topics_and_a_topic_created_again_is_a_new_epoch():
    topics = _Topics()
    streams = StreamsGroupCoordinator(StreamsGroupSettings(), topics, hasher=MetadataHasher(H))
    answer = _streams_join(streams)
    group = streams.groups["app"]
    assert group.metadata_hash == _kafka_hash(topics.topics["lines"])  # the internal topics do not exist yet
    records = streams.take_records()
    assert [v.metadata_hash for v in _epoch_records(records, StreamsRecordKind.METADATA)] == [group.metadata_hash]
    epoch = group.group_epoch
    topics.topics["lines"] = Topic("lines", uuid.uuid4(), 3)  # deleted and created again: same partitions
    streams.heartbeat(StreamsHeartbeat("app", "m", answer.member_epoch, owned=EMPTY), 1)
    assert group.group_epoch == epoch + 1
    assert group.metadata_hash == _kafka_hash(topics.topics["lines"])


def test_a_streams_group_records_its_validated_topology_epoch_once_its_internal_topics_exist():
    topics = _Topics()
    streams = StreamsGroupCoordinator(StreamsGroupSettings(), topics, hasher=MetadataHasher(H))
    answer = _streams_join(streams)
    assert answer.to_create  # the repartition and changelog topics are missing: not ready
    first = _epoch_records(streams.take_records(), StreamsRecordKind.METADATA)
    assert [v.validated_topology_epoch for v in first] == [-1]
    topics.create(answer.to_create)
    streams.heartbeat(StreamsHeartbeat("app", "m", answer.member_epoch, owned=EMPTY), 1)
    group = streams.groups["app"]
    (after,) = _epoch_records(streams.take_records(), StreamsRecordKind.METADATA)
    assert after.validated_topology_epoch == WORD_COUNT.epoch == group.validated_topology_epoch
    assert after.epoch == first[0].epoch + 1
