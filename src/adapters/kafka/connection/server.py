"""The Trio TCP server: a supervision tree of nurseries speaking Kafka's protocol.

    serve ── accept loop per listener socket (Kafka's `listeners`: each a name, a security protocol,
          │  an address, and the address it advertises)
          └─ connection nursery ── one task per connection: TLS handshake first on SSL/SASL_SSL
                                   listeners (tls.py), SASL before any other request on SASL_*
                                   listeners (authentication.py), then
                                   ├─ the reader: bytes → frames → decode → handler → outbox
                                   └─ deferred handlers (long-poll Fetch) in their own tasks

A connection's reader handles each request as it arrives, so side effects (appends) happen in request
order, while a response that must wait runs in its own task and later requests keep being read. The
responses leave strictly in request order through the connection's `Outbox` (responses.py): the
reader writes them itself once it has handled every complete frame it holds, a deferred response
when it completes; there is no writer task. Plain TCP reads and writes the socket directly
(transport.py: one reusable receive buffer, one `writev` per batch of responses, no scheduler round
trip for a read that finds data). The outbox is bounded (`max_inflight_requests`, response bytes),
so a client that pipelines without reading its responses stops being read. One-partition Produce
requests (acks 1 or -1) take a lane (ADR 29): the consecutive ones the reader holds are decoded into
tuples and answered together, one log write per partition, with the same answers and effects as the
general path (`answer_one_partition`); not with authorization rules, active faults or, beyond the
first, on a SASL connection. With several connections producing, the groups their readers gather in
one scheduler pass are answered in one call (`shared_lane.py`, ADR 105). A request an interceptor
delays (`Held`) is parked in the purgatory until its deadline while the reader waits (ADR 106). A
frame is size-checked before its body is buffered. A malformed frame, unknown API key or unsupported version is logged
once and closes that connection; the server goes on.

The server's accept side is here; one connection's life (TLS, SASL, idle expiry, the end) is
`session.py`, its reader loop `reader.py`, and the requests that wait (deferred, held) `waiting.py`.

Shutdown: `ctx.shutting_down` stops the accept loops and every reader; queued responses are still
written (waiting fetches wake and answer at once), then connections close, bounded by a grace period.
"""

from __future__ import annotations

from collections.abc import Sequence

import trio

from trafka.domain.listeners import Listener
from trafka.domain.security.acls import kafka_host

from ..context import BrokerContext
from .admission import Admission, Backlog
from .limits import ServerLimits
from .pipeline import Pipeline
from .session import handle_connection, peer_name, shared_lane
from .shared_lane import SharedLane

# Connections the accept loop takes from a listener's backlog per turn (admission.py).
ACCEPTED_PER_TURN = 64


async def serve(
    ctx: BrokerContext,
    listeners: Sequence[Listener],
    limits: ServerLimits = ServerLimits(),
    *,
    task_status: trio.TaskStatus[tuple[Listener, ...]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Listen on every listener until `ctx.shutting_down` is set; report them bound once accepting.
    The broker's background services (the group and share runtimes, the purgatory's timer) run beside
    it, started by the app's supervisor (`app/wiring/runtime.py`), not here.

    A listener with port 0 gets a free port; the reported listeners carry the bound ports (and an
    advertised port of 0 becomes the bound one). An empty host binds every interface.
    """
    sockets: list[tuple[trio.SocketListener, Listener]] = []
    bound: list[Listener] = []
    try:
        for listener in listeners:
            host = listener.host.encode() if listener.host.isascii() else listener.host  # no IDNA codec (ADR 118)
            opened = await trio.open_tcp_listeners(listener.port, host=host or None)
            bound.append(bound_listener := listener.advertise(opened[0].socket.getsockname()[1]))
            sockets.extend((socket, bound_listener) for socket in opened)
    except BaseException:
        for socket, _ in sockets:
            await socket.aclose()
        raise
    ctx.listening.bound(tuple(bound))
    async with trio.open_nursery() as connections:
        async with trio.open_nursery() as accepting:
            pipeline = Pipeline(ctx.registry, ctx.services.authorization, ctx.faults, ctx.services.cluster)
            admission = Admission(limits.connections)
            lane = shared_lane(ctx)
            for socket, listener in sockets:
                accepting.start_soon(
                    _accept_loop, socket, listener, connections, ctx, limits, pipeline, admission, lane
                )
            task_status.started(tuple(bound))
            await ctx.shutting_down.wait()
            accepting.cancel_scope.cancel()
        for socket, _ in sockets:
            await socket.aclose()
        ctx.services.appends.notify_all()
        ctx.services.groups.shutdown()
        connections.cancel_scope.deadline = trio.current_time() + limits.shutdown_grace_seconds


async def _accept_loop(
    socket: trio.SocketListener,
    listener: Listener,
    connections: trio.Nursery,
    ctx: BrokerContext,
    limits: ServerLimits,
    pipeline: Pipeline,
    admission: Admission,
    lane: SharedLane | None,
) -> None:
    backlog = Backlog(socket)
    try:
        while True:
            await admission.wait_for_slot()  # max.connections: the next client waits in the backlog
            try:
                stream = await socket.accept()
            except OSError as exc:  # EMFILE and friends: said once, then back off instead of spinning
                admission.accept_failed(listener.name, exc)
                await trio.sleep(0.1)
                continue
            _start(stream, listener, connections, ctx, limits, pipeline, admission, lane)
            for waiting in backlog.waiting(admission, ACCEPTED_PER_TURN - 1):  # the others, in this turn
                _start(waiting, listener, connections, ctx, limits, pipeline, admission, lane)
            if backlog.empty:
                admission.caught_up(listener.name)
    finally:
        backlog.close()


def _start(
    stream: trio.SocketStream,
    listener: Listener,
    connections: trio.Nursery,
    ctx: BrokerContext,
    limits: ServerLimits,
    pipeline: Pipeline,
    admission: Admission,
    lane: SharedLane | None,
) -> None:
    host = kafka_host(peer_name(stream).rsplit(":", 1)[0])
    if not admission.admit(host):  # max.connections.per.ip
        stream.socket.close()
        return
    connections.start_soon(_admitted, admission, host, stream, listener, ctx, limits, pipeline, lane)


async def _admitted(
    admission: Admission,
    host: str,
    stream: trio.SocketStream,
    listener: Listener,
    ctx: BrokerContext,
    limits: ServerLimits,
    pipeline: Pipeline,
    lane: SharedLane | None,
) -> None:
    try:
        await handle_connection(stream, listener, ctx, limits, pipeline, lane)
    finally:
        admission.release(host)
