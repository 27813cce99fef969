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

Shutdown: `ctx.shutting_down` stops the accept loops and every reader; queued responses are still
written (waiting fetches wake and answer at once), then connections close, bounded by a grace period.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from time import perf_counter

import attrs
import trio

from trafka.domain.listeners import Listener
from trafka.domain.security import ANONYMOUS, KafkaPrincipal
from trafka.domain.security.acls import kafka_host
from trafka.domain.security.ssl_mapping import NoMatchingRule

from ..api import (
    NO_RESPONSE,
    CloseConnection,
    Deferred,
    HandlerRegistry,
    Held,
    KafkaApi,
    Parked,
    never,
)
from ..context import BrokerContext
from ..request_context import Endpoint
from ..runtime.purgatory import Failed, Operation
from ..wire.codec import (
    DecodedRequest,
    ProtocolError,
    UnsupportedVersion,
    decode_request,
    encode_response_pieces,
)
from .admission import Admission, Backlog, ConnectionLimits
from .core import Answer, Close, ConnectionCore, DecodeOffLoop, LaneGroup
from .outbox import ConnectionAborted, Outbox, Slot
from .pipeline import Pipeline
from .quotas import Throttled, connection_throttled
from .shared_lane import SharedLane, Turn
from .tls import accept_tls, tls_principal
from .transport import SocketTransport, TlsTransport, Transport

log = logging.getLogger("trafka.server")

# Connections the accept loop takes from a listener's backlog per turn (admission.py).
ACCEPTED_PER_TURN = 64


@attrs.frozen
class ServerLimits:
    max_request_bytes: int = 100 * 1024 * 1024
    max_inflight_requests: int = 32
    max_queued_response_bytes: int = 64 * 1024 * 1024
    shutdown_grace_seconds: float = 10.0
    connections: ConnectionLimits = ConnectionLimits()


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
            admission.accepted(listener.name)
            _start(stream, listener, connections, ctx, limits, pipeline, admission, lane)
            for waiting in backlog.waiting(admission, ACCEPTED_PER_TURN - 1):  # the others, in this turn
                _start(waiting, listener, connections, ctx, limits, pipeline, admission, lane)
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
    host = kafka_host(_peer_name(stream).rsplit(":", 1)[0])
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
    peer = _peer_name(stream)
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
                reader = _Reader(ctx, pipeline, limits, transport, outbox, nursery, listener, peer, principal, lane)
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


async def _close_when_idle(ctx: BrokerContext, reader: _Reader, reading: trio.CancelScope, idle_ms: int) -> None:
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


def _peer_name(stream: trio.SocketStream) -> str:
    try:
        host, port = stream.socket.getpeername()[:2]
        return f"{host}:{port}"
    except OSError:
        return "?"


_DECODE_LIMITER = trio.CapacityLimiter(1)  # large frames decoded off the loop, one at a time (ADR 78)


def _try_decode(frame: bytes, registry: HandlerRegistry) -> DecodedRequest | Exception:
    try:
        return decode_request(frame, registry)
    except (UnsupportedVersion, ProtocolError) as exc:
        return exc


_CLOSE = object()  # a step's verdict: close the connection
_NEXT = object()  # a step's verdict: the frame is answered, read the next one


