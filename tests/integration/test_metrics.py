"""/metrics against a broker fed by real clients: the counts match what was sent, exactly.

Exact produce bytes and request counts come from the wire client (we know every byte of every
request); confluent-kafka produces and consumes beside it, and commits a group's offset for the lag.
"""

from __future__ import annotations

import urllib.request

import pytest
from confluent_kafka import Consumer, TopicPartition
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from prometheus_client.parser import text_string_to_metric_families

from tests.batches import make_batch
from tests.waiting import eventually

from .broker import BrokerProcess
from .clients import TIMEOUT, confluent_admin, create_topic, produce_batches, read_partition, unique
from .wire import WireClient

PRODUCE_VERSION = 9


@pytest.fixture(scope="module")
def http_broker():
    process = BrokerProcess(["--memory", "--http-port", "0"]).start()
    yield process
    assert process.stop() == 0, process.log()


def scrape(broker) -> dict[tuple[str, frozenset], float]:
    """Every sample of /metrics, parsed by prometheus_client's parser, by (name, labels)."""
    with urllib.request.urlopen(broker.http_url + "/metrics", timeout=TIMEOUT) as response:
        assert response.headers["Content-Type"].startswith("text/plain")
        text = response.read().decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples, name: str, **labels) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def produce_request(topic: str, partition: int, batch: bytes) -> ProduceRequest:
    data = ProduceRequest.TopicProduceData.PartitionProduceData(index=partition, records=batch)
    return ProduceRequest[PRODUCE_VERSION](
        transactional_id=None,
        acks=1,
        timeout_ms=5000,
        topic_data=[ProduceRequest.TopicProduceData(name=topic, partition_data=[data])],
    )


