"""Share groups as Kafka 4.2 has them where librdkafka's suite found trafka differing (issue 44):
the group config `share.record.lock.duration.ms` within the broker's min and max (0173), ShareFetch
with MaxBytes 0 (0180), the first fetch of a two-partition group (0179), on a memory-store broker."""

from __future__ import annotations

import attrs
import pytest

from tests.batches import make_batch
from tests.unit.adapters.kafka.test_share_group_rooms import CLIENT, fetch, heartbeat, produce
from trafka.adapters.kafka.apis import delete_topics, share_fetch
from trafka.app.config.kafka_keys import KafkaConfigError, map_kafka_configs
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import DeleteTopicsRequest, ShareFetchRequest

SET = 0
LOCK = "share.record.lock.duration.ms"


def broker(**groups):
    settings = load_settings(overrides={"storage": {"kind": "memory"}, "groups": groups})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("t", 1, 1)
    ctx.services.share.groups.configs["g"] = {"share.auto.offset.reset": "earliest"}
    return ctx


def test_a_groups_record_lock_duration_sets_its_locks_and_the_answers_timeout():
    ctx = broker()
    ctx.services.share.groups.alter_configs("g", {LOCK: (SET, "20000")}, False)
    heartbeat(ctx)
    produce(ctx, 2)
    now = ctx.services.share.clock_ms()
    answer = fetch(ctx)
    assert answer.acquisition_lock_timeout_ms == 20000
    deadline = ctx.services.share.groups.partitions[("g", TopicPartition("t", 0))].state_of(0).deadline
    assert now + 20000 <= deadline <= ctx.services.share.clock_ms() + 20000
    assert (LOCK, "20000", False) in ctx.services.share.groups.describe_configs("g")
    assert (LOCK, "30000", True) in ctx.services.share.groups.describe_configs("other")  # the broker's default


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("14999", f"{LOCK} must be greater than or equal to group.share.min.record.lock.duration.ms"),
        ("60001", f"{LOCK} must be less than or equal to group.share.max.record.lock.duration.ms"),
        ("soon", f"Invalid value soon for configuration {LOCK}: Not a number of type INT"),
    ],
)
def test_a_lock_duration_outside_the_brokers_bounds_is_refused_as_kafka_refuses_it(value, message):
    ctx = broker()
    with pytest.raises(KafkaError) as refused:
        ctx.services.share.groups.alter_configs("g", {LOCK: (SET, value)}, False)
    assert (refused.value.code, refused.value.message) == (ErrorCode.INVALID_CONFIG, message)


def test_librdkafkas_ci_lowers_the_minimum_to_have_three_second_locks():
    settings = map_kafka_configs({"group.share.min.record.lock.duration.ms": "1000"})
    assert settings.overrides["groups"]["share_min_record_lock_duration_ms"] == 1000
    ctx = broker(share_min_record_lock_duration_ms=1000)
    ctx.services.share.groups.alter_configs("g", {LOCK: (SET, "3000")}, False)
    heartbeat(ctx)
    produce(ctx, 1)
    assert fetch(ctx).acquisition_lock_timeout_ms == 3000
    with pytest.raises(KafkaConfigError, match="group.share.min.record.lock.duration.ms"):
        map_kafka_configs({"group.share.min.record.lock.duration.ms": "999"})  # Kafka's range: 1000-30000


def fetch_both(ctx, epoch=0, max_bytes=1 << 20, max_wait_ms=0):
    """A ShareFetch of both partitions of `t2`, as librdkafka sends it."""
    topic_id = ctx.services.catalog.get("t2").topic_id
    T = ShareFetchRequest.FetchTopic
    request = ShareFetchRequest[1](
        group_id="g",
        member_id="m1",
        share_session_epoch=epoch,
        max_wait_ms=max_wait_ms,
        min_bytes=1,
        max_bytes=max_bytes,
        max_records=500,
        batch_size=500,
        topics=[T(topic_id=topic_id, partitions=[T.FetchPartition(partition_index=p) for p in (0, 1)])],
        forgotten_topics_data=[],
    )
    return share_fetch.API.handle(ctx, request, 1, CLIENT)