class _Reader:
    """One connection's Trio loop around its sans-I/O core (`core.py`): bytes from the transport into
    the core, each frame's action carried out (served through the API's pipeline, answered in the
    lane, queued, or the connection closed), responses into the outbox. Only the waits are here: room
    in the outbox, a mute, a paused broker, a delayed (`Held`) request, a worker thread's decode.
    """

    def __init__(
        self,
        ctx: BrokerContext,
        pipeline: Pipeline,
        limits: ServerLimits,
        transport: Transport,
        outbox: Outbox,
        nursery: trio.Nursery,
        listener: Listener,
        peer: str,
        principal: KafkaPrincipal,
        lane: SharedLane | None = None,
    ) -> None:
        self.ctx, self.pipeline, self.limits = ctx, pipeline, limits
        self.transport, self.outbox, self.nursery = transport, outbox, nursery
        self.peer = peer
        lane_api = lane.api if lane is not None else None
        self.core = ConnectionCore(
            ctx.registry,
            limits.max_request_bytes,
            peer,
            kafka_host(peer.rsplit(":", 1)[0]),  # as Kafka renders it, for ACLs and group members
            listener.name,
            Endpoint(listener.advertised_host, listener.advertised_port),
            principal,
            ctx.authentication.authenticator(listener.name, ctx.registry)
            if listener.security_protocol.uses_sasl
            else None,
            ctx.authentication.max_receive_size,
            ctx.authentication.failed_authentication_delay_ms,
            lane_api.lane.decode if lane_api is not None and lane_api.lane is not None else None,
        )
        self.lane = lane  # the Produce lane, shared with the server's other connections
        self.ended = False  # the connection is closing: nothing more is written to it from elsewhere
        self.read_at_ms = ctx.services.clock_ms()  # the broker's time of the last read that brought bytes (idle expiry)
        self.parked: set[Operation] = set()  # requests waiting in the purgatory

    @property
    def connection(self) -> object:
        return self.core.connection

    @connection.setter
    def connection(self, identity: object) -> None:
        self.core.connection = identity

    async def read_requests(self) -> None:
        ctx, core, outbox = self.ctx, self.core, self.outbox
        frames = core.frames
        shared = self.lane
        lane_api = shared.api if shared is not None else None
        lane_closed = lane_api.lane.closed_by if lane_api is not None and lane_api.lane is not None else never
        quotas = ctx.services.quotas.quotas
        appends = ctx.services.appends
        woken = appends.woken
        while True:
            frame = core.next_frame()
            if frame is None:  # every buffered request handled: their responses leave in one write
                if appends.woken != woken:
                    # These requests woke parked fetches: let them answer first (two scheduler passes:
                    # Trio may run the woken tasks after this one within a pass), so new records reach
                    # consumers one write earlier and the producers' answers follow (ADR 58).
                    await trio.lowlevel.cancel_shielded_checkpoint()
                    await trio.lowlevel.cancel_shielded_checkpoint()
                await outbox.flush()
                if not await self.transport.receive_into(frames, min(frames.wanted(), self.limits.max_request_bytes)):
                    if frames.buffered:
                        log.warning("closing connection from %s: truncated frame at end of stream", self.peer)
                    return
                woken = appends.woken
                self.read_at_ms = ctx.services.clock_ms()
                continue
            if isinstance(frame, Close):
                return
            if outbox.full:
                await outbox.wait_for_room()
            if core.muted_until:
                await self._wait_unmuted()
            action = core.handle(
                frame,
                ctx.services.clock_ms() if core.authenticator is not None else 0,
                lane_api is not None
                and ctx.services.authorization is None
                and (
                    not ctx.faults.active or (not ctx.faults.paused and lane_api.api_key not in ctx.faults.intercepted)
                )
                and not lane_closed(quotas),
                outbox.room,
            )
            if isinstance(action, LaneGroup):
                assert shared is not None and lane_api is not None  # a lane group comes from the lane
                verdict = self._lane(action, lane_api)
                if verdict is _CLOSE:
                    return
                if isinstance(verdict, Turn):
                    await shared.lead(verdict)
                continue
            if isinstance(action, DecodeOffLoop):
                attempt = await trio.to_thread.run_sync(_try_decode, frame, ctx.registry, limiter=_DECODE_LIMITER)
                action = core.decoded(frame, attempt)
            if isinstance(action, Answer):
                outbox.add([action.data])
                continue
            if isinstance(action, Close):
                if action.delay_s:  # a failed authentication, answered late (Kafka's delay)
                    await trio.sleep(action.delay_s)
                if action.response is not None:
                    outbox.add([action.response])
                return
            request = action
            if shared is not None:
                turn = shared.open_turn(self)
                if turn is not None:  # its lane requests take effect before anything sent after them
                    await turn.wait_answered()
            if ctx.faults.active and ctx.faults.paused:  # read, and answered once resumed
                await ctx.faults.wait_resumed()
            verdict = self._serve(request)
            if verdict is _CLOSE:
                return
            if isinstance(verdict, Held) and await self._hold(verdict, request) is _CLOSE:
                return

    def mute(self, throttle_ms: int) -> None:
        """Serve no further request for `throttle_ms` (a client quota's throttle, KIP-219)."""
        self.core.mute(throttle_ms, trio.current_time())

    async def _wait_unmuted(self) -> None:
        await self.outbox.flush()  # the throttled response leaves at once
        await trio.sleep_until(self.core.muted_until)
        self.core.muted_until = 0.0

    def _lane(self, group: LaneGroup, lane_api: KafkaApi) -> object | None:
        """The lane's step: the group answered at once, or in the shared lane's turn (a `Turn`
        returned: this reader opened it and must lead it)."""
        shared = self.lane
        assert shared is not None
        outbox = self.outbox
        if shared.gathers(self):
            return shared.join(self, group, [outbox.slot() for _ in group]) or _NEXT
        started = perf_counter()
        try:
            responses = shared.answer_now(self, group)
        except Exception:
            log.exception("closing connection from %s: %s v%d failed", self.peer, lane_api.name, group[0].version)
            return _CLOSE
        elapsed = perf_counter() - started  # each response was ready when the group's were
        observer = self.ctx.services.observer
        for request, response in zip(group, responses):
            outbox.add([response])
            observer.request_completed(lane_api.name, request.version, elapsed)
        return _NEXT

    def answered_elsewhere(self) -> None:
        """A turn's leader filled this connection's slots: what the socket takes now is written, the
        rest by a task (TLS: all of it)."""
        if self.ended:
            return
        outbox = self.outbox
        outbox.flush_nowait()
        if outbox.head_ready:
            self.nursery.start_soon(outbox.flush)

    def _serve(self, request: DecodedRequest) -> object | None:
        """The pipeline's step: the request served through its API's faults, authorization and handler.
        A `Held` outcome is returned for the reader to wait for."""
        ctx, peer = self.ctx, self.peer
        try:
            client = self.core.client(request.client_id)
            started = perf_counter()
            api_key = request.handler.api_key
            pipeline = self.pipeline
            if ctx.faults.active:
                serve = pipeline.faulted[api_key]
            else:
                serve = (pipeline.throttled if ctx.services.quotas.quotas.throttles_requests else pipeline.plain)[
                    api_key
                ]
            outcome = serve(ctx, request.body, request.api_version, client)
            if type(outcome) is Throttled:
                self.mute(outcome.throttle_ms)
                outcome = outcome.response
        except CloseConnection as exc:
            log.info("closing connection from %s: %s", peer, exc)
            return _CLOSE
        except Exception:
            log.exception("closing connection from %s: %s v%d failed", peer, request.handler.name, request.api_version)
            return _CLOSE
        return self._deliver(request, outcome, started)

    def _deliver(self, request: DecodedRequest, outcome: object, started: float) -> object | None:
        ctx, peer = self.ctx, self.peer
        if outcome is NO_RESPONSE:
            _observe(ctx, request, started)
            return None
        outbox = self.outbox
        if type(outcome) is Parked:  # answered by whichever task completes it (ADR 80)
            self._park(outcome, outbox.slot(), request, started)
            return None
        if isinstance(outcome, Deferred):
            if isinstance(outcome, Held):
                return outcome
            slot = outbox.slot()
            self.nursery.start_soon(
                _complete_deferred, outbox, slot, outcome.wait, request, peer, ctx, started, self.mute
            )
        else:
            outbox.add(_encode(outcome, request, peer))
            ctx.services.observer.request_completed(request.handler.name, request.api_version, perf_counter() - started)
        return None

    def _park(self, parked: Parked, slot: Slot, request: DecodedRequest, started: float) -> None:
        """Hand a waiting request to the purgatory with the function that answers it into `slot`, from
        whichever task completes it: an append's, the group runtime's, or the purgatory's timer."""
        parked_ops, outbox, peer, ctx, nursery = self.parked, self.outbox, self.peer, self.ctx, self.nursery
        op: Operation

        def deliver(answer: object) -> None:
            parked_ops.discard(op)
            if self.ended:  # closing: the socket is (about to be) closed
                return
            if type(answer) is Failed:
                error = answer.error
                log.error(
                    "%s v%d from %s failed",
                    request.handler.name,
                    request.api_version,
                    peer,
                    exc_info=(type(error), error, error.__traceback__),
                )
                slot.fill(None)
            else:
                if type(answer) is Throttled:
                    self.mute(answer.throttle_ms)
                    answer = answer.response
                slot.fill(_encode(answer, request, peer))
                _observe(ctx, request, started)
            outbox.flush_nowait()
            if outbox.head_ready:  # what the socket did not take now (or TLS): written by a task
                nursery.start_soon(outbox.flush)

        op = ctx.services.appends.park(parked, deliver)
        parked_ops.add(op)

    async def _hold(self, held: Held, request: DecodedRequest) -> object | None:
        """A delayed request: earlier answers leave, nothing more is read, and then it is served.

        The delay is parked in the purgatory like any waiting request (no keys: only its deadline
        completes it), whose timer calls `then()` when it expires; the reader waits for that answer
        and delivers it as a handler's outcome. A connection that closes meanwhile forgets it."""
        started = perf_counter()
        await self.outbox.flush()
        then = held.then
        answered = trio.Event()
        answers: list[object] = []

        def complete(expired: bool) -> object | None:
            return _Served(then()) if expired else None  # a notify of every key (shutdown) does not serve it

        def deliver(answer: object) -> None:
            self.parked.discard(op)
            answers.append(answer)
            answered.set()

        op = self.ctx.services.appends.park(Parked((), held.seconds * 1000, complete), deliver)
        self.parked.add(op)
        await answered.wait()
        answer = answers[0]
        if type(answer) is Failed:
            error = answer.error
            if isinstance(error, CloseConnection):
                log.info("closing connection from %s: %s", self.peer, error)
            else:
                log.error(
                    "closing connection from %s: %s v%d failed",
                    self.peer,
                    request.handler.name,
                    request.api_version,
                    exc_info=(type(error), error, error.__traceback__),
                )
            return _CLOSE
        assert type(answer) is _Served
        outcome = answer.outcome
        if isinstance(outcome, Held):  # a delay cannot return another one, but stay total
            return await self._hold(outcome, request)
        verdict = self._deliver(request, outcome, started)
        await self.outbox.flush()
        return verdict


