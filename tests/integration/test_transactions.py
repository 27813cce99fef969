"""Transactional producers and read_committed consumers with real clients, on the filesystem store."""

from __future__ import annotations

import signal

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.waiting import eventually, throughout

from .broker import BrokerProcess


@pytest.fixture(scope="module")
def txn_broker(tmp_path_factory):
    broker = BrokerProcess(
        ["--data-dir", str(tmp_path_factory.mktemp("logs"))], env={"TRAFKA_GROUPS_INITIAL_REBALANCE_DELAY_MS": "0"}
    ).start()
    yield broker
    assert broker.stop() == 0, broker.log()


def _create(bootstrap: str, topic: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(10)


def _read(bootstrap: str, topic: str, isolation: str, expected: int, wait: float = 10.0) -> list[bytes]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"reader-{isolation}",
            "log_level": 0,
            "isolation.level": isolation,
            "enable.auto.commit": False,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[bytes] = []

    def read() -> bool:
        message = consumer.poll(0.2)
        if message is not None and not message.error():
            values.append(message.value())
        return len(values) >= expected

    try:
        eventually(read, wait, what=f"{expected} {isolation} records", interval=0, state=lambda: values)
        throughout(read, 0.5)  # nothing more arrives (what does is kept, and fails the caller's assertion)
    finally:
        consumer.close()
    return values


def _producer(bootstrap: str, transactional_id: str) -> Producer:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id, "log_level": 0})
    producer.init_transactions(15)
    return producer


def test_committed_and_aborted_transactions(txn_broker, topic_name):
    _create(txn_broker.bootstrap, topic_name)
    producer = _producer(txn_broker.bootstrap, f"{topic_name}-tid")
    producer.begin_transaction()
    for i in range(3):
        producer.produce(topic_name, b"commit-%d" % i, partition=0)
    producer.commit_transaction(15)
    producer.begin_transaction()
    for i in range(3):
        producer.produce(topic_name, b"abort-%d" % i, partition=0)
    producer.flush(15)  # the aborted records really reach the log
    producer.abort_transaction(15)
    producer.begin_transaction()
    producer.produce(topic_name, b"commit-3", partition=0)
    producer.commit_transaction(15)

    committed = [b"commit-0", b"commit-1", b"commit-2", b"commit-3"]
    assert _read(txn_broker.bootstrap, topic_name, "read_committed", 4) == committed
    assert _read(txn_broker.bootstrap, topic_name, "read_uncommitted", 7) == (
        committed[:3] + [b"abort-0", b"abort-1", b"abort-2", b"commit-3"]
    )


def test_an_open_transaction_holds_read_committed_at_the_last_stable_offset(txn_broker, topic_name):
    _create(txn_broker.bootstrap, topic_name)
    plain = Producer({"bootstrap.servers": txn_broker.bootstrap, "log_level": 0})
    plain.produce(topic_name, b"before", partition=0)
    plain.flush(10)
    producer = _producer(txn_broker.bootstrap, f"{topic_name}-tid")
    producer.begin_transaction()
    producer.produce(topic_name, b"pending", partition=0)
    producer.flush(10)
    plain.produce(topic_name, b"after", partition=0)
    plain.flush(10)
    assert _read(txn_broker.bootstrap, topic_name, "read_committed", 1, wait=3) == [b"before"]
    producer.commit_transaction(15)
    assert _read(txn_broker.bootstrap, topic_name, "read_committed", 3) == [b"before", b"pending", b"after"]


