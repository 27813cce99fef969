"""Hostile KIP-714 clients (issue 42, findings 4 and 12) through the real handlers and /metrics' renderer.

- 4: a push holds at most `max_points_per_push` data points (TELEMETRY_TOO_LARGE beyond), all clients
  at most `max_points`; pushed names are rendered under `client_telemetry_`, so a client cannot shadow
  a broker metric and make Prometheus refuse the scrape; a series a push repeats is shown once.
- 12: the zero instance id (which decodes as None) gets a fresh random id, and /metrics never shows
  instance ids.
"""

from __future__ import annotations

import uuid

import pytest
from opentelemetry.proto.metrics.v1 import metrics_pb2
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from trafka.adapters.http.metrics import BrokerMetrics, render_pushed
from trafka.adapters.kafka.apis import client_telemetry
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.domain.telemetry import ClientTelemetry, TelemetryPoint

CLIENT = ClientInfo("pusher", "127.0.0.1")


@pytest.fixture
def ctx():
    settings = load_settings(overrides={"storage": {"kind": "memory"}, "http": {"port": 0}})
    return bootstrap(settings, default_adapters(settings))


def otlp(names: list[str], points_each: int = 1) -> bytes:
    metrics = [
        metrics_pb2.Metric(
            name=name, gauge=metrics_pb2.Gauge(data_points=[metrics_pb2.NumberDataPoint(as_double=1.0)] * points_each)
        )
        for name in names
    ]
    scope = metrics_pb2.ScopeMetrics(metrics=metrics)
    return metrics_pb2.MetricsData(
        resource_metrics=[metrics_pb2.ResourceMetrics(scope_metrics=[scope])]
    ).SerializeToString()


def subscribe(ctx, instance=None):
    request = client_telemetry.GetTelemetrySubscriptionsRequest(client_instance_id=instance)
    return client_telemetry.GET_TELEMETRY_SUBSCRIPTIONS.handle(ctx, request, 0, CLIENT)


def push(ctx, sub, payload: bytes, instance=...):
    request = client_telemetry.PushTelemetryRequest(
        client_instance_id=sub.client_instance_id if instance is ... else instance,
        subscription_id=sub.subscription_id,
        terminating=False,
        compression_type=0,
        metrics=payload,
    )
    return client_telemetry.PUSH_TELEMETRY.handle(ctx, request, 0, CLIENT).error_code


def test_the_zero_instance_id_as_decoded_gets_a_random_one_and_cannot_push(ctx):
    first, second = subscribe(ctx, None), subscribe(ctx, None)  # what the zero uuid decodes as
    assert None not in (first.client_instance_id, second.client_instance_id)
    assert first.client_instance_id != second.client_instance_id
    assert push(ctx, first, otlp(["a"]), instance=None) == ErrorCode.INVALID_REQUEST
    assert push(ctx, first, otlp(["a"])) == ErrorCode.NONE


def test_a_push_is_bounded_in_data_points_and_metrics(ctx):
    sub = subscribe(ctx)
    limit = ctx.services.telemetry.max_points_per_push
    assert push(ctx, sub, otlp(["a"], points_each=limit + 1)) == ErrorCode.TELEMETRY_TOO_LARGE
    assert push(ctx, sub, otlp([f"m{i}" for i in range(limit + 1)], points_each=0)) == ErrorCode.TELEMETRY_TOO_LARGE
    assert ctx.services.telemetry.points_held == 0
    assert push(ctx, sub, otlp(["a" * 10_000], points_each=limit)) == ErrorCode.NONE
    assert ctx.services.telemetry.points_held == limit
    assert {len(p.name) for c in ctx.services.telemetry.clients.values() for p in c.points} == {200}


def test_all_clients_together_hold_at_most_max_points():
    telemetry = ClientTelemetry(push_interval_ms=1000, max_points_per_push=10, max_points=25)
    points = [TelemetryPoint(f"m{i}", (), 1.0) for i in range(10)]
    ids = [uuid.UUID(int=i) for i in range(1, 5)]
    for n, instance in enumerate(ids):
        telemetry.subscribe(instance, instance, f"c{n}", "", n)
        telemetry.pushed(instance, points, False, 1000 + n)
        assert telemetry.points_held <= 25
    assert [len(telemetry.clients[i].points) for i in ids] == [0, 0, 10, 10]  # the oldest pushes went first


def test_pushed_names_live_apart_from_the_broker_s_and_the_scrape_stays_valid():
    telemetry = ClientTelemetry(push_interval_ms=1000)
    instance = uuid.uuid4()
    telemetry.subscribe(instance, instance, "pusher", "", 0)
    shadow = "kafka_server_socket_server_metrics_connection_count"
    same = (("listener", "PLAINTEXT"),)
    telemetry.pushed(instance, [TelemetryPoint(shadow, same, 1.0), TelemetryPoint(shadow, same, 2.0)], False, 1000)
    metrics = BrokerMetrics()
    metrics.connection_opened("PLAINTEXT")
    text = (generate_latest(metrics.registry) + render_pushed(telemetry.snapshot(1000))).decode()
    families = [f.name for f in text_string_to_metric_families(text)]  # raises on a duplicate family
    assert len(families) == len(set(families))
    assert "client_telemetry_" + shadow in families
    assert str(instance) not in text and 'client_instance="1"' in text
    pushed = [line for line in text.splitlines() if line.startswith("client_telemetry_")]
    assert len(pushed) == 1 and pushed[0].endswith(" 2.0")
