"""One client connection's life: the per-IP connection throttle, the TLS handshake and principal on
SSL/SASL_SSL listeners (tls.py), then the reader (`reader.py`) until the client goes, the broker
stops or the connection idles past `connections.max.idle.ms`; what is queued is still written, and
the connection's parked requests, faults, observer and share sessions are told it ended.
"""

from __future__ import annotations

import logging

import trio

from trafka.domain.listeners import Listener
from trafka.domain.security.principal import ANONYMOUS

from ..context import BrokerContext
from ..runtime.purgatory import Operation
from .limits import ServerLimits
from .outbox import ConnectionAborted, Outbox
from .pipeline import Pipeline
from .quotas import connection_throttled
from .reader import Reader
from .shared_lane import SharedLane
from .transport import SocketTransport, TlsTransport, Transport

log = logging.getLogger("trafka.server")


async def handle_connection(
    stream: trio.SocketStream,
    listener: Listener,
    ctx: BrokerContext,
    limits: ServerLimits,
    pipeline: Pipeline | None = None,
    lane: SharedLane | None = None,
) -> None:
    """Serve one client connection; `lane` is the Produce lane the server's connections share (a
    connection served alone gets one of its own)."""
    peer = peer_name(stream)
    if await connection_throttled(ctx, stream, peer.rsplit(":", 1)[0]):  # KIP-612, per IP
        return
    if pipeline is None:
        pipeline = Pipeline(ctx.registry, ctx.services.authorization, ctx.faults, ctx.services.cluster)
    if lane is None:
        lane = shared_lane(ctx)
    if ctx.services.cluster is not None and not ctx.services.cluster.accepts(
        listener.name
    ):  # a stopped simulated broker
        await stream.aclose()
        return
    parked: set[Operation] = set()  # this connection's parked requests, forgotten when it ends
    with trio.CancelScope() as connection:  # cancelled by `Faults.drop_connections`
        ctx.faults.connection_opened(connection, listener.name)
        ctx.services.observer.connection_opened(listener.name)
        try:
            transport: Transport = SocketTransport(stream)
            closing: trio.abc.AsyncResource = stream
            principal = ANONYMOUS
            if listener.security_protocol.uses_tls:
                tls = ctx.tls.get(listener.name)
                if tls is None:  # never plaintext on a TLS listener
                    log.error("closing connection from %s: listener %s has no TLS context", peer, listener.name)
                    await stream.aclose()
                    return
                # TLS and its principal mapping are loaded with the first TLS listener's connection (issue 39)
                from trafka.domain.security.ssl_mapping import NoMatchingRule

                from .tls import accept_tls, tls_principal

                secured = await accept_tls(stream, tls, peer)
                if secured is None:
                    await stream.aclose()
                    return
                try:
                    principal = tls_principal(secured, tls.principal_mapper)
                except NoMatchingRule as exc:  # Kafka: the SSL authentication fails
                    log.info("closing connection from %s: %s", peer, exc)
                    await secured.aclose()
                    return
                transport, closing = TlsTransport(secured), secured
            outbox = Outbox(transport, limits.max_inflight_requests, limits.max_queued_response_bytes)
            async with closing, trio.open_nursery() as nursery:
                reader = Reader(ctx, pipeline, limits, transport, outbox, nursery, listener, peer, principal, lane)
                reader.connection = connection
                reader.parked = parked
                try:
                    with trio.CancelScope() as reading:
                        nursery.start_soon(_cancel_on, ctx.shutting_down, reading)
                        if limits.connections.max_idle_ms >= 0:
                            nursery.start_soon(_close_when_idle, ctx, reader, reading, limits.connections.max_idle_ms)
                        await reader.read_requests()
                    # Reading is over: what is queued is still written (deferred responses included).
                    await outbox.drain()
                    nursery.cancel_scope.cancel()
                finally:  # before the socket closes: a turn's leader writes to this connection no more
                    reader.ended = True
        except* (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionAborted):
            log.debug("connection %s closed", peer)
        finally:
            for op in parked:
                ctx.services.appends.forget(op)
            ctx.faults.connection_closed(connection, listener.name)
            ctx.services.observer.connection_closed(listener.name)
            if (share := ctx.services.share_built) is not None:  # KIP-932: its share sessions close
                share.connection_closed(connection)


async def _close_when_idle(ctx: BrokerContext, reader: Reader, reading: trio.CancelScope, idle_ms: int) -> None:
    """connections.max.idle.ms: stop reading once nothing arrived for that long and no response is
    still to come (checked every quarter of it, so the connection closes within 1.25 times it). Idle
    time is the broker's clock: with a manual clock it passes only by `advance`, checked at once."""
    busy_at = ctx.services.clock_ms()  # when a response was last seen still to come
    while True:
        await ctx.clock_signal.wait(idle_ms / 4000)
        now = ctx.services.clock_ms()
        if reader.outbox.pending:
            busy_at = now
        elif now - max(busy_at, reader.read_at_ms) >= idle_ms:
            log.debug("closing connection from %s: idle for more than %d ms", reader.peer, idle_ms)
            reading.cancel()
            return


async def _cancel_on(event: trio.Event, scope: trio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


def shared_lane(ctx: BrokerContext) -> SharedLane | None:
    """The lane every connection of the server shares; none on a simulated cluster, whose requests
    go through the cluster's checks."""
    if ctx.services.cluster is not None:
        return None
    api = ctx.registry.with_lane()
    return SharedLane(ctx, api) if api is not None else None


def peer_name(stream: trio.SocketStream) -> str:
    try:
        host, port = stream.socket.getpeername()[:2]
        return f"{host}:{port}"
    except OSError:
        return "?"
