"""`trafka.Cluster`: several brokers in one process, seen by real clients. Leaders and coordinators are
spread, a broker refuses what it does not lead, and clients fail over when a broker stops or a
leader moves, losing and duplicating nothing."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicCollection, TopicPartition
from confluent_kafka.admin import AdminClient
from kafka import KafkaConsumer
from kafka.protocol.admin import DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse
from kafka.protocol.consumer import ListOffsetsRequest, ListOffsetsResponse
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse

import trafka
from tests.waiting import eventually
from trafka.testing import respond

from .clients import TIMEOUT, client_log_fixture
from .wire import WireClient

client_log = client_log_fixture("trafka.tests.cluster", autouse=True)


@pytest.fixture(autouse=True)
def no_broker_errors(caplog):
    """A failure inside the cluster's layer closes a connection and the client quietly retries: the
    broker's error log is where it shows."""
    yield
    errors = [r for r in caplog.records if r.name.startswith("trafka") and r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]


@pytest.fixture
def cluster():
    with trafka.Cluster(brokers=3, topics={"t": 1, "spread": 6}) as cluster:
        yield cluster


def test_metadata_spreads_leaders_over_the_brokers(cluster):
    assert sorted(cluster.nodes()) == [1, 2, 3] == cluster.live_nodes()
    assert len(cluster.bootstrap_servers.split(",")) == 3
    leaders = {cluster.leader("spread", p) for p in range(6)}
    assert leaders == {1, 2, 3}
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers)
    consumer.topics()  # metadata loaded
    kafka_python_leaders = {p: consumer._client.cluster.leader_for_partition(_tp("spread", p)) for p in range(6)}
    consumer.close()
    assert kafka_python_leaders == {p: cluster.leader("spread", p) for p in range(6)}
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    described = admin.describe_topics(TopicCollection(["spread"]))["spread"].result(TIMEOUT)
    assert {p.id: p.leader.id for p in described.partitions} == kafka_python_leaders
    request = DescribeTopicPartitionsRequest[0](
        topics=[DescribeTopicPartitionsRequest[0].TopicRequest(name="spread")], response_partition_limit=100
    )
    with WireClient(cluster.nodes()[2]) as wire:
        answer = wire.request(request, DescribeTopicPartitionsResponse, 0)
    assert {p.partition_index: p.leader_id for p in answer.topics[0].partitions} == kafka_python_leaders


def _tp(topic, partition):
    from kafka.structs import TopicPartition as KafkaTopicPartition

    return KafkaTopicPartition(topic, partition)


def test_a_broker_refuses_a_partition_it_does_not_lead_and_points_at_the_coordinator(cluster):
    leader = cluster.leader("t", 0)
    other = next(node for node in cluster.live_nodes() if node != leader)
    request = ListOffsetsRequest[6](
        replica_id=-1,
        isolation_level=0,
        topics=[
            ListOffsetsRequest[6].ListOffsetsTopic(
                name="t",
                partitions=[
                    ListOffsetsRequest[6].ListOffsetsTopic.ListOffsetsPartition(
                        partition_index=0, current_leader_epoch=-1, timestamp=-1
                    )
                ],
            )
        ],
    )
    with WireClient(cluster.nodes()[other]) as wire:
        refused = wire.request(request, ListOffsetsResponse, 6)
    with WireClient(cluster.nodes()[leader]) as wire:
        answered = wire.request(request, ListOffsetsResponse, 6)
    assert refused.topics[0].partitions[0].error_code == 6  # NOT_LEADER_OR_FOLLOWER
    assert answered.topics[0].partitions[0].error_code == 0

    coordinator = cluster.coordinator("g")
    with WireClient(cluster.nodes()[other]) as wire:
        found = wire.request(FindCoordinatorRequest[3](key="g", key_type=0), FindCoordinatorResponse, 3)
    assert found.error_code == 0 and found.node_id == coordinator
    assert f"{found.host}:{found.port}" == cluster.nodes()[coordinator]


def test_an_idempotent_producer_acks_every_record_exactly_once_while_its_leader_is_stopped(cluster):
    leader = cluster.leader("t", 0)
    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "enable.idempotence": True,
            "linger.ms": 5,
            "retry.backoff.ms": 20,
            "reconnect.backoff.ms": 20,
            "topic.metadata.refresh.interval.ms": 500,
        }
    )
    acked, failed = [], []

    def on_delivery(err, msg):
        (failed if err else acked).append(err or msg.value())

    count = 400
    stopper = threading.Timer(0.3, cluster.stop_broker, args=(leader,))
    stopper.start()
    for i in range(count):
        producer.produce("t", b"%04d" % i, on_delivery=on_delivery)
        producer.poll(0)
        time.sleep(0.002)
    assert producer.flush(30) == 0
    stopper.join()
    assert failed == []
    values = [r.value for r in cluster.records("t")]
    assert values == [b"%04d" % i for i in range(count)]  # every record once, in order
    assert sorted(acked) == values
    assert cluster.leader("t", 0) != leader and cluster.leader_epoch("t", 0) == 1
    assert leader not in cluster.live_nodes()


