"""KIP-714 client telemetry: the subscription the broker gives every client, and what they push.

`ClientTelemetry` answers GetTelemetrySubscriptions with one subscription for everyone (all metrics:
the one empty prefix; cumulative values; uncompressed payloads only) and checks each PushTelemetry as
Kafka's `ClientMetricsManager` does: a zero client instance id is INVALID_REQUEST, an unknown
instance or another subscription id UNKNOWN_SUBSCRIPTION_ID, a push sooner than half the interval
after the last THROTTLING_QUOTA_EXCEEDED, a payload over `telemetry_max_bytes` TELEMETRY_TOO_LARGE,
a compression type not offered UNSUPPORTED_COMPRESSION_TYPE. The adapter decodes the OTLP payload;
this keeps each client's latest values, bounded: at most `max_clients` instances (the one pushed
longest ago goes first), forgotten after three push intervals without a push or when the client
says it is terminating. Pure: ids and time come in as arguments.

Bounds (issue 42, ADR 68): a push holds at most `max_points_per_push` data points (more is
TELEMETRY_TOO_LARGE, checked by the adapter while it decodes) and all clients together at most
`max_points` (the clients pushed longest ago are forgotten first); each client is known to /metrics by
an ordinal, never by its instance id, which is what lets a client push as itself.
"""

from __future__ import annotations

import uuid
import zlib
from collections.abc import Sequence

import attrs

from .errors import ErrorCode

ZERO = uuid.UUID(int=0)


@attrs.frozen
class TelemetryPoint:
    """One data point: the metric's name, its attributes, and its value."""

    name: str
    attributes: tuple[tuple[str, str], ...]
    value: float


@attrs.frozen
class Subscription:
    client_instance_id: uuid.UUID
    subscription_id: int
    accepted_compression_types: tuple[int, ...]
    push_interval_ms: int
    telemetry_max_bytes: int
    delta_temporality: bool
    requested_metrics: tuple[str, ...]


@attrs.define
class ClientMetrics:
    """One client instance's last push."""

    client_id: str
    software: str
    pushed_ms: int
    points: tuple[TelemetryPoint, ...] = ()
    ordinal: int = 0  # what /metrics labels it with (the instance id stays private)


class ClientTelemetry:
    def __init__(
        self,
        push_interval_ms: int = 30_000,
        telemetry_max_bytes: int = 1 << 20,
        max_clients: int = 1000,
        max_points_per_push: int = 2_000,
        max_points: int = 50_000,
    ):
        self.push_interval_ms = push_interval_ms
        self.telemetry_max_bytes = telemetry_max_bytes
        self.max_clients = max_clients
        self.max_points_per_push = max_points_per_push
        self.max_points = max_points
        self._points = 0  # held by every client together
        self._ordinals = 0
        self.requested_metrics = ("",)  # every metric
        self.subscription_id = zlib.crc32(f"{push_interval_ms}:{self.requested_metrics}".encode()) - (1 << 31)
        self.clients: dict[uuid.UUID, ClientMetrics] = {}

    def subscribe(
        self, requested: uuid.UUID, new_id: uuid.UUID, client_id: str, software: str, now_ms: int
    ) -> Subscription:
        """The subscription for a client (a zero id gets `new_id`, as Kafka assigns one)."""
        self._expire(now_ms)
        instance = new_id if requested == ZERO else requested
        if instance not in self.clients:
            self._make_room()
            # the first push may come as soon as it likes
            self._ordinals += 1
            self.clients[instance] = ClientMetrics(
                client_id, software, now_ms - self.push_interval_ms, ordinal=self._ordinals
            )
        return Subscription(
            instance,
            self.subscription_id,
            (0,),
            self.push_interval_ms,
            self.telemetry_max_bytes,
            False,
            self.requested_metrics,
        )

    def check_push(
        self, instance: uuid.UUID, subscription_id: int, compression: int, size: int, now_ms: int
    ) -> ErrorCode:
        """Whether a push may be taken (before its payload is decoded)."""
        if instance == ZERO:
            return ErrorCode.INVALID_REQUEST
        client = self.clients.get(instance)
        if client is None or subscription_id != self.subscription_id:
            return ErrorCode.UNKNOWN_SUBSCRIPTION_ID
        if now_ms - client.pushed_ms < self.push_interval_ms // 2:
            return ErrorCode.THROTTLING_QUOTA_EXCEEDED
        if compression != 0:
            return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
        if size > self.telemetry_max_bytes:
            return ErrorCode.TELEMETRY_TOO_LARGE
        return ErrorCode.NONE

    def pushed(self, instance: uuid.UUID, points: Sequence[TelemetryPoint], terminating: bool, now_ms: int) -> None:
        """Keep a checked push's points (a terminating client is forgotten)."""
        client = self.clients.get(instance)
        if client is None:
            return
        if terminating:
            self._forget(instance)
            return
        client.pushed_ms = now_ms
        kept = tuple(points[: self.max_points_per_push])
        self._points += len(kept) - len(client.points)
        client.points = kept
        while self._points > self.max_points:
            oldest = min((i for i, c in self.clients.items() if c.points), key=lambda i: self.clients[i].pushed_ms)
            self._points -= len(self.clients[oldest].points)
            self.clients[oldest].points = ()

    def snapshot(self, now_ms: int) -> dict[uuid.UUID, ClientMetrics]:
        self._expire(now_ms)
        return {instance: attrs.evolve(client) for instance, client in self.clients.items() if client.points}

    def _expire(self, now_ms: int) -> None:
        horizon = 3 * self.push_interval_ms
        for instance in [i for i, c in self.clients.items() if now_ms - c.pushed_ms > horizon + self.push_interval_ms]:
            self._forget(instance)

    def _make_room(self) -> None:
        while len(self.clients) >= self.max_clients:
            self._forget(min(self.clients, key=lambda i: self.clients[i].pushed_ms))

    def _forget(self, instance: uuid.UUID) -> None:
        self._points -= len(self.clients.pop(instance).points)

    @property
    def points_held(self) -> int:
        return self._points