def records_per_partition(answer) -> dict[int, int]:
    return {
        p.partition_index: sum(r.last_offset - r.first_offset + 1 for r in p.acquired_records)
        for t in answer.responses
        for p in t.partitions
        if p.acquired_records
    }


def two_partitions(records: int):
    ctx = broker()
    ctx.services.catalog.create("t2", 2, 1)
    heartbeat(ctx, topics=("t2",))
    for partition in (0, 1):
        for i in range(records):
            batch = make_batch([(1, None, b"v%d" % i)])
            assert ctx.services.replicas.produce(TopicPartition("t2", partition), batch, 1).error is ErrorCode.NONE
    return ctx


def test_share_fetch_max_bytes_0_returns_no_records_as_kafka():
    """librdkafka's 0180: Kafka's processShareFetch answers a ShareFetch with MaxBytes 0 at once, empty."""
    ctx = two_partitions(5)
    answer = fetch_both(ctx, max_bytes=0, max_wait_ms=500)
    assert answer.error_code == 0 and records_per_partition(answer) == {}
    assert records_per_partition(fetch_both(ctx, epoch=1)) == {0: 5}  # nothing was acquired by it


def test_the_first_fetch_of_a_new_group_carries_the_first_initialized_partition_then_both():
    """librdkafka's 0179 against Kafka 4.2: share-partitions a fetch creates are initialized apart, and
    the DelayedShareFetch completes with the first one that has records; once initialized, one fetch
    reads every acquirable partition (DelayedShareFetch.acquirablePartitions)."""
    ctx = two_partitions(50)
    assert records_per_partition(fetch_both(ctx)) == {0: 50}
    assert records_per_partition(fetch_both(ctx, epoch=1)) == {1: 50}
    for partition in (0, 1):
        batch = make_batch([(1, None, b"more")])
        assert ctx.services.replicas.produce(TopicPartition("t2", partition), batch, 1).error is ErrorCode.NONE
    assert records_per_partition(fetch_both(ctx, epoch=2)) == {0: 1, 1: 1}


def recreate(ctx, through_the_api: bool) -> None:
    """Delete topic `t` and create it again under the same name (a new topic id)."""
    if through_the_api:
        answer = delete_topics.API.handle(ctx, DeleteTopicsRequest[4](topic_names=["t"], timeout_ms=1000), 4, CLIENT)
        assert answer.responses[0].error_code == 0
    else:  # a path that does not tell the share groups: the topic id check finds out
        ctx.services.catalog.delete("t")
    ctx.services.catalog.create("t", 1, 1)


@pytest.mark.parametrize("through_the_api", [True, False])
def test_a_recreated_topic_starts_with_fresh_share_partition_state(through_the_api):
    """librdkafka's 0184: Kafka keys share-partition state by topic id and deletes it with its topic.
    Records of the new topic come at once with delivery count 1, not after the old lock expires."""
    ctx = broker()
    heartbeat(ctx)
    produce(ctx, 3)
    assert [
        (a.first_offset, a.last_offset, a.delivery_count)
        for a in fetch(ctx).responses[0].partitions[0].acquired_records
    ] == [(0, 2, 1)]
    old_id = ctx.services.catalog.get("t").topic_id
    recreate(ctx, through_the_api)
    assert ctx.services.catalog.get("t").topic_id != old_id
    produce(ctx, 2)
    new_id = ctx.services.catalog.get("t").topic_id
    (got,) = [t.partitions[0].acquired_records for t in fetch(ctx, epoch=1).responses if t.topic_id == new_id]
    assert [(a.first_offset, a.last_offset, a.delivery_count) for a in got] == [(0, 1, 1)]
    tp = TopicPartition("t", 0)
    assert ctx.services.share.groups.topic_ids[("g", tp)] == ctx.services.catalog.get("t").topic_id


