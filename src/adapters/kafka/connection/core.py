"""A connection's protocol rules without I/O (h11's `Connection`): frames in, actions out.

`ConnectionCore` holds what one connection is: its frame reader (the transport feeds it the bytes it
reads), its SASL exchange, who authenticated, the lane frame read ahead, the client quota's mute and
the `ClientInfo` its requests are served for. It never awaits, sleeps, reads a clock or touches a
socket: the Trio loop around it (`server.py`) asks for the next frame, waits for what must be waited
for (room in the outbox, the end of a mute), then hands the frame to `handle`, which says what to do:

- a `DecodedRequest`: serve it through the API's pipeline;
- a `LaneGroup`: one-partition Produce requests, this frame and those read behind it (ADR 29);
- `Answer(data)`: a response the connection made itself (a SASL step, an unsupported ApiVersions);
- `DecodeOffLoop(frame)`: a large frame to decode in a worker thread (ADR 78), then `decoded`;
- `Close(delay_s, response)`: end the connection (after `response`, `delay_s` later for a failed
  SASL authentication); the reason is logged here, once.

`next_frame` gives None when more bytes are needed, or a `Close` for a frame that cannot be framed.
Time comes in as an argument (the broker's clock for SASL sessions, Trio's for mutes).
"""

from __future__ import annotations

import logging
from typing import Any

from trafka.domain.security import ANONYMOUS, KafkaPrincipal

from ..api import HandlerRegistry
from ..request_context import ClientInfo, Endpoint
from ..security.authentication import Failed, Reply, SaslAuthenticator
from ..wire.codec import DecodedRequest, ProtocolError, UnsupportedVersion, decode_request, encode_response
from ..wire.framing import FrameError, FrameReader

log = logging.getLogger("trafka.server")

# A frame this large (and of an API without a measured fast decoder: Produce's is cheap whatever its
# size) is decoded in a worker thread, one at a time, so a client that sends megabytes of array entries
# (a ShareAcknowledge with millions of acknowledgement types, issue 42) costs the loop no more than a
# thread sharing the GIL: other connections keep being served while it decodes.
DECODE_OFF_LOOP_BYTES = 1 << 20


