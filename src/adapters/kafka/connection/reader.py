"""One connection's reader: the Trio loop around its sans-I/O core (`core.py`) that reads frames,
serves each request through its API's pipeline or the Produce lane (ADR 29, 105), and puts the
answers in the connection's outbox in request order; a request that waits is parked in the
purgatory (ADR 80), deferred to a task or held (`waiting.py`).
"""

from __future__ import annotations

import logging
from time import perf_counter

import trio

from trafka.domain.listeners import Listener
from trafka.domain.security import KafkaPrincipal
from trafka.domain.security.acls import kafka_host

from ..api import NO_RESPONSE, CloseConnection, Deferred, HandlerRegistry, Held, KafkaApi, Parked, never
from ..context import BrokerContext
from ..observing import observed
from ..request_context import Endpoint
from ..runtime.purgatory import Failed, Operation
from ..wire.codec import DecodedRequest, ProtocolError, UnsupportedVersion, decode_request, encode_response_pieces
from ..wire.fast_fetch import FetchAnswer
from .core import Answer, Close, ConnectionCore, DecodeOffLoop, LaneGroup
from .limits import ServerLimits
from .outbox import Outbox, Slot
from .pipeline import Pipeline
from .quotas import Throttled
from .shared_lane import SharedLane, Turn
from .transport import Transport
from .waiting import CLOSE, complete_deferred, encode, observe, wait_held

log = logging.getLogger("trafka.server")


_DECODE_LIMITER = trio.CapacityLimiter(1)  # large frames decoded off the loop, one at a time (ADR 78)


def _try_decode(frame: bytes, registry: HandlerRegistry) -> DecodedRequest | Exception:
    try:
        return decode_request(frame, registry)
    except (UnsupportedVersion, ProtocolError) as exc:
        return exc


_NEXT = object()  # a step's verdict: the frame is answered, read the next one


class Reader:
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
        services, faults = ctx.services, ctx.faults
        quotas = services.quotas.quotas
        appends = services.appends
        woken = appends.woken
        transport, max_request_bytes = self.transport, self.limits.max_request_bytes
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
                if not await transport.receive_into(frames, max_request_bytes):
                    if frames.buffered:
                        log.warning("closing connection from %s: truncated frame at end of stream", self.peer)
                    return
                woken = appends.woken
                self.read_at_ms = services.clock_ms()
                continue
            if isinstance(frame, Close):
                return
            if outbox.full:
                await outbox.wait_for_room()
            if core.muted_until:
                await self._wait_unmuted()
            action = core.handle(
                frame,
                services.clock_ms() if core.authenticator is not None else 0,
                lane_api is not None
                and services.authorization is None
                and (not faults.active or (not faults.paused and lane_api.api_key not in faults.intercepted))
                and not lane_closed(quotas),
                outbox.room,
            )
            if isinstance(action, LaneGroup):
                assert shared is not None and lane_api is not None  # a lane group comes from the lane
                verdict = self._lane(action, lane_api)
                if verdict is CLOSE:
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
            if verdict is CLOSE:
                return
            if isinstance(verdict, Held) and await self._hold(verdict, request) is CLOSE:
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
        observer = observed(self.ctx.services.observer)
        if observer is None and len(group) == 1:  # a producer waiting for each answer (ADR 135)
            try:
                response = shared.answer_alone(self, group[0])
            except Exception:
                log.exception("closing connection from %s: %s v%d failed", self.peer, lane_api.name, group[0].version)
                return CLOSE
            outbox.add([response])
            return _NEXT
        started = perf_counter() if observer is not None else 0.0
        try:
            responses = shared.answer_now(self, group)
        except Exception:
            log.exception("closing connection from %s: %s v%d failed", self.peer, lane_api.name, group[0].version)
            return CLOSE
        if observer is None:  # nothing collects metrics: nothing timed
            for response in responses:
                outbox.add([response])
            return _NEXT
        elapsed = perf_counter() - started  # each response was ready when the group's were
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
            return CLOSE
        except Exception:
            log.exception("closing connection from %s: %s v%d failed", peer, request.handler.name, request.api_version)
            return CLOSE
        return self._deliver(request, outcome, started)

    def _deliver(self, request: DecodedRequest, outcome: object, started: float) -> object | None:
        ctx, peer = self.ctx, self.peer
        if outcome is NO_RESPONSE:
            observe(ctx, request, started)
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
                complete_deferred, outbox, slot, outcome.wait, request, peer, ctx, started, self.mute
            )
        else:
            outbox.add(encode(outcome, request, peer))
            ctx.services.observer.request_completed(request.handler.name, request.api_version, perf_counter() - started)
        return None

    def _park(self, parked: Parked, slot: Slot, request: DecodedRequest, started: float) -> None:
        """Hand a waiting request to the purgatory with what answers it into `slot` (`_Answer`), from
        whichever task completes it: an append's, the group runtime's, or the purgatory's timer."""
        answer = _Answer(self, slot, request, started)
        op = answer.op = self.ctx.services.appends.park(parked, answer)
        self.parked.add(op)

    async def _hold(self, held: Held, request: DecodedRequest) -> object | None:
        """A delayed request: earlier answers leave, nothing more is read, and then it is served
        (`waiting.wait_held`) and its outcome delivered as a handler's."""
        started = perf_counter()
        await self.outbox.flush()
        outcome = await wait_held(self.ctx, self.parked, held, request, self.peer)
        if outcome is CLOSE:
            return CLOSE
        if isinstance(outcome, Held):  # a delay cannot return another one, but stay total
            return await self._hold(outcome, request)
        verdict = self._deliver(request, outcome, started)
        await self.outbox.flush()
        return verdict