def test_produce_fetch_and_lag_counts_match_exactly(http_broker):
    topic = unique("metrics")
    create_topic(http_broker.bootstrap, topic, 2)
    batches = [
        make_batch([(1_700_000_000_000 + i, b"k%d" % i, b"v" * (10 * i + 1)) for i in range(n)]) for n in (1, 5, 20)
    ]
    before = scrape(http_broker)
    with WireClient(http_broker.bootstrap) as wire:
        for batch in batches:
            response = wire.request(produce_request(topic, 0, batch), ProduceResponse, PRODUCE_VERSION)
            assert response.responses[0].partition_responses[0].error_code == 0
        failed = wire.request(produce_request(topic, 7, batches[0]), ProduceResponse, PRODUCE_VERSION)
        assert failed.responses[0].partition_responses[0].error_code == 3
    records, size = 1 + 5 + 20, sum(map(len, batches))
    assert len(read_partition(http_broker.bootstrap, topic, 0, 0, records)) == records
    group = unique("lagging")
    committer = Consumer({"bootstrap.servers": http_broker.bootstrap, "group.id": group, "log_level": 0})
    try:
        committer.commit(offsets=[TopicPartition(topic, 0, 4)], asynchronous=False)
    finally:
        committer.close()

    after = scrape(http_broker)
    assert value(after, "kafka_server_brokertopicmetrics_messagesin_total", topic=topic) == records
    assert value(after, "kafka_server_brokertopicmetrics_bytesin_total", topic=topic) == size
    assert value(after, "kafka_server_brokertopicmetrics_bytesout_total", topic=topic) == size
    assert value(after, "kafka_server_brokertopicmetrics_totalproducerequests_total", topic=topic) == 4
    assert value(after, "kafka_server_brokertopicmetrics_failedproducerequests_total", topic=topic) == 1
    assert value(after, "kafka_log_log_size", topic=topic, partition="0") == size
    assert value(after, "kafka_log_log_logendoffset", topic=topic, partition="0") == records
    assert value(after, "kafka_log_log_logendoffset", topic=topic, partition="1") == 0
    assert value(after, "kafka_log_log_logstartoffset", topic=topic, partition="0") == 0
    assert value(after, "kafka_consumergroup_current_offset", consumergroup=group, topic=topic, partition="0") == 4
    assert value(after, "kafka_consumergroup_lag", consumergroup=group, topic=topic, partition="0") == records - 4

    def delta(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    # Only the wire client produced: four Produce v9 requests, one of them to a missing partition.
    produce = {"request": "Produce", "version": str(PRODUCE_VERSION)}
    assert delta("kafka_network_requestmetrics_requests_total", **produce) == 4
    assert delta("kafka_network_requestmetrics_totaltimems_count", request="Produce") == 4
    assert delta("kafka_network_requestmetrics_totaltimems_bucket", request="Produce", le="+Inf") == 4
    assert delta("kafka_network_requestmetrics_errors_total", request="Produce", error="NONE") == 3
    assert (
        delta("kafka_network_requestmetrics_errors_total", request="Produce", error="UNKNOWN_TOPIC_OR_PARTITION") == 1
    )
    fetches = sum(
        v
        for (name, labels), v in after.items()
        if name == "kafka_network_requestmetrics_requests_total" and ("request", "Fetch") in labels
    )
    assert fetches >= 1
    assert value(after, "kafka_network_requestmetrics_totaltimems_count", request="Fetch") == fetches
    assert delta("kafka_server_socket_server_metrics_connection_creation_total", listener="PLAINTEXT") >= 3


def test_records_from_a_real_producer_are_counted_from_batch_headers(http_broker):
    topic = unique("confluent")
    create_topic(http_broker.bootstrap, topic, 1)
    produce_batches(http_broker.bootstrap, topic, [[(0, b"a", b"1")] * 7, [(0, None, b"2")] * 13])
    samples = scrape(http_broker)
    assert value(samples, "kafka_server_brokertopicmetrics_messagesin_total", topic=topic) == 20
    assert value(samples, "kafka_log_log_logendoffset", topic=topic, partition="0") == 20
    assert value(samples, "kafka_server_brokertopicmetrics_bytesin_total", topic=topic) == value(
        samples, "kafka_log_log_size", topic=topic, partition="0"
    )


def test_connections_are_counted_while_open(http_broker):
    """One more connection while ours is open. Connections of earlier tests may still be closing on a
    busy machine, so the count is compared until it is steady across our connection (10 s at most)."""
    counts: list[tuple[float, float]] = []

    def one_more_while_open() -> bool:
        before = value(scrape(http_broker), "kafka_server_socket_server_metrics_connection_count", listener="PLAINTEXT")
        with WireClient(http_broker.bootstrap) as wire:
            wire.request(
                produce_request("absent-topic", 0, make_batch([(0, None, b"x")])), ProduceResponse, PRODUCE_VERSION
            )
            during = value(
                scrape(http_broker), "kafka_server_socket_server_metrics_connection_count", listener="PLAINTEXT"
            )
        counts.append((before, during))
        return during == before + 1

    eventually(one_more_while_open, 10, what="a steady connection count", interval=0.1, state=lambda: counts[-1])


def test_a_deleted_or_unknown_topic_has_no_per_topic_series(http_broker):
    topic = unique("short-lived")
    create_topic(http_broker.bootstrap, topic, 1)
    produce_batches(http_broker.bootstrap, topic, [[(0, None, b"x")] * 3])
    with WireClient(http_broker.bootstrap) as wire:
        wire.request(
            produce_request("never-created", 0, make_batch([(0, None, b"x")])), ProduceResponse, PRODUCE_VERSION
        )
    samples = scrape(http_broker)
    assert value(samples, "kafka_server_brokertopicmetrics_messagesin_total", topic=topic) == 3
    assert not [labels for _, labels in samples if ("topic", "never-created") in labels]
    admin = confluent_admin(http_broker.bootstrap)
    assert admin.delete_topics([topic], operation_timeout=TIMEOUT)[topic].result(TIMEOUT) is None
    assert not [labels for _, labels in scrape(http_broker) if ("topic", topic) in labels]


def test_a_kip848_consumer_groups_lag_is_scraped_and_the_console_shows_it(http_broker):
    topic, group = unique("kip848-metrics"), unique("g")
    create_topic(http_broker.bootstrap, topic, 1)
    produce_batches(http_broker.bootstrap, topic, [[(0, None, b"v%d" % i) for i in range(10)]])
    consumer = Consumer(
        {
            "bootstrap.servers": http_broker.bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "log_level": 0,
        }
    )
    consumer.subscribe([topic])
    read: list = []

    def read_and_commit() -> bool:
        message = consumer.poll(0.1)
        if message is not None and not message.error():
            read.append(message)
            consumer.commit(message=message, asynchronous=False)
        return len(read) == 4

    eventually(read_and_commit, TIMEOUT, what="4 records read and committed", interval=0)
    samples = scrape(http_broker)
    assert value(samples, "kafka_consumergroup_current_offset", consumergroup=group, topic=topic, partition="0") == 4
    assert value(samples, "kafka_consumergroup_lag", consumergroup=group, topic=topic, partition="0") == 6
    with urllib.request.urlopen(http_broker.http_url + "/groups", timeout=TIMEOUT) as response:
        assert group in response.read().decode()
    with urllib.request.urlopen(http_broker.http_url + "/groups/" + group, timeout=TIMEOUT) as response:
        page = response.read().decode()
    assert "consumer" in page and topic in page
    consumer.close()
