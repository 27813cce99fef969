"""SASL on a connection, as Kafka's SaslServerAuthenticator runs it, before any other request is served.

A connection on a SASL_PLAINTEXT or SASL_SSL listener gets a `SaslAuthenticator`; the server gives it
every frame until it reports the connection authenticated. The states (Kafka's SaslState):

    HANDSHAKE_OR_VERSIONS ── ApiVersions ──▶ HANDSHAKE ── SaslHandshake ──▶ AUTHENTICATE ──▶ COMPLETE
            └──────────────── SaslHandshake ─────────────────┘

ApiVersions is answered by its ordinary handler (`PASS`). SaslHandshake v0 means the tokens that
follow are raw, size-prefixed SASL tokens (old clients); v1 means they travel in SaslAuthenticate
requests (KIP-152). Any other request before COMPLETE is Kafka's IllegalSaslStateException, an
unsupported mechanism UNSUPPORTED_SASL_MECHANISM, a bad token SASL_AUTHENTICATION_FAILED with
Kafka's message: each a `Failed` step, whose response (if any) the server sends after
`connection.failed.authentication.delay.ms` and then closes the connection.

The mechanisms themselves (PLAIN, SCRAM-SHA-256/512) are the domain's pure state machines.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Callable, Mapping

import attrs
from kafka.protocol.metadata import ApiVersionsRequest
from kafka.protocol.sasl import SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse

from trafka.domain.errors import ErrorCode
from trafka.domain.security import (
    KafkaPrincipal,
    PlainServer,
    SaslException,
    SaslServer,
    ScramMechanism,
    ScramServer,
    UserScramCredentials,
    client_message,
)

from .codec import ProtocolError, UnsupportedVersion, decode_request, encode_response
from .registry import HandlerRegistry

_API_KEY = struct.Struct(">h")
_SIZE = struct.Struct(">i")


@attrs.frozen
class ListenerSasl:
    """A SASL listener's settings: `sasl.enabled.mechanisms` and the PLAIN users of its JAAS config."""

    enabled_mechanisms: tuple[str, ...]
    plain_users: Mapping[str, str] = attrs.field(factory=dict)


@attrs.define
class Authentication:
    """Broker-wide: each SASL listener's settings, the SCRAM credentials, the nonce source."""

    credentials: UserScramCredentials
    new_nonce: Callable[[], str]
    listeners: Mapping[str, ListenerSasl] = attrs.field(factory=dict)
    failed_authentication_delay_ms: int = 100

    def authenticator(self, listener: str, registry: HandlerRegistry) -> SaslAuthenticator:
        sasl = self.listeners.get(listener) or ListenerSasl(("GSSAPI",))
        return SaslAuthenticator(sasl, self, registry)


class SaslState(enum.Enum):
    HANDSHAKE_OR_VERSIONS = "HANDSHAKE_OR_VERSIONS"
    HANDSHAKE = "HANDSHAKE"
    AUTHENTICATE = "AUTHENTICATE"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


@attrs.frozen
class Reply:
    """Send `response` (framed bytes) and go on reading."""

    response: bytes


@attrs.frozen
class Failed:
    """Authentication failed: after the delay, send `response` if any, then close."""

    reason: str
    response: bytes | None = None


PASS = object()
"""The frame is an ordinary request (ApiVersions) for the normal handlers."""


