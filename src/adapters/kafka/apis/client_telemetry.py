"""GetTelemetrySubscriptions (key 71): v0 and PushTelemetry (key 72): v0, KIP-714's client metrics.

Served when the HTTP listener is on (`http.port`), so that what clients push can be read at
`/metrics`; Kafka needs a metrics-reporter plugin for that, trafka none. Every client gets one
subscription (all metrics, cumulative, uncompressed) from the domain's `ClientTelemetry`; a push's
payload is OTLP `MetricsData` (protobuf), decoded with OpenTelemetry's generated classes into gauge
and sum data points (histograms and summaries are left out). A payload that does not decode is
INVALID_RECORD, as Kafka answers it. Kafka checks no ACL for either API; neither does trafka.

Hostile pushes (issue 42, ADR 68): a zero instance id decodes as None and is treated as zero (a new
random id for GetTelemetrySubscriptions, INVALID_REQUEST for a push), never as one slot every client
shares; decoding stops at the domain's `max_points_per_push` data points (TELEMETRY_TOO_LARGE), and
names and attributes are cut to bounded lengths, so what a push may hold is bounded in memory.

kafka-python 3.0.12 has no classes for these messages: they are compiled from Kafka's JSON schemas
in `trafka.kafka_schemas` by kafka-python's own machinery, as its own classes are.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.telemetry import ZERO, TelemetryPoint
from trafka.schema_codec.messages import (
    GetTelemetrySubscriptionsRequest,
    GetTelemetrySubscriptionsResponse,
    PushTelemetryRequest,
    PushTelemetryResponse,
)

from ..api import KafkaApi, top_level_error
from ..request_context import ClientInfo
from ..security.authorization import Checks

if TYPE_CHECKING:
    from collections.abc import Callable

    from trafka.domain.telemetry import ClientTelemetry


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    clock_ms: Callable[[], int]
    telemetry: ClientTelemetry | None


def handle_get_telemetry_subscriptions(
    ctx: Uses, request: Any, version: int, client: ClientInfo
) -> GetTelemetrySubscriptionsResponse:
    telemetry = ctx.telemetry
    assert telemetry is not None  # registered only with it
    requested = request.client_instance_id or ZERO  # the zero uuid decodes as None
    found = telemetry.subscribe(requested, uuid.uuid4(), client.client_id, "", ctx.clock_ms())
    return GetTelemetrySubscriptionsResponse(
        version=version,
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        client_instance_id=found.client_instance_id,
        subscription_id=found.subscription_id,
        accepted_compression_types=list(found.accepted_compression_types),
        push_interval_ms=found.push_interval_ms,
        telemetry_max_bytes=found.telemetry_max_bytes,
        delta_temporality=found.delta_temporality,
        requested_metrics=list(found.requested_metrics),
    )


def handle_push_telemetry(ctx: Uses, request: Any, version: int, client: ClientInfo) -> PushTelemetryResponse:
    telemetry = ctx.telemetry
    assert telemetry is not None
    now = ctx.clock_ms()
    payload = request.metrics or b""
    instance = request.client_instance_id or ZERO  # the zero uuid decodes as None
    error = telemetry.check_push(instance, request.subscription_id, request.compression_type, len(payload), now)
    if error is ErrorCode.NONE:
        try:
            points = decode_otlp(payload, telemetry.max_points_per_push)
        except TooManyPoints:
            error = ErrorCode.TELEMETRY_TOO_LARGE
        else:
            if points is None:
                error = ErrorCode.INVALID_RECORD
            else:
                telemetry.pushed(instance, points, request.terminating, now)
    return PushTelemetryResponse(version=version, throttle_time_ms=0, error_code=error)


MAX_NAME = 200  # characters of a metric's name kept
MAX_ATTRIBUTES = 8  # attributes kept per data point
MAX_ATTRIBUTE = 128  # characters of an attribute's key or value kept


class TooManyPoints(Exception):
    pass


def decode_otlp(payload: bytes, max_points: int = 2_000) -> list[TelemetryPoint] | None:
    """The gauge and sum data points of an OTLP MetricsData, or None if it is not one; TooManyPoints
    past `max_points`."""
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.metrics.v1.metrics_pb2 import MetricsData

    data = MetricsData()
    try:
        data.ParseFromString(payload)
    except DecodeError:
        return None
    points: list[TelemetryPoint] = []
    seen = 0  # metrics looked at too: a push of empty metrics is bounded as well
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                seen += 1
                if seen > max_points:
                    raise TooManyPoints
                kind = metric.WhichOneof("data")
                if kind not in ("gauge", "sum"):
                    continue
                data_points = getattr(metric, kind).data_points
                if len(points) + len(data_points) > max_points:
                    raise TooManyPoints
                name = metric.name[:MAX_NAME]
                for point in data_points:
                    value = point.as_double if point.WhichOneof("value") == "as_double" else float(point.as_int)
                    attributes = tuple(
                        sorted(
                            (a.key[:MAX_ATTRIBUTE], _text(a.value)[:MAX_ATTRIBUTE])
                            for a in point.attributes[:MAX_ATTRIBUTES]
                        )
                    )
                    points.append(TelemetryPoint(name, attributes, value))
    return points


def _text(value: Any) -> str:
    kind = value.WhichOneof("value")
    return "" if kind is None else str(getattr(value, kind))


GET_TELEMETRY_SUBSCRIPTIONS = KafkaApi(
    GetTelemetrySubscriptionsRequest,
    GetTelemetrySubscriptionsResponse,
    (0, 0),
    handle_get_telemetry_subscriptions,
    authorization=Checks(()),
    refusal=top_level_error,
    read_only=False,
)
PUSH_TELEMETRY = KafkaApi(
    PushTelemetryRequest,
    PushTelemetryResponse,
    (0, 0),
    handle_push_telemetry,
    authorization=Checks(()),
    refusal=top_level_error,
    read_only=False,
)
APIS = (GET_TELEMETRY_SUBSCRIPTIONS, PUSH_TELEMETRY)
"""Registered only when the HTTP listener is on (`build_registry(telemetry=True)`)."""
