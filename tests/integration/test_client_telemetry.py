"""KIP-714 client telemetry with the HTTP listener on: librdkafka (confluent-kafka) asks for its
subscription and pushes its metrics, which /metrics shows per client instance; without the HTTP
listener the two APIs are not advertised."""

from __future__ import annotations

import urllib.request

from confluent_kafka import Producer

from tests.waiting import eventually

from .broker import BrokerProcess


def test_librdkafka_pushes_its_metrics_to_metrics(tmp_path):
    broker = BrokerProcess(
        ["--memory", "--http-port", "0"], env={"TRAFKA_HTTP_TELEMETRY_PUSH_INTERVAL_MS": "500"}
    ).start()
    try:
        producer = Producer({"bootstrap.servers": broker.bootstrap, "client.id": "pusher", "linger.ms": 0})

        def pushed() -> list[str]:
            producer.produce("telemetry-topic", b"x")
            producer.poll(0.5)
            text = urllib.request.urlopen(broker.http_url + "/metrics", timeout=5).read().decode()
            return [line for line in text.splitlines() if 'client_id="pusher"' in line and "client_instance_id" in line]

        found = eventually(pushed, 20, what="a pushed metric from the producer at /metrics", interval=0)
        producer.flush(10)
        assert any(line.startswith("org_apache_kafka_producer_") for line in found), found[:5]
    finally:
        assert broker.stop() == 0, broker.log()


def _advertised_keys(bootstrap: str) -> set[int]:
    from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

    from .wire import WireClient

    with WireClient(bootstrap) as client:
        response = client.request(
            ApiVersionsRequest[3](client_software_name="t", client_software_version="1"), ApiVersionsResponse, 3
        )
    return {api.api_key for api in response.api_keys}


def test_telemetry_is_advertised_only_with_the_http_listener():
    without = BrokerProcess(["--memory"]).start()
    try:
        assert not {71, 72} & _advertised_keys(without.bootstrap)
    finally:
        assert without.stop() == 0, without.log()
    with_http = BrokerProcess(["--memory", "--http-port", "0"]).start()
    try:
        assert {71, 72} <= _advertised_keys(with_http.bootstrap)
    finally:
        assert with_http.stop() == 0, with_http.log()