class SaslAuthenticator:
    def __init__(self, sasl: ListenerSasl, authentication: Authentication, registry: HandlerRegistry) -> None:
        self._sasl = sasl
        self._authentication = authentication
        self._registry = registry
        self.state = SaslState.HANDSHAKE_OR_VERSIONS
        self._raw_tokens = False
        self._server: SaslServer | None = None
        self.principal: KafkaPrincipal | None = None

    @property
    def complete(self) -> bool:
        return self.state is SaslState.COMPLETE

    def receive(self, frame: bytes) -> Reply | Failed | object:
        if self.state is SaslState.AUTHENTICATE and self._raw_tokens:
            return self._raw_token(frame)
        if len(frame) < _API_KEY.size:
            return self._fail(f"truncated request during SASL {self._phase}")
        (api_key,) = _API_KEY.unpack_from(frame)
        if self.state is SaslState.AUTHENTICATE:
            if api_key != SaslAuthenticateRequest.API_KEY:
                return self._fail(f"Unexpected Kafka request of type {self._api_name(api_key)} during SASL authentication.")
            return self._authenticate(frame)
        if api_key == ApiVersionsRequest.API_KEY:
            if self.state is not SaslState.HANDSHAKE_OR_VERSIONS:
                return self._fail(f"Unexpected ApiVersions request received during SASL authentication state {self.state.value}")
            self.state = SaslState.HANDSHAKE
            return PASS
        if api_key != SaslHandshakeRequest.API_KEY:
            return self._fail(f"Unexpected Kafka request of type {self._api_name(api_key)} during SASL handshake.")
        return self._handshake(frame)

    @property
    def _phase(self) -> str:
        return "authentication" if self.state is SaslState.AUTHENTICATE else "handshake"

    def _api_name(self, api_key: int) -> str:
        handler = self._registry.get(api_key)
        return handler.name if handler is not None else str(api_key)

    def _fail(self, reason: str, response: bytes | None = None) -> Failed:
        self.state = SaslState.FAILED
        self._server = None
        return Failed(reason, response)

    def _decode(self, frame: bytes):
        try:
            return decode_request(frame, self._registry)
        except (ProtocolError, UnsupportedVersion) as exc:
            return self._fail(f"cannot decode a SASL request: {exc}")

    def _handshake(self, frame: bytes) -> Reply | Failed:
        request = self._decode(frame)
        if isinstance(request, Failed):
            return request
        mechanism = request.body.mechanism
        enabled = list(self._sasl.enabled_mechanisms)
        server = self._new_server(mechanism) if mechanism in enabled else None
        if server is None:
            response = SaslHandshakeResponse(
                version=request.api_version, error_code=ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms=enabled
            )
            return self._fail(
                f"Unsupported SASL mechanism {mechanism}",
                encode_response(response, request.api_version, request.correlation_id),
            )
        self._server = server
        self._raw_tokens = request.api_version == 0
        self.state = SaslState.AUTHENTICATE
        response = SaslHandshakeResponse(version=request.api_version, error_code=ErrorCode.NONE, mechanisms=enabled)
        return Reply(encode_response(response, request.api_version, request.correlation_id))

    def _new_server(self, mechanism: str) -> SaslServer | None:
        if mechanism == PlainServer.mechanism_name:
            return PlainServer(self._sasl.plain_users)
        scram = ScramMechanism.from_name(mechanism)
        if scram is not None:
            return ScramServer(scram, self._authentication.credentials.lookup, self._authentication.new_nonce)
        return None

    def _evaluate(self, token: bytes) -> bytes | SaslException:
        assert self._server is not None
        try:
            response = self._server.evaluate(token)
        except SaslException as exc:
            return exc
        if self._server.complete:
            assert self._server.authorization_id is not None
            self.principal = KafkaPrincipal.user(self._server.authorization_id)
            self.state = SaslState.COMPLETE
        return response

    def _raw_token(self, frame: bytes) -> Reply | Failed:
        server = self._server
        assert server is not None
        outcome = self._evaluate(frame)
        if isinstance(outcome, SaslException):
            return self._fail(f"{server.mechanism_name} authentication failed: {outcome}")
        return Reply(_SIZE.pack(len(outcome)) + outcome)

    def _authenticate(self, frame: bytes) -> Reply | Failed:
        request = self._decode(frame)
        if isinstance(request, Failed):
            return request
        server = self._server
        assert server is not None
        outcome = self._evaluate(request.body.auth_bytes)
        version, correlation_id = request.api_version, request.correlation_id
        if isinstance(outcome, SaslException):
            response = SaslAuthenticateResponse(
                version=version, error_code=ErrorCode.SASL_AUTHENTICATION_FAILED,
                error_message=client_message(outcome, server.mechanism_name), auth_bytes=b"", session_lifetime_ms=0,
            )
            return self._fail(
                f"{server.mechanism_name} authentication failed: {outcome}",
                encode_response(response, version, correlation_id),
            )
        response = SaslAuthenticateResponse(
            version=version, error_code=ErrorCode.NONE, error_message=None, auth_bytes=outcome, session_lifetime_ms=0,
        )
        return Reply(encode_response(response, version, correlation_id))
