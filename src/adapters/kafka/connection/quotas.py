"""Client quotas on the request path, as KIP-219: answer at once with the throttle time, then mute.

A layer composed once per API (like faults and authorization, ADR 30), taken by the connection only
while some user or client-id has a `producer_byte_rate`, `consumer_byte_rate` or `request_percentage`
(`ClientQuotas.throttles_requests`), so an unthrottled broker pays one attribute check per request.
After the handler, as Kafka's `KafkaApis`, each API's own `quota` (declared in its room) records what
the request used: by default its handler's time against the request quota; Produce its bytes in,
Fetch its bytes out (a throttled Fetch loses its data), the topic APIs their controller mutation
throttle; the APIs a client needs to connect nothing. The larger throttle wins.

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

from trafka.domain.quotas import QuotaType

from ..api import NO_RESPONSE, Deferred, Handle, KafkaApi, Parked, QuotaUse
from ..context import BrokerContext
from ..request_context import ClientInfo

log = logging.getLogger("trafka.server")


class Throttled:
    """A response (or NO_RESPONSE) after which the connection is muted for `throttle_ms`."""

    __slots__ = ("response", "throttle_ms")

    def __init__(self, response: Any, throttle_ms: int) -> None:
        self.response = response
        self.throttle_ms = throttle_ms


def layer(api: KafkaApi, serve: Handle) -> Handle:
    """`serve` with the client quotas of `api` recorded after it, and the throttle applied."""
    use = api.quota
    if use is None:
        return serve

    def throttled(ctx: BrokerContext, request: Any, version: int, client: ClientInfo) -> Any:
        started = perf_counter()
        outcome = serve(ctx, request, version, client)
        busy = perf_counter() - started
        if type(outcome) is Parked:
            return outcome.then(lambda answer: _account(ctx, use, request, answer, client, busy))
        if isinstance(outcome, Deferred):
            wait = outcome.wait

            async def then() -> Any:
                return _account(ctx, use, request, await wait(), client, busy)

            return Deferred(then)
        return _account(ctx, use, request, outcome, client, busy)

    return throttled


def _account(ctx: BrokerContext, use: QuotaUse, request: Any, outcome: Any, client: ClientInfo, busy: float) -> Any:
    sensors = ctx.services.quotas
    now = ctx.services.clock_ms()
    user, client_id = client.principal.name, client.client_id
    percent = busy * 100.0  # of one thread, per second: Kafka's nanos * 100 / 1e9
    charge = use(sensors, request, outcome, user, client_id, percent, now)
    outcome = charge.outcome
    bandwidth, request_throttle = charge.bandwidth_throttle_ms, charge.request_throttle_ms
    throttle = max(bandwidth, request_throttle)
    if throttle <= 0:
        return outcome
    sensors.throttled(
        charge.kind if bandwidth > request_throttle else QuotaType.REQUEST, user, client_id, throttle, now
    )
    if outcome is not NO_RESPONSE and outcome is not None:
        outcome.throttle_time_ms = throttle
    return Throttled(outcome, throttle)


async def connection_throttled(ctx: BrokerContext, stream: trio.SocketStream, host: str) -> bool:
    """KIP-612's `connection_creation_rate` per IP: True if this new connection is over its IP's rate,
    after holding it for the throttle time and closing it unserved (as Kafka's acceptor does)."""
    throttle_ms = ctx.services.quotas.connection_throttle(host, ctx.services.clock_ms())
    if throttle_ms <= 0:
        return False
    log.debug("closing connection from %s in %d ms: over its connection_creation_rate", host, throttle_ms)
    try:
        await trio.sleep(throttle_ms / 1000)
    finally:
        await trio.aclose_forcefully(stream)
    return True