def test_deleting_a_topic_deletes_its_share_state_from_the_store():
    ctx = broker()
    heartbeat(ctx)
    produce(ctx, 1)
    fetch(ctx)
    ctx.services.share.settled()
    old_id = ctx.services.catalog.get("t").topic_id
    written = []
    ctx.services.share.writes = attrs.evolve(
        ctx.services.share.writes, state=lambda groups: written.append(groups.take_dirty())
    )
    answer = delete_topics.API.handle(ctx, DeleteTopicsRequest[4](topic_names=["t"], timeout_ms=1000), 4, CLIENT)
    assert answer.responses[0].error_code == 0
    assert written == [([], [("g", old_id, 0)])]
    assert ("g", TopicPartition("t", 0)) not in ctx.services.share.groups.partitions


def test_a_heartbeat_after_the_topic_is_created_again_sends_the_assignment_with_the_new_id():
    """librdkafka's 0184: a producer creates the deleted topic again with as many partitions. Kafka keys
    the assignment by topic id, so the member's next heartbeat carries it again with the new id."""
    ctx = broker()
    joined = heartbeat(ctx)
    assert joined.assignment.topic_partitions[0].topic_id == ctx.services.catalog.get("t").topic_id
    recreate(ctx, through_the_api=True)
    again = heartbeat(ctx, epoch=joined.member_epoch)
    assert again.error_code == 0 and again.member_epoch > joined.member_epoch
    assert again.assignment is not None
    assert [(t.topic_id, t.partitions) for t in again.assignment.topic_partitions] == [
        (ctx.services.catalog.get("t").topic_id, [0])
    ]
    assert heartbeat(ctx, epoch=again.member_epoch).assignment is None  # sent once


def session_fetch(ctx, epoch, add=None, forget=None):
    """A ShareFetch in the open session of m1, adding and forgetting partition 0 of the given topic ids."""
    T = ShareFetchRequest.FetchTopic
    F = ShareFetchRequest.ForgottenTopic
    request = ShareFetchRequest[1](
        group_id="g",
        member_id="m1",
        share_session_epoch=epoch,
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=1 << 20,
        max_records=10,
        batch_size=10,
        topics=[T(topic_id=add, partitions=[T.FetchPartition(partition_index=0)])] if add else [],
        forgotten_topics_data=[F(topic_id=forget, partitions=[0])] if forget else [],
    )
    answer = share_fetch.API.handle(ctx, request, 1, CLIENT)
    return {
        (t.topic_id, p.partition_index): (
            p.error_code,
            [(a.first_offset, a.last_offset, a.delivery_count) for a in p.acquired_records],
        )
        for t in answer.responses
        for p in t.partitions
    }


def test_the_share_session_keys_partitions_by_topic_id():
    """librdkafka's 0184: the session holds the partition under the id the client named. After the topic
    is created again, the old id's entry answers UNKNOWN_TOPIC_ID (the new topic's records are not handed
    to it), the new topic's records come once the client adds its id, and the old id can be forgotten."""
    ctx = broker()
    heartbeat(ctx)
    produce(ctx, 3)
    old_id = ctx.services.catalog.get("t").topic_id
    assert session_fetch(ctx, 0, add=old_id) == {(old_id, 0): (0, [(0, 2, 1)])}
    recreate(ctx, through_the_api=True)
    new_id = ctx.services.catalog.get("t").topic_id
    produce(ctx, 2)
    assert session_fetch(ctx, 1) == {(old_id, 0): (ErrorCode.UNKNOWN_TOPIC_ID, [])}
    assert session_fetch(ctx, 2, add=new_id, forget=old_id) == {(new_id, 0): (0, [(0, 1, 1)])}
    assert session_fetch(ctx, 3) == {}