def test_consume_transform_produce_commits_offsets_with_the_transaction(txn_broker, topic_name):
    source, sink = f"{topic_name}-in", f"{topic_name}-out"
    _create(txn_broker.bootstrap, source)
    _create(txn_broker.bootstrap, sink)
    plain = Producer({"bootstrap.servers": txn_broker.bootstrap, "log_level": 0})
    for i in range(5):
        plain.produce(source, b"%d" % i, partition=0)
    plain.flush(10)

    consumer = Consumer(
        {
            "bootstrap.servers": txn_broker.bootstrap,
            "group.id": f"{topic_name}-etl",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "log_level": 0,
            "isolation.level": "read_committed",
        }
    )
    consumer.subscribe([source])
    producer = _producer(txn_broker.bootstrap, f"{topic_name}-etl")
    taken = []

    def take() -> bool:
        message = consumer.poll(0.3)
        if message is not None and not message.error():
            taken.append(message)
        return len(taken) == 5

    eventually(take, 20, what="5 source records", interval=0)
    producer.begin_transaction()
    for message in taken:
        producer.produce(sink, message.value() * 2, partition=0)
    producer.send_offsets_to_transaction(
        [TopicPartition(source, 0, taken[-1].offset() + 1)], consumer.consumer_group_metadata(), 15
    )
    producer.commit_transaction(15)
    committed = consumer.committed([TopicPartition(source, 0)], timeout=10)
    consumer.close()
    assert committed[0].offset == 5
    assert _read(txn_broker.bootstrap, sink, "read_committed", 5) == [b"%d" % i * 2 for i in range(5)]


def test_a_new_instance_fences_the_old_one(txn_broker, topic_name):
    _create(txn_broker.bootstrap, topic_name)
    old = _producer(txn_broker.bootstrap, f"{topic_name}-tid")
    old.begin_transaction()
    old.produce(topic_name, b"zombie", partition=0)
    old.flush(10)
    new = _producer(txn_broker.bootstrap, f"{topic_name}-tid")  # bumps the epoch, aborts the open one
    with pytest.raises(KafkaException):
        old.commit_transaction(10)
    new.begin_transaction()
    new.produce(topic_name, b"fresh", partition=0)
    new.commit_transaction(15)
    assert _read(txn_broker.bootstrap, topic_name, "read_committed", 1) == [b"fresh"]


def test_transaction_state_survives_a_crash_and_an_abandoned_transaction_times_out(tmp_path):
    args = ["--data-dir", str(tmp_path / "logs")]
    broker = BrokerProcess(args).start()
    _create(broker.bootstrap, "crash-txn")
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "transactional.id": "crash-tid",
            "transaction.timeout.ms": 2000,
            "log_level": 0,
        }
    )
    producer.init_transactions(15)
    producer.begin_transaction()
    producer.produce("crash-txn", b"done", partition=0)
    producer.commit_transaction(15)
    producer.begin_transaction()
    producer.produce("crash-txn", b"abandoned", partition=0)
    producer.flush(10)
    broker.stop(signal.SIGKILL)
    del producer

    broker = BrokerProcess(args).start()
    try:
        # The abandoned transaction is aborted after its 2 s timeout; read_committed then moves past it.
        plain = Producer({"bootstrap.servers": broker.bootstrap, "log_level": 0})
        plain.produce("crash-txn", b"later", partition=0)
        plain.flush(10)
        assert _read(broker.bootstrap, "crash-txn", "read_committed", 2, wait=15) == [b"done", b"later"]
        resumed = _producer(broker.bootstrap, "crash-tid")  # the same transactional id continues
        resumed.begin_transaction()
        resumed.produce("crash-txn", b"resumed", partition=0)
        resumed.commit_transaction(15)
        assert _read(broker.bootstrap, "crash-txn", "read_committed", 3) == [b"done", b"later", b"resumed"]
    finally:
        assert broker.stop() == 0


