"""Client quotas on the request path, as KIP-219: answer at once with the throttle time, then mute.

A layer composed once per API (like faults and authorization, ADR 30), taken by the connection only
while some user or client-id has a `producer_byte_rate`, `consumer_byte_rate` or `request_percentage`
(`ClientQuotas.throttles_requests`), so an unthrottled broker pays one attribute check per request.
After the handler, as Kafka's `KafkaApis`:

- Produce records the request's bytes against the produce quota and its handler time against the
  request quota (not with acks=0); the larger throttle wins.
- Fetch records the handler time, then the response's bytes against the fetch quota; a throttled
  Fetch is answered with no data (empty, error NONE: `FetchContext.getThrottledResponse`) and its
  bytes are taken back (`unrecordQuotaSensor`).
- Every other API but ApiVersions and SASL records its handler time against the request quota;
  CreateTopics, DeleteTopics and CreatePartitions answer with their controller mutation throttle
  (apis/mutation_quota.py), the larger of the two wins.

The response carries `throttle_time_ms`; the outcome comes back wrapped in `Throttled`, and the
connection then reads no further request from that client for that long (server.py). A long-poll
Fetch is accounted when it completes, with the time its handler took before it waited.

`connection_throttled` is KIP-612's `connection_creation_rate` per IP, checked as a connection is
accepted: one over its IP's rate is held for the throttle time and closed unserved.

Measured as Kafka approximates: a Produce's size is its records' bytes (Kafka counts the whole request,
a few dozen bytes more), a Fetch's its records' bytes, and the request quota counts the time in the
handler as a percentage of one thread per second (`ClientRequestQuotaManager.nanosToPercentage`);
the time spent reading and writing the socket is not counted (Kafka adds the network thread's).
"""

from __future__ import annotations

import logging
from time import perf_counter
from typing import Any

import trio

from trafka.domain.errors import ErrorCode
from trafka.domain.quotas import QuotaType

from ..api import NO_RESPONSE, Deferred, Handle, KafkaApi
from ..context import BrokerContext, ClientInfo
from ..wire.fast_fetch import FetchAnswer

log = logging.getLogger("trafka.server")

PRODUCE_KEY, FETCH_KEY = 0, 1
EXEMPT = frozenset({17, 18, 36})  # SaslHandshake, ApiVersions, SaslAuthenticate: needed to connect
MUTATION_KEYS = frozenset({19, 20, 37})  # CreateTopics, DeleteTopics, CreatePartitions


class Throttled:
    """A response (or NO_RESPONSE) after which the connection is muted for `throttle_ms`."""

    __slots__ = ("response", "throttle_ms")

    def __init__(self, response: Any, throttle_ms: int) -> None:
        self.response = response
        self.throttle_ms = throttle_ms


def layer(api: KafkaApi, serve: Handle) -> Handle:
    """`serve` with the client quotas of `api` recorded after it, and the throttle applied."""
    key = api.api_key
    if key in EXEMPT:
        return serve

    def throttled(ctx: BrokerContext, request: Any, version: int, client: ClientInfo) -> Any:
        started = perf_counter()
        outcome = serve(ctx, request, version, client)
        busy = perf_counter() - started
        if isinstance(outcome, Deferred):
            wait = outcome.wait

            async def then() -> Any:
                return _account(ctx, key, request, await wait(), client, busy)

            return Deferred(then)
        return _account(ctx, key, request, outcome, client, busy)

    return throttled


def _account(ctx: BrokerContext, key: int, request: Any, outcome: Any, client: ClientInfo, busy: float) -> Any:
    sensors = ctx.quotas
    now = ctx.clock_ms()
    user, client_id = client.principal.name, client.client_id
    percent = busy * 100.0  # of one thread, per second: Kafka's nanos * 100 / 1e9
    bandwidth_type = QuotaType.REQUEST
    if key == PRODUCE_KEY:
        bandwidth_type = QuotaType.PRODUCE
        bandwidth = sensors.record(QuotaType.PRODUCE, user, client_id, _produce_bytes(request), now)
        request_throttle = 0 if request.acks == 0 else sensors.record(QuotaType.REQUEST, user, client_id, percent, now)
    elif key == FETCH_KEY:
        bandwidth_type = QuotaType.FETCH
        request_throttle = sensors.record(QuotaType.REQUEST, user, client_id, percent, now)
        size = _fetch_bytes(outcome)
        bandwidth = sensors.record(QuotaType.FETCH, user, client_id, size, now)
        if bandwidth > 0 or request_throttle > 0:
            sensors.unrecord(QuotaType.FETCH, user, client_id, size, now)
            if isinstance(outcome, FetchAnswer):
                outcome = FetchAnswer([], ErrorCode.NONE, session_id=outcome.session_id)
    else:
        if key in MUTATION_KEYS:  # the topic APIs set their controller mutation throttle themselves
            bandwidth_type = QuotaType.CONTROLLER_MUTATION
            bandwidth = getattr(outcome, "throttle_time_ms", 0) or 0
        else:
            bandwidth = 0
        request_throttle = sensors.record(QuotaType.REQUEST, user, client_id, percent, now)
    throttle = max(bandwidth, request_throttle)
    if throttle <= 0:
        return outcome
    sensors.throttled(
        bandwidth_type if bandwidth > request_throttle else QuotaType.REQUEST, user, client_id, throttle, now
    )
    if outcome is not NO_RESPONSE and outcome is not None:
        outcome.throttle_time_ms = throttle
    return Throttled(outcome, throttle)


def _produce_bytes(request: Any) -> int:
    return sum(
        len(data.records) for topic in request.topic_data or () for data in topic.partition_data or () if data.records
    )


def _fetch_bytes(outcome: Any) -> int:
    if not isinstance(outcome, FetchAnswer):
        return 0
    return sum(len(p[7]) for _, _, partitions in outcome.topics for p in partitions if p[7])


async def connection_throttled(ctx: BrokerContext, stream: trio.SocketStream, host: str) -> bool:
    """KIP-612's `connection_creation_rate` per IP: True if this new connection is over its IP's rate,
    after holding it for the throttle time and closing it unserved (as Kafka's acceptor does)."""
    throttle_ms = ctx.quotas.connection_throttle(host, ctx.clock_ms())
    if throttle_ms <= 0:
        return False
    log.debug("closing connection from %s in %d ms: over its connection_creation_rate", host, throttle_ms)
    try:
        await trio.sleep(throttle_ms / 1000)
    finally:
        await trio.aclose_forcefully(stream)
    return True
