"""Share groups as Kafka 4.2 has them where librdkafka's own suite found trafka differing (issue 44),
driven by confluent-kafka's `ShareConsumer` against the real server: read_committed (0177), the
simple assignor (0172), `share.record.lock.duration.ms` (0173), a recreated topic (0184) and a
ShareFetch with MaxBytes 0 (0180)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import NewTopic

from tests.kafka_python_messages import (
    ShareFetchRequest,
    ShareFetchResponse,
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
)

from .broker import BrokerProcess
from .clients import client_log_fixture, confluent_admin, create_topic, unique
from .groups_helpers import TIMEOUT, wait_until
from .test_share_groups import SHARE_ENV, describe, earliest, members
from .wire import WireClient

logger = client_log_fixture("trafka.tests.share42")


@pytest.fixture(scope="module")
def bootstrap() -> Iterator[str]:
    env = {**SHARE_ENV, "KAFKA_GROUP_SHARE_MIN_RECORD_LOCK_DURATION_MS": "1000"}  # as librdkafka's CI
    process = BrokerProcess(["--memory"], env=env).start()
    try:
        yield process.bootstrap
    finally:
        assert process.stop() == 0, process.log()


def test_read_committed_delivers_every_committed_transaction_of_a_producer_that_aborted_one(bootstrap, logger):
    """0177: commit 5 / abort 5 / commit 3 / abort 2 / commit 4 by one transactional producer."""
    topic, group = unique("txn"), unique("sg")
    create_topic(bootstrap, topic, 1, logger=logger)
    earliest(bootstrap, group, logger, share_isolation_level="read_committed")
    producer = Producer({"bootstrap.servers": bootstrap, "logger": logger, "transactional.id": unique("tx")})
    producer.init_transactions(TIMEOUT)
    committed = set()
    for n, (count, commit) in enumerate([(5, True), (5, False), (3, True), (2, False), (4, True)]):
        producer.begin_transaction()
        for i in range(count):
            producer.produce(topic, value=f"{n}-{i}".encode(), partition=0)
            if commit:
                committed.add(f"{n}-{i}")
        assert producer.flush(TIMEOUT) == 0  # written before the end: an abort would drop unsent records
        if commit:
            producer.commit_transaction(TIMEOUT)
        else:
            producer.abort_transaction(TIMEOUT)
    with members(bootstrap, logger, topic, group, 1) as (m,):
        wait_until(
            lambda: len(m.got) >= len(committed),
            "every committed record is delivered",
            timeout=3 * TIMEOUT,
            step=lambda: m.poll(ack=None),  # implicit acknowledgement
            state=lambda: sorted(v.decode() for _, v, _ in m.got),
        )
        for _ in range(5):
            m.poll(ack=None)
    assert sorted(v.decode() for _, v, _ in m.got) == sorted(committed)


def test_two_members_on_four_partitions_get_two_partitions_each(bootstrap, logger):
    """0172: Kafka's simple assignor gives 2 members on 4 partitions 2 partitions each, none shared."""
    topic, group = unique("four"), unique("sg")
    create_topic(bootstrap, topic, 4, logger=logger)
    earliest(bootstrap, group, logger)
    with members(bootstrap, logger, topic, group, 2) as (a, b):

        def step() -> None:
            a.poll(ack=None)  # implicit acknowledgement
            b.poll(ack=None)

        # Produced once both members hold their two partitions and every ShareFetch sent before is
        # answered: the member that joins first holds all four until the second one's heartbeat, and a
        # ShareFetch it sent then waits (up to librdkafka's fetch.wait.max.ms, 500 ms) for records of
        # all four, in Kafka as here (a ShareFetch's partitions are not checked against the assignment).
        wait_until(
            lambda: sorted(assigned(bootstrap, group)) == [2, 2], "two partitions each", timeout=3 * TIMEOUT, step=step
        )
        settled = time.monotonic() + 1.0
        while time.monotonic() < settled:
            step()
        producer = Producer({"bootstrap.servers": bootstrap, "logger": logger, "linger.ms": 0})
        for p in range(4):
            for i in range(10):
                producer.produce(topic, value=f"{p}-{i}".encode(), partition=p)
        assert producer.flush(TIMEOUT) == 0
        wait_until(lambda: len(a.got) + len(b.got) >= 40, "all 40 records are read", timeout=3 * TIMEOUT, step=step)
    partitions_a = {v.decode().split("-")[0] for _, v, _ in a.got}
    partitions_b = {v.decode().split("-")[0] for _, v, _ in b.got}
    assert len(partitions_a) == len(partitions_b) == 2 and not partitions_a & partitions_b