class Answer:
    """A response the connection made itself, to queue in request order."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class Close:
    """End the connection: `response` (if any) is queued first, `delay_s` later (Kafka's
    `connection.failed.authentication.delay.ms`)."""

    __slots__ = ("delay_s", "response")

    def __init__(self, delay_s: float = 0.0, response: bytes | None = None) -> None:
        self.delay_s = delay_s
        self.response = response


CLOSE = Close()


class DecodeOffLoop:
    """A frame to decode in a worker thread; its outcome goes to `ConnectionCore.decoded`."""

    __slots__ = ("frame",)

    def __init__(self, frame: bytes) -> None:
        self.frame = frame


class LaneGroup(list[Any]):
    """Consecutive lane requests, in order: answered together."""


Action = DecodedRequest | LaneGroup | Answer | DecodeOffLoop | Close


class ConnectionCore:
    def __init__(
        self,
        registry: HandlerRegistry,
        max_request_bytes: int,
        peer: str,
        peer_host: str,
        listener: str,
        advertised: Endpoint,
        principal: KafkaPrincipal = ANONYMOUS,
        authenticator: SaslAuthenticator | None = None,
        sasl_max_receive_size: int = 0,
        failed_authentication_delay_ms: int = 0,
        lane_decode: Any = None,
    ) -> None:
        self.registry = registry
        self.max_request_bytes = max_request_bytes
        self.frames = FrameReader(max_request_bytes)
        self.peer, self.peer_host, self.listener, self.advertised = peer, peer_host, listener, advertised
        self.principal = principal  # who authenticated (TLS, then SASL)
        self.authenticator = authenticator  # SASL's exchange, on SASL listeners
        self.sasl_max_receive_size = sasl_max_receive_size
        self.failed_authentication_delay_ms = failed_authentication_delay_ms
        self.lane_decode = lane_decode  # a frame of the lane's shape as a tuple, else None
        self.held: bytes | None = None  # a frame read while gathering lane requests: the next one
        self.muted_until = 0.0  # a client quota's throttle (KIP-219): nothing served before (Trio time)
        self.connection: object = None  # the connection's identity in its ClientInfo
        self._client: ClientInfo | None = None  # rebuilt only when the client id or the principal changes
        self._bound_frames()

    # -- frames in ----------------------------------------------------------------------------------

    def next_frame(self) -> bytes | Close | None:
        """The next frame (the one read ahead by the lane first); None until more bytes arrive."""
        held = self.held
        if held is not None:
            self.held = None
            return held
        try:
            return self.frames.next_frame()
        except FrameError as exc:
            if self.authenticating:  # Kafka's SaslServerAuthenticator (CVE-2022-34917)
                log.info(
                    "closing connection from %s: Failing SASL authentication due to invalid receive size",
                    self.peer,
                )
                log.debug("connection from %s: %s", self.peer, exc)
            else:
                log.warning("closing connection from %s: %s", self.peer, exc)
            return CLOSE

    def handle(self, frame: bytes, now_ms: int, lane_open: bool, room: int) -> Action:
        """What to do with `frame`: its SASL step, the lane (while `lane_open`, at most `room` requests
        gathered), or its decoded request."""
        if self.authenticator is not None:
            step = self._authenticate(frame, now_ms)
            self._bound_frames()
            if step is not None:
                return step
        if lane_open:
            group = self._gather(frame, room)
            if group is not None:
                return group
        if len(frame) >= DECODE_OFF_LOOP_BYTES:
            api = self.registry.get(int.from_bytes(frame[:2], "big", signed=True))
            if api is not None and (api.fast_decoder is None or api.fast_decoder.off_loop_when_large):
                return DecodeOffLoop(frame)
        try:
            return decode_request(frame, self.registry)
        except (UnsupportedVersion, ProtocolError) as exc:
            return self._undecodable(frame, exc)

    def decoded(self, frame: bytes, attempt: DecodedRequest | Exception) -> DecodedRequest | Answer | Close:
        """The outcome of decoding `frame` off the loop, as `handle` would have given it."""
        if isinstance(attempt, Exception):
            return self._undecodable(frame, attempt)
        return attempt

    # -- what requests are served as ----------------------------------------------------------------

    def client(self, client_id: str | None) -> ClientInfo:
        """Who sent a request with this client id on this connection."""
        client_id = client_id or ""
        client = self._client
        if client is None or client.client_id != client_id or client.principal is not self.principal:
            client = self._client = ClientInfo(
                client_id,
                self.peer_host,
                self.listener,
                self.advertised,
                self.principal,
                self.connection,
                self.authenticator is not None,
            )
        return client

    def mute(self, throttle_ms: int, now: float) -> None:
        """Serve no further request for `throttle_ms` after `now` (a client quota's throttle, KIP-219)."""
        self.muted_until = max(self.muted_until, now + throttle_ms / 1000)

    @property
    def authenticating(self) -> bool:
        return self.authenticator is not None and not self.authenticator.complete

    # -- the steps ----------------------------------------------------------------------------------

    def _bound_frames(self) -> None:
        """`sasl.server.max.receive.size` bounds every frame before and during (re-)authentication, as
        Kafka's SaslServerAuthenticator does since CVE-2022-34917; `socket.request.max.bytes` after."""
        limit = self.max_request_bytes
        if self.authenticating:
            limit = min(limit, self.sasl_max_receive_size)
        self.frames.max_frame_bytes = limit

    def _authenticate(self, frame: bytes, now_ms: int) -> Answer | Close | None:
        """SASL's step: the frames of the exchange answered; an expired session closed."""
        authenticator, peer = self.authenticator, self.peer
        assert authenticator is not None
        if authenticator.expired(now_ms):
            log.info(
                "closing connection from %s: SASL session of %s expired without re-authentication",
                peer,
                self.principal,
            )
            return CLOSE
        if not authenticator.intercepts(frame):
            return None
        step = authenticator.receive(frame, now_ms)
        if isinstance(step, Failed):
            log.info("closing connection from %s: %s", peer, step.reason)
            return Close(self.failed_authentication_delay_ms / 1000 if step.delayed else 0.0, step.response)
        if isinstance(step, Reply):
            if authenticator.complete:
                self.principal = authenticator.principal or ANONYMOUS
                again = "re-" if authenticator.completions > 1 else ""
                log.debug("connection from %s %sauthenticated as %s", peer, again, self.principal)
            return Answer(step.response)
        return None

    def _gather(self, frame: bytes, room: int) -> LaneGroup | None:
        """This frame and the lane frames read behind it (not beyond the first on a SASL connection)."""
        decode = self.lane_decode
        one = decode(frame)
        if one is None:
            return None
        group = LaneGroup((one,))
        frames = self.frames
        while self.authenticator is None and len(group) < room:
            try:
                following = frames.next_frame()
            except FrameError:
                break  # the frame is still there: the next `next_frame` reports it
            if following is None:
                break
            one = decode(following)
            if one is None:
                self.held = following
                break
            group.append(one)
        return group

    def _undecodable(self, frame: bytes, exc: Exception) -> Answer | Close:
        if isinstance(exc, UnsupportedVersion):
            api = self.registry.get(exc.api_key)
            if api is None or api.unsupported_version is None:
                log.warning(
                    "closing connection from %s: unsupported version %d of API key %d",
                    self.peer,
                    exc.api_version,
                    exc.api_key,
                )
                return CLOSE
            response, version = api.unsupported_version(api)
            return Answer(encode_response(response, version, exc.correlation_id))
        log.warning("closing connection from %s: %s", self.peer, exc)
        log.debug("the frame began %s", frame[:256].hex())
        return CLOSE