def test_a_consumer_follows_a_moved_leader(cluster):
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 0})
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": "follower",
            "auto.offset.reset": "earliest",
            "topic.metadata.refresh.interval.ms": 500,
        }
    )
    consumer.assign([TopicPartition("t", 0)])
    seen = []

    def read(count):
        def polled() -> bool:
            message = consumer.poll(0.2)
            if message is not None and not message.error():
                seen.append(message.value())
            return len(seen) >= count

        if len(seen) < count:
            eventually(polled, TIMEOUT, what=f"{count} records", interval=0, state=lambda: seen)

    for i in range(5):
        producer.produce("t", b"before-%d" % i)
    assert producer.flush(TIMEOUT) == 0
    read(5)
    before = cluster.leader("t", 0)
    to = next(node for node in cluster.live_nodes() if node != before)
    assert cluster.move_leader("t", 0, to) == 1
    for i in range(5):
        producer.produce("t", b"after-%d" % i)
    assert producer.flush(TIMEOUT) == 0
    read(10)
    consumer.close()
    assert seen == [b"before-%d" % i for i in range(5)] + [b"after-%d" % i for i in range(5)]
    assert cluster.leader("t", 0) == to


def test_a_group_keeps_committing_when_its_coordinator_moves_or_stops(cluster):
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 0})
    for i in range(4):
        producer.produce("t", b"%d" % i)
    assert producer.flush(TIMEOUT) == 0
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": "g",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe(["t"])
    got = []

    def read_to(count: int) -> None:
        def polled() -> bool:
            message = consumer.poll(0.2)
            if message is not None and not message.error():
                got.append(message)
            return len(got) >= count

        eventually(polled, TIMEOUT, what=f"{count} records", interval=0)

    read_to(2)
    consumer.commit(message=got[1], asynchronous=False)
    assert cluster.committed("g") == {("t", 0): 2}
    first = cluster.coordinator("g")
    cluster.move_coordinator("g", next(n for n in cluster.live_nodes() if n != first))
    moved = cluster.coordinator("g")
    cluster.stop_broker(moved)  # and then its coordinator goes away
    assert cluster.coordinator("g") not in (moved,)
    read_to(4)

    def committed() -> bool:
        try:
            consumer.commit(message=got[3], asynchronous=False)
        except Exception:  # NOT_COORDINATOR while the client finds the new one: it retries
            return False
        return True

    eventually(committed, TIMEOUT, what="the commit through the new coordinator", interval=0.1)
    consumer.close()
    assert cluster.committed("g") == {("t", 0): 4}


def test_the_cluster_helpers_refuse_what_cannot_be(cluster):
    with pytest.raises(trafka.testing.BrokerError, match="no node 7"):
        cluster.stop_broker(7)
    cluster.stop_broker(1)
    cluster.stop_broker(2)
    with pytest.raises(trafka.testing.BrokerError, match="last live node"):
        cluster.stop_broker(3)
    with pytest.raises(trafka.testing.BrokerError, match="node 1 is stopped"):
        cluster.move_leader("t", 0, 1)
    cluster.start_broker(1)
    assert cluster.live_nodes() == [1, 3]
    with pytest.raises(trafka.testing.BrokerError, match="ephemeral ports"):
        trafka.Cluster(brokers=2, port=9092)
    with pytest.raises(trafka.testing.BrokerError, match="brokers >= 1"):
        trafka.Cluster(brokers=0)
    with trafka.Broker() as broker, pytest.raises(trafka.testing.BrokerError, match="not a cluster"):
        broker._call("leader", "t", 0)


def test_the_kafka_cluster_fixture_gives_three_brokers(kafka_cluster):
    assert kafka_cluster.live_nodes() == [1, 2, 3]


def test_an_interceptor_can_fail_one_broker_of_the_cluster(cluster):
    leader = cluster.leader("t", 0)
    handle = cluster.intercept(
        "Produce",
        lambda r: respond(error="NOT_LEADER_OR_FOLLOWER") if r.listener == f"BROKER{leader}" else None,
        times=1,
    )
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 0, "retry.backoff.ms": 20})
    producer.produce("t", b"x")
    assert producer.flush(TIMEOUT) == 0
    assert [c.listener for c in handle.calls] == [f"BROKER{leader}"]
    assert [r.value for r in cluster.records("t")] == [b"x"]


def test_open_broker_runs_a_cluster_in_the_callers_trio_loop():
    import trio

    async def main():
        async with trafka.open_broker(brokers=2, topics={"t": 2}) as running:
            assert sorted(running.nodes()) == [1, 2] and len(running.bootstrap_servers.split(",")) == 2
            leader = running.leader("t", 0)
            running.stop_broker(leader)
            assert running.live_nodes() == [n for n in (1, 2) if n != leader]
            assert running.leader("t", 0) != leader and running.leader_epoch("t", 0) == 1

    trio.run(main)