def assigned(bootstrap: str, group: str) -> list[int]:
    """How many partitions each member of the group was last given, as ShareGroupDescribe reports it."""
    return [sum(len(tp.partitions) for tp in m.assignment.topic_partitions) for m in describe(bootstrap, group).members]


def test_a_groups_record_lock_duration_is_accepted_and_its_locks_expire_after_it(bootstrap, logger):
    """0173: `share.record.lock.duration.ms` is a group config (3 s with librdkafka CI's 1 s minimum)."""
    topic, group = unique("lock"), unique("sg")
    create_topic(bootstrap, topic, 1, logger=logger)
    earliest(bootstrap, group, logger, **{"share.record.lock.duration.ms": "3000"})
    producer = Producer({"bootstrap.servers": bootstrap, "logger": logger})
    producer.produce(topic, value=b"x")
    assert producer.flush(TIMEOUT) == 0
    extra = {"share.acknowledgement.mode": "explicit"}
    with members(bootstrap, logger, topic, group, 2, **extra) as (holder, other):
        wait_until(lambda: holder.got, "the first member holds the record", step=lambda: holder.poll(ack=None))
        started = time.monotonic()
        wait_until(lambda: other.got, "the record comes back once its lock expired", step=lambda: other.poll())
        waited = time.monotonic() - started
    assert [d for _, _, d in other.got] == [2]
    assert waited > 1.5


def test_a_recreated_topic_starts_without_the_old_topics_share_state(bootstrap, logger):
    """0184: the old topic's acquisitions and delivery counts do not carry over to the new one."""
    topic, group = unique("again"), unique("sg")
    create_topic(bootstrap, topic, 1, logger=logger)
    earliest(bootstrap, group, logger)
    producer = Producer({"bootstrap.servers": bootstrap, "logger": logger})
    producer.produce(topic, value=b"old")
    assert producer.flush(TIMEOUT) == 0
    extra = {"share.acknowledgement.mode": "explicit"}
    with members(bootstrap, logger, topic, group, 1, **extra) as (m,):
        wait_until(lambda: m.got, "the old record is delivered", step=lambda: m.poll(ack=None))  # held, not acked
    admin = confluent_admin(bootstrap, logger)
    admin.delete_topics([topic])[topic].result(TIMEOUT)
    wait_until(lambda: topic not in admin.list_topics(timeout=TIMEOUT).topics, "the topic is gone")
    admin.create_topics([NewTopic(topic, 1)])[topic].result(TIMEOUT)
    producer.produce(topic, value=b"new")
    assert producer.flush(TIMEOUT) == 0
    with members(bootstrap, logger, topic, group, 1, **extra) as (m,):
        wait_until(lambda: m.got, "the new record is delivered", step=lambda: m.poll(), timeout=2 * TIMEOUT)
    assert [(v, d) for _, v, d in m.got] == [(b"new", 1)]


def test_a_share_fetch_with_max_bytes_0_returns_no_records(bootstrap, logger):
    """0180: Kafka answers MaxBytes 0 at once and without records. The answers carry the group's
    record lock duration."""
    topic, group = unique("zero"), unique("sg")
    create_topic(bootstrap, topic, 1, logger=logger)
    earliest(bootstrap, group, logger, **{"share.record.lock.duration.ms": "3000"})
    producer = Producer({"bootstrap.servers": bootstrap, "logger": logger})
    producer.produce(topic, value=b"x")
    assert producer.flush(TIMEOUT) == 0
    with WireClient(bootstrap) as wire:
        joined = wire.request(
            ShareGroupHeartbeatRequest[1](
                group_id=group, member_id="m-zero", member_epoch=0, subscribed_topic_names=[topic]
            ),
            ShareGroupHeartbeatResponse,
            1,
        )
        assert joined.error_code == 0
        (assigned,) = joined.assignment.topic_partitions
        T = ShareFetchRequest.FetchTopic

        def share_fetch(epoch: int, max_bytes: int):
            return wire.request(
                ShareFetchRequest[1](
                    group_id=group,
                    member_id="m-zero",
                    share_session_epoch=epoch,
                    max_wait_ms=200,
                    min_bytes=1,
                    max_bytes=max_bytes,
                    max_records=500,
                    batch_size=500,
                    topics=[T(topic_id=assigned.topic_id, partitions=[T.FetchPartition(partition_index=0)])],
                    forgotten_topics_data=[],
                ),
                ShareFetchResponse,
                1,
            )

        empty = share_fetch(0, 0)
        assert empty.error_code == 0
        assert [p.acquired_records for t in empty.responses for p in t.partitions] in ([], [[]])
        full = share_fetch(1, 1 << 20)
        assert [len(p.acquired_records) for t in full.responses for p in t.partitions] == [1]
        assert empty.acquisition_lock_timeout_ms == full.acquisition_lock_timeout_ms == 3000  # the group's (0173)