def test_describe_and_list_transactions_and_describe_producers(txn_broker, topic_name):
    from kafka.protocol.admin import (
        DescribeProducersRequest,
        DescribeProducersResponse,
        DescribeTransactionsRequest,
        DescribeTransactionsResponse,
        ListTransactionsRequest,
        ListTransactionsResponse,
    )

    from .wire import WireClient

    _create(txn_broker.bootstrap, topic_name)
    producer = _producer(txn_broker.bootstrap, f"{topic_name}-ops")
    producer.begin_transaction()
    producer.produce(topic_name, b"open", partition=0)
    producer.flush(10)
    with WireClient(txn_broker.bootstrap) as client:
        described = client.request(
            DescribeTransactionsRequest[0](transactional_ids=[f"{topic_name}-ops", "nobody"]),
            DescribeTransactionsResponse,
            0,
        )
        ongoing, unknown = described.transaction_states
        assert (ongoing.error_code, ongoing.transaction_state) == (0, "Ongoing")
        assert [(t.topic, t.partitions) for t in ongoing.topics] == [(topic_name, [0])]
        assert unknown.error_code == 105  # TRANSACTIONAL_ID_NOT_FOUND
        listed = client.request(
            ListTransactionsRequest[1](state_filters=["Ongoing"], producer_id_filters=[], duration_filter=-1),
            ListTransactionsResponse,
            1,
        )
        assert f"{topic_name}-ops" in [t.transactional_id for t in listed.transaction_states]
        Topic = DescribeProducersRequest.TopicRequest
        producers = client.request(
            DescribeProducersRequest[0](topics=[Topic(name=topic_name, partition_indexes=[0])]),
            DescribeProducersResponse,
            0,
        )
        (active,) = producers.topics[0].partitions[0].active_producers
        assert active.producer_id == ongoing.producer_id and active.current_txn_start_offset == 0
    producer.commit_transaction(15)
    with WireClient(txn_broker.bootstrap) as client:
        described = client.request(
            DescribeTransactionsRequest[0](transactional_ids=[f"{topic_name}-ops"]), DescribeTransactionsResponse, 0
        )
        assert described.transaction_states[0].transaction_state == "CompleteCommit"


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGKILL], ids=["clean", "kill-9"])
def test_transactional_offsets_survive_a_broker_restart_before_the_commit(tmp_path, stop_signal):
    from kafka.protocol.consumer import OffsetFetchRequest, OffsetFetchResponse

    from .wire import WireClient

    args = ["--data-dir", str(tmp_path / "logs")]
    broker = BrokerProcess(args, env={"TRAFKA_GROUPS_INITIAL_REBALANCE_DELAY_MS": "0"}).start()
    same_port = args + ["--port", str(broker.port)]
    _create(broker.bootstrap, "etl-in")
    _create(broker.bootstrap, "etl-out")
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": "etl", "log_level": 0, "enable.auto.commit": False}
    )
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "transactional.id": "etl-tid",
            "log_level": 0,
            "transaction.timeout.ms": 60000,
            "reconnect.backoff.ms": 50,
        }
    )
    producer.init_transactions(15)
    producer.begin_transaction()
    producer.produce("etl-out", b"derived", partition=0)
    producer.send_offsets_to_transaction([TopicPartition("etl-in", 0, 42)], consumer.consumer_group_metadata(), 15)
    producer.flush(10)
    with WireClient(broker.bootstrap) as client:
        Topic = OffsetFetchRequest.OffsetFetchRequestTopic
        request = OffsetFetchRequest[7](
            group_id="etl", topics=[Topic(name="etl-in", partition_indexes=[0])], require_stable=True
        )
        staged = client.request(request, OffsetFetchResponse, 7).topics[0].partitions[0]
        assert staged.error_code == 88  # UNSTABLE_OFFSET_COMMIT while the transaction decides
    broker.stop(stop_signal)
    broker = BrokerProcess(same_port, env={"TRAFKA_GROUPS_INITIAL_REBALANCE_DELAY_MS": "0"}).start()
    try:
        producer.commit_transaction(30)
        committed = consumer.committed([TopicPartition("etl-in", 0)], timeout=15)
        consumer.close()
        assert committed[0].offset == 42
        assert _read(broker.bootstrap, "etl-out", "read_committed", 1) == [b"derived"]
    finally:
        assert broker.stop() == 0
