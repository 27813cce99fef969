"""A broker pinned to an older Kafka release (`kafka_version`): ApiVersions says exactly what that
release says (within what trafka serves), real clients negotiate down and still produce and consume,
and a request above the release's versions is refused as that release would."""

from __future__ import annotations

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.protocol.admin import DescribeTopicPartitionsRequest
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse

import trafka
from trafka.adapters.kafka.releases import api_versions

from .clients import client_log_fixture, confluent_producer, consume_in_group
from .wire import WireClient

client_log = client_log_fixture("trafka.tests.kafka_version", autouse=True)

PRODUCE, FETCH, API_VERSIONS, DESCRIBE_TOPIC_PARTITIONS = 0, 1, 18, 75


def _advertised(broker, version: int = 3) -> dict[int, tuple[int, int]]:
    with WireClient(broker.bootstrap_servers) as wire:
        response = wire.request(
            ApiVersionsRequest[version](client_software_name="t", client_software_version="1"),
            ApiVersionsResponse,
            version,
        )
    assert response.error_code == 0
    return {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}


def test_a_broker_pinned_to_2_8_advertises_what_kafka_2_8_does():
    with trafka.Broker(kafka_version="2.8") as broker:
        advertised = _advertised(broker)
    assert advertised[PRODUCE][1] == 9 and advertised[FETCH][1] == 12 and advertised[API_VERSIONS] == (0, 3)
    assert DESCRIBE_TOPIC_PARTITIONS not in advertised
    assert 68 not in advertised  # no KIP-848 ConsumerGroupHeartbeat in 2.8
    release = api_versions("2.8")
    with trafka.Broker() as unpinned:
        served = _advertised(unpinned, 4)
    for key, (low, high) in advertised.items():
        assert key in release and key in served
        assert low == max(release[key][0], served[key][0]) and high == min(release[key][1], served[key][1])
    # every API both have is advertised
    assert set(advertised) == {
        key
        for key in set(release) & set(served)
        if max(release[key][0], served[key][0]) <= min(release[key][1], served[key][1])
    }


@pytest.mark.parametrize("release", ["2.8", "3.9", "4.0"])
def test_confluent_produces_and_consumes_in_a_group_against_a_pinned_broker(release):
    with trafka.Broker(kafka_version=release, topics={"t": 2}) as broker:
        producer = confluent_producer(broker.bootstrap_servers)
        for i in range(10):
            producer.produce("t", b"%d" % i)
        assert producer.flush(15) == 0
        assert sorted(consume_in_group(broker.bootstrap_servers, "t", 10)) == sorted(b"%d" % i for i in range(10))


def test_kafka_python_sees_a_2_8_broker_and_works_with_it():
    with trafka.Broker(kafka_version="2.8", topics={"t": 1}) as broker:
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
        assert producer.config["api_version"] == (2, 8)  # inferred from ApiVersions, as against Kafka 2.8
        producer.send("t", b"hello").get(timeout=15)
        producer.close(5)
        consumer = KafkaConsumer(
            "t",
            bootstrap_servers=broker.bootstrap_servers,
            group_id="g",
            auto_offset_reset="earliest",
            consumer_timeout_ms=10000,
        )
        assert [m.value for m in consumer] == [b"hello"]
        consumer.close()
        assert broker.committed("g") == {("t", 0): 1}


def test_a_request_above_the_release_is_refused_as_that_release_would():
    with trafka.Broker(kafka_version="2.8") as broker:
        with WireClient(broker.bootstrap_servers) as wire:  # Metadata v12 came with 3.1
            wire.send(MetadataRequest[12](topics=None, allow_auto_topic_creation=False), 12)
            assert wire.is_closed_by_peer()
        with WireClient(broker.bootstrap_servers) as wire:
            ok = wire.request(MetadataRequest[11](topics=None, allow_auto_topic_creation=False), MetadataResponse, 11)
            assert ok.brokers
        with WireClient(broker.bootstrap_servers) as wire:  # an API 2.8 did not have (3.8): closed
            wire.send(
                DescribeTopicPartitionsRequest[0](
                    topics=[DescribeTopicPartitionsRequest[0].TopicRequest(name="t")], response_partition_limit=10
                ),
                0,
            )
            assert wire.is_closed_by_peer()
        with WireClient(broker.bootstrap_servers) as wire:  # ApiVersions v4 came with 3.9: the v0 fallback
            wire.send(ApiVersionsRequest[4](client_software_name="t", client_software_version="1"), 4)
            fallback = wire.receive(ApiVersionsResponse, 0)
        assert fallback.error_code == 35
        assert [(k.api_key, k.min_version, k.max_version) for k in fallback.api_keys] == [(18, 0, 3)]


def test_an_unknown_release_is_refused_where_the_broker_is_declared():
    with pytest.raises(trafka.testing.BrokerError, match="unknown Kafka release .2.9.: one of 0.11, 1.0, 1.1, "):
        trafka.Broker(kafka_version="2.9")
