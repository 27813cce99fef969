"""Client quotas on the HTTP listener: the console's broker page lists the quotas set and each quota
id's rate against its bound, and /metrics has Kafka's quota sensors under the JMX exporter's names."""

from __future__ import annotations

import trio

from tests.batches import make_batch
from trafka.adapters.http import run_listener
from trafka.adapters.kafka.apis import produce
from trafka.adapters.kafka.connection import quotas as quota_layer
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.adapters.kafka.wire.fast_produce import PartitionProduceData, ProduceRequestView, TopicProduceData
from trafka.domain.quotas import QuotaEntity

from .test_console import T0, _http, broker  # noqa: F401  (the fixture)


async def test_the_broker_page_and_metrics_show_client_quotas(broker):
    ctx, view = broker
    ctx.services.catalog.create("t", 1)
    ctx.services.quotas.quotas.alter(
        [
            (QuotaEntity.user_client(client_id="slow"), [("producer_byte_rate", 1000.0)]),
            (QuotaEntity.user_client("alice", default_client=True), [("consumer_byte_rate", 2048.0)]),
        ]
    )
    request = ProduceRequestView(
        None, 1, 1000, [TopicProduceData("t", [PartitionProduceData(0, make_batch([(T0, b"k", b"v" * 30_000)]))])]
    )
    outcome = quota_layer.layer(produce.API, produce.API.handle)(ctx, request, 9, ClientInfo("slow", "127.0.0.1"))
    assert isinstance(outcome, quota_layer.Throttled)
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        host, port = await nursery.start(run_listener, view, "127.0.0.1", 0, stop)
        base = f"http://{host}:{port}"
        status, html = await trio.to_thread.run_sync(_http, base + "/broker", None)
        assert status == 200 and 'id="client-quotas"' in html
        assert "<code>producer_byte_rate</code>" in html and "&lt;default&gt;" in html and "alice" in html
        assert 'id="quota-usage"' in html and ">slow<" in html
        status, text = await trio.to_thread.run_sync(_http, base + "/metrics", None)
        stop.set()
    assert status == 200
    lines = [line for line in text.splitlines() if line.startswith("kafka_server_quota_")]
    assert any(
        line.startswith('kafka_server_quota_byte_rate{clientid="slow",resource="Produce",user=""}') for line in lines
    ), lines
    (throttle,) = [line for line in lines if line.startswith("kafka_server_quota_throttle_time{")]
    assert float(throttle.split()[-1]) == outcome.throttle_ms