class _Answer:
    """A parked request's `deliver` (the purgatory calls it once, with the answer or `Failed`): the answer
    encoded into the request's outbox slot and written, from whichever task completes it. One object in
    place of a closure and its ten cells, holding of the request only what its answer needs, so the
    decoded request is freed once parked (ADR 134); the purgatory drops its reference before calling it,
    which breaks the cycle with its operation (`op`) without the collector."""

    __slots__ = ("reader", "slot", "api", "version", "correlation_id", "started", "op")

    def __init__(self, reader: Reader, slot: Slot, request: DecodedRequest, started: float) -> None:
        self.reader, self.slot, self.started = reader, slot, started
        self.api, self.version, self.correlation_id = request.handler, request.api_version, request.correlation_id
        self.op: Operation | None = None

    def __call__(self, answer: object) -> None:
        reader = self.reader
        reader.parked.discard(self.op)
        if reader.ended:  # closing: the socket is (about to be) closed
            return
        outbox = reader.outbox
        if type(answer) is Failed:
            error = answer.error
            log.error(
                "%s v%d from %s failed",
                self.api.name,
                self.version,
                reader.peer,
                exc_info=(type(error), error, error.__traceback__),
            )
            self.slot.fill(None)
            outbox.flush_nowait()
            answered = None
        else:
            if type(answer) is Throttled:
                reader.mute(answer.throttle_ms)
                answer = answer.response
            try:  # `waiting.encode`, one call less; a Fetch's answer (the latency path) two less (ADR 135)
                data: list[bytes] | None = (
                    answer.encode_pieces(self.version, self.correlation_id)
                    if type(answer) is FetchAnswer
                    else encode_response_pieces(answer, self.version, self.correlation_id)
                )
            except Exception:
                log.exception("cannot encode %s v%d response for %s", self.api.name, self.version, reader.peer)
                data = None
            answered = perf_counter()
            outbox.answer_nowait(self.slot, data)
        if outbox.head_ready:  # what the socket did not take now (or TLS): written by a task
            reader.nursery.start_soon(outbox.flush)
        if answered is not None:  # the observer after the `writev` (ADR 130), with the time it was ready
            reader.ctx.services.observer.request_completed(self.api.name, self.version, answered - self.started)
