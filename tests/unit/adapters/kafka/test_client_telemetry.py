"""GetTelemetrySubscriptions and PushTelemetry through their handlers, with a real OTLP payload built
by OpenTelemetry's classes; the message classes compiled from Kafka's schemas round-trip."""

from __future__ import annotations

import io
import uuid

import pytest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.metrics.v1 import metrics_pb2

from trafka.adapters.kafka.apis import build_registry, client_telemetry
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode

CLIENT = ClientInfo("pusher", "127.0.0.1")


@pytest.fixture
def ctx():
    settings = load_settings(overrides={"storage": {"kind": "memory"}, "http": {"port": 0}})
    return bootstrap(settings, default_adapters(settings))


def _otlp() -> bytes:
    point = metrics_pb2.NumberDataPoint(
        as_double=12.5, attributes=[KeyValue(key="node.id", value=AnyValue(string_value="1"))]
    )
    total = metrics_pb2.NumberDataPoint(as_int=7)
    data = metrics_pb2.MetricsData(
        resource_metrics=[
            metrics_pb2.ResourceMetrics(
                scope_metrics=[
                    metrics_pb2.ScopeMetrics(
                        metrics=[
                            metrics_pb2.Metric(
                                name="org.apache.kafka.producer.latency", gauge=metrics_pb2.Gauge(data_points=[point])
                            ),
                            metrics_pb2.Metric(
                                name="org.apache.kafka.producer.sent", sum=metrics_pb2.Sum(data_points=[total])
                            ),
                            metrics_pb2.Metric(name="skipped", histogram=metrics_pb2.Histogram()),
                        ]
                    )
                ]
            )
        ]
    )
    return data.SerializeToString()


def test_a_client_subscribes_and_pushes(ctx):
    registry = build_registry(telemetry=True)
    assert registry.get(71) is not None and build_registry().get(71) is None
    sub = client_telemetry.GET_TELEMETRY_SUBSCRIPTIONS.handle(
        ctx, client_telemetry.GetTelemetrySubscriptionsRequest(client_instance_id=uuid.UUID(int=0)), 0, CLIENT
    )
    assert sub.error_code == ErrorCode.NONE and sub.client_instance_id != uuid.UUID(int=0)
    assert sub.requested_metrics == [""] and sub.accepted_compression_types == [0]

    def push(metrics: bytes, compression: int = 0):
        request = client_telemetry.PushTelemetryRequest(
            client_instance_id=sub.client_instance_id,
            subscription_id=sub.subscription_id,
            terminating=False,
            compression_type=compression,
            metrics=metrics,
        )
        return client_telemetry.PUSH_TELEMETRY.handle(ctx, request, 0, CLIENT).error_code

    assert push(b"\xff\xff not protobuf") == ErrorCode.INVALID_RECORD
    assert push(_otlp(), compression=1) == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    assert push(_otlp()) == ErrorCode.NONE
    (client,) = ctx.services.telemetry.snapshot(ctx.services.clock_ms()).values()
    assert client.client_id == "pusher"
    assert [(p.name, p.attributes, p.value) for p in client.points] == [
        ("org.apache.kafka.producer.latency", (("node.id", "1"),), 12.5),
        ("org.apache.kafka.producer.sent", (), 7.0),
    ]


@pytest.mark.parametrize(
    "message",
    [
        client_telemetry.GetTelemetrySubscriptionsResponse(
            version=0,
            throttle_time_ms=1,
            error_code=0,
            client_instance_id=uuid.UUID(int=5),
            subscription_id=-3,
            accepted_compression_types=[0, 4],
            push_interval_ms=1000,
            telemetry_max_bytes=1 << 20,
            delta_temporality=True,
            requested_metrics=["", "org.apache"],
        ),
        client_telemetry.PushTelemetryRequest(
            version=0,
            client_instance_id=uuid.UUID(int=9),
            subscription_id=4,
            terminating=True,
            compression_type=0,
            metrics=b"abc",
        ),
    ],
)
def test_the_compiled_messages_round_trip(message):
    decoded = type(message).decode(io.BytesIO(bytes(message.encode(version=0))), version=0)
    assert decoded.to_dict() == message.to_dict()
