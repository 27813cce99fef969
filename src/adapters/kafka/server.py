"""The Trio TCP server: a supervision tree of nurseries speaking Kafka's protocol.

    serve ── accept loop per listener socket (Kafka's `listeners`: each a name, a security protocol,
          │  an address, and the address it advertises)
          └─ connection nursery ── one task per connection: TLS handshake first on SSL/SASL_SSL
                                   listeners (tls.py), SASL before any other request on SASL_*
                                   listeners (authentication.py), then
                                   ├─ reader: frames → decode → handler → ordered slots
                                   ├─ writer: slots → bytes, strictly in request order
                                   └─ deferred handlers (long-poll Fetch) in their own tasks

A connection's reader handles each request as it arrives, so side effects (appends) happen in request
order, while a response that must wait runs in its own task and later requests keep being read. The
slot channel is bounded (`max_inflight_requests`), so a client that pipelines without reading its
responses stops being read. A frame is size-checked before its body is buffered. A malformed frame,
unknown API key or unsupported version is logged once and closes that connection; the server goes on.

Shutdown: `ctx.shutting_down` stops the accept loops and every reader; queued responses are still
written (waiting fetches wake and answer at once), then connections close, bounded by a grace period.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence

import attrs
import trio

from kafka.protocol.metadata import ApiVersionsRequest

from trafka.domain.listeners import Listener
from trafka.domain.security import ANONYMOUS, KafkaPrincipal

from .authentication import Failed, Reply
from .codec import DecodedRequest, ProtocolError, UnsupportedVersion, decode_request, encode_response
from .context import BrokerContext, ClientInfo, Endpoint
from .framing import FrameError, FrameReader
from .handlers.api_versions import unsupported_version_response
from .registry import NO_RESPONSE, CloseConnection, Deferred
from .tls import accept_tls, tls_principal

log = logging.getLogger("trafka.server")

RECEIVE_CHUNK = 256 * 1024


@attrs.frozen
class ServerLimits:
    max_request_bytes: int = 100 * 1024 * 1024
    max_inflight_requests: int = 32
    max_queued_response_bytes: int = 64 * 1024 * 1024
    shutdown_grace_seconds: float = 10.0


class _ResponseBudget:
    """Bytes of responses a connection has waiting to be written.

    The reader handles no further request while the budget is used up, so a client that pipelines
    large fetches without reading cannot make the broker hold more than about one response over it.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.queued = 0
        self._room = trio.Event()

    def add(self, size: int) -> None:
        self.queued += size

    def release(self, size: int) -> None:
        self.queued -= size
        if self.queued < self.limit:
            self._room.set()

    async def wait_for_room(self) -> None:
        while self.queued >= self.limit:
            self._room = trio.Event()
            await self._room.wait()


@attrs.define
class _Slot:
    """One response position on a connection, filled now or by a deferred task."""

    budget: _ResponseBudget
    data: bytes | None = None
    done: trio.Event = attrs.field(factory=trio.Event)

    def fill(self, data: bytes | None) -> None:
        self.data = data
        if data is not None:
            self.budget.add(len(data))
        self.done.set()

    def filled(self, data: bytes) -> _Slot:
        self.fill(data)
        return self