class _Served:
    """What a held request's `then()` gave, once its delay expired (any outcome, `NO_RESPONSE` too)."""

    __slots__ = ("outcome",)

    def __init__(self, outcome: object) -> None:
        self.outcome = outcome


async def _complete_deferred(
    outbox: Outbox,
    slot: Slot,
    wait: Callable,
    request: DecodedRequest,
    peer: str,
    ctx: BrokerContext,
    started: float,
    mute: Callable[[int], None],
) -> None:
    try:
        response = await wait()
        if type(response) is Throttled:
            mute(response.throttle_ms)
            response = response.response
    except Exception:
        log.exception("%s v%d from %s failed", request.handler.name, request.api_version, peer)
        slot.fill(None)
    else:
        slot.fill(_encode(response, request, peer))
        _observe(ctx, request, started)
    await outbox.flush()


def _observe(ctx: BrokerContext, request: DecodedRequest, started: float) -> None:
    ctx.services.observer.request_completed(request.handler.name, request.api_version, perf_counter() - started)


def _encode(response: object, request: DecodedRequest, peer: str) -> list[bytes] | None:
    try:
        return encode_response_pieces(response, request.api_version, request.correlation_id)
    except Exception:
        log.exception("cannot encode %s v%d response for %s", request.handler.name, request.api_version, peer)
        return None