async def serve(
    ctx: BrokerContext,
    listeners: Sequence[Listener],
    limits: ServerLimits = ServerLimits(),
    *,
    task_status: trio.TaskStatus[tuple[Listener, ...]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Listen on every listener until `ctx.shutting_down` is set; report them bound once accepting.

    A listener with port 0 gets a free port; the reported listeners carry the bound ports (and an
    advertised port of 0 becomes the bound one). An empty host binds every interface.
    """
    sockets: list[tuple[trio.SocketListener, Listener]] = []
    bound: list[Listener] = []
    try:
        for listener in listeners:
            opened = await trio.open_tcp_listeners(listener.port, host=listener.host or None)
            bound_listener = listener.advertise(opened[0].socket.getsockname()[1])
            bound.append(bound_listener)
            sockets.extend((socket, bound_listener) for socket in opened)
    except BaseException:
        for socket, _ in sockets:
            await socket.aclose()
        raise
    ctx.listeners = tuple(bound)
    async with trio.open_nursery() as background:
        background.start_soon(ctx.groups.run)
        async with trio.open_nursery() as connections:
            async with trio.open_nursery() as accepting:
                for socket, listener in sockets:
                    accepting.start_soon(_accept_loop, socket, listener, connections, ctx, limits)
                task_status.started(tuple(bound))
                await ctx.shutting_down.wait()
                accepting.cancel_scope.cancel()
            for socket, _ in sockets:
                await socket.aclose()
            ctx.appends.notify_all()
            ctx.groups.shutdown()
            connections.cancel_scope.deadline = trio.current_time() + limits.shutdown_grace_seconds
        background.cancel_scope.cancel()


async def _accept_loop(
    socket: trio.SocketListener, listener: Listener, connections: trio.Nursery, ctx: BrokerContext,
    limits: ServerLimits,
) -> None:
    while True:
        try:
            stream = await socket.accept()
        except OSError as exc:  # EMFILE and friends: back off instead of spinning
            log.warning("accept failed: %s", exc)
            await trio.sleep(0.1)
            continue
        connections.start_soon(handle_connection, stream, listener, ctx, limits)


class _ConnectionAborted(Exception):
    """A handler failed; the connection ends after the responses before it."""


async def handle_connection(
    stream: trio.SocketStream, listener: Listener, ctx: BrokerContext, limits: ServerLimits
) -> None:
    peer = _peer_name(stream)
    send_slots, receive_slots = trio.open_memory_channel[_Slot](limits.max_inflight_requests)
    budget = _ResponseBudget(limits.max_queued_response_bytes)
    with trio.CancelScope() as connection:  # cancelled by `Faults.drop_connections`
        ctx.faults.connection_opened(connection)
        ctx.observer.connection_opened(listener.name)
        try:
            transport: trio.abc.Stream = stream
            principal = ANONYMOUS
            if listener.security_protocol.uses_tls:
                tls = ctx.tls.get(listener.name)
                if tls is None:  # never plaintext on a TLS listener
                    log.error("closing connection from %s: listener %s has no TLS context", peer, listener.name)
                    await stream.aclose()
                    return
                secured = await accept_tls(stream, tls, peer)
                if secured is None:
                    await stream.aclose()
                    return
                transport, principal = secured, tls_principal(secured)
            async with transport, trio.open_nursery() as nursery:
                nursery.start_soon(_write_responses, transport, receive_slots, budget)
                async with send_slots, trio.open_nursery() as reading:
                    reading.start_soon(_cancel_on, ctx.shutting_down, reading.cancel_scope)
                    connection_info = _Connection(listener, peer, principal)
                    await _read_requests(transport, connection_info, send_slots, nursery, ctx, limits, budget)
                    reading.cancel_scope.cancel()
                # The slot channel is closed: the writer drains what is queued, then the nursery ends.
        except* (trio.BrokenResourceError, trio.ClosedResourceError, _ConnectionAborted):
            log.debug("connection %s closed", peer)
        finally:
            ctx.faults.connection_closed(connection)
            ctx.observer.connection_closed(listener.name)


@attrs.frozen
class _Connection:
    """Where a connection came in and who is on it before any SASL exchange (a TLS client certificate)."""

    listener: Listener
    peer: str
    principal: KafkaPrincipal


async def _cancel_on(event: trio.Event, scope: trio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


def _peer_name(stream: trio.SocketStream) -> str:
    try:
        host, port = stream.socket.getpeername()[:2]
        return f"{host}:{port}"
    except OSError:
        return "?"


async def _read_requests(
    stream: trio.abc.Stream,
    connection: _Connection,
    slots: trio.MemorySendChannel[_Slot],
    nursery: trio.Nursery,
    ctx: BrokerContext,
    limits: ServerLimits,
    budget: _ResponseBudget,
) -> None:
    frames = FrameReader(limits.max_request_bytes)
    listener, peer, principal = connection.listener, connection.peer, connection.principal
    peer_host = peer.rsplit(":", 1)[0]
    advertised = Endpoint(listener.advertised_host, listener.advertised_port)
    authenticator = (
        ctx.authentication.authenticator(listener.name, ctx.registry) if listener.security_protocol.uses_sasl else None
    )
    while True:
        try:
            frame = frames.next_frame()
        except FrameError as exc:
            log.warning("closing connection from %s: %s", peer, exc)
            return
        if frame is None:
            data = await stream.receive_some(max(RECEIVE_CHUNK, min(frames.wanted(), limits.max_request_bytes)))
            if not data:
                if frames.buffered:
                    log.warning("closing connection from %s: truncated frame at end of stream", peer)
                return
            frames.feed(data)
            continue
        await budget.wait_for_room()
        if authenticator is not None and authenticator.expired(ctx.clock_ms()):
            log.info("closing connection from %s: SASL session of %s expired without re-authentication", peer, principal)
            return
        if authenticator is not None and authenticator.intercepts(frame):
            step = authenticator.receive(frame, ctx.clock_ms())
            if isinstance(step, Failed):
                log.info("closing connection from %s: %s", peer, step.reason)
                if step.delayed:
                    await trio.sleep(ctx.authentication.failed_authentication_delay_ms / 1000)
                if step.response is not None:
                    await _queue(slots, _Slot(budget).filled(step.response))
                return
            if authenticator.complete and isinstance(step, Reply):
                principal = authenticator.principal or ANONYMOUS
                again = "re-" if authenticator.completions > 1 else ""
                log.debug("connection from %s %sauthenticated as %s", peer, again, principal)
            if isinstance(step, Reply):
                await _queue(slots, _Slot(budget).filled(step.response))
                continue
        try:
            request = decode_request(frame, ctx.registry)
        except UnsupportedVersion as unsupported:
            if unsupported.api_key != ApiVersionsRequest.API_KEY:
                log.warning(
                    "closing connection from %s: unsupported version %d of API key %d",
                    peer, unsupported.api_version, unsupported.api_key,
                )
                return
            slot = _Slot(budget)
            slot.fill(encode_response(unsupported_version_response(), 0, unsupported.correlation_id))
            await _queue(slots, slot)
            continue
        except ProtocolError as exc:
            log.warning("closing connection from %s: %s", peer, exc)
            log.debug("the frame began %s", frame[:256].hex())
            return
        try:
            client = ClientInfo(request.client_id or "", peer_host, listener.name, advertised, principal)
            started = trio.current_time()
            handler = request.handler
            if ctx.authorization is not None:  # every API through the authorization table first
                handler = attrs.evolve(handler, handle=functools.partial(ctx.authorization.handle, request.handler))
            if ctx.faults.active:
                if ctx.faults.paused:
                    await ctx.faults.wait_resumed()
                outcome = ctx.faults.handle(handler, ctx, request.body, request.api_version, client)
            else:
                outcome = handler.handle(ctx, request.body, request.api_version, client)
        except CloseConnection as exc:
            log.info("closing connection from %s: %s", peer, exc)
            return
        except Exception:
            log.exception("closing connection from %s: %s v%d failed", peer, request.handler.name, request.api_version)
            return
        if outcome is NO_RESPONSE:
            _observe(ctx, request, started)
            continue
        slot = _Slot(budget)
        if isinstance(outcome, Deferred):
            nursery.start_soon(_complete_deferred, slot, outcome.wait, request, peer, ctx, started)
        else:
            slot.fill(_encode(outcome, request, peer))
            _observe(ctx, request, started)
        await _queue(slots, slot)


async def _queue(slots: trio.MemorySendChannel[_Slot], slot: _Slot) -> None:
    """Queue a response slot without yielding while there is room.

    Every complete frame already buffered is handled before the writer runs, so pipelined responses
    leave in one write; when the channel is full the reader waits (backpressure).
    """
    try:
        slots.send_nowait(slot)
    except trio.WouldBlock:
        await slots.send(slot)


async def _complete_deferred(
    slot: _Slot, wait: Callable, request: DecodedRequest, peer: str, ctx: BrokerContext, started: float
) -> None:
    try:
        response = await wait()
    except Exception:
        log.exception("%s v%d from %s failed", request.handler.name, request.api_version, peer)
        slot.fill(None)
        return
    slot.fill(_encode(response, request, peer))
    _observe(ctx, request, started)


def _observe(ctx: BrokerContext, request: DecodedRequest, started: float) -> None:
    ctx.observer.request_completed(request.handler.name, request.api_version, trio.current_time() - started)


def _encode(response: object, request: DecodedRequest, peer: str) -> bytes | None:
    try:
        return encode_response(response, request.api_version, request.correlation_id)
    except Exception:
        log.exception("cannot encode %s v%d response for %s", request.handler.name, request.api_version, peer)
        return None


async def _write_responses(
    stream: trio.abc.Stream, slots: trio.MemoryReceiveChannel[_Slot], budget: _ResponseBudget
) -> None:
    """Write each slot's bytes in order; a slot with no bytes (a handler failure) ends the connection."""

    async def send(pending: list[bytes]) -> None:
        if pending:
            await stream.send_all(b"".join(pending))
            budget.release(sum(map(len, pending)))

    async with slots:
        async for slot in slots:
            await slot.done.wait()
            if slot.data is None:
                raise _ConnectionAborted
            pending = [slot.data]
            # Coalesce responses that are already complete into one write.
            while True:
                try:
                    nxt = slots.receive_nowait()
                except (trio.WouldBlock, trio.EndOfChannel):
                    break
                if not nxt.done.is_set():
                    await send(pending)
                    pending = []
                    await nxt.done.wait()
                if nxt.data is None:
                    await send(pending)
                    raise _ConnectionAborted
                pending.append(nxt.data)
            await send(pending)
