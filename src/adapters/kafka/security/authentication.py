"""SASL on a connection, as Kafka's SaslServerAuthenticator runs it, before any other request is served.

A connection on a SASL_PLAINTEXT or SASL_SSL listener gets a `SaslAuthenticator`; the server gives it
every frame until it reports the connection authenticated. The states (Kafka's SaslState):

    HANDSHAKE_OR_VERSIONS ── ApiVersions ──▶ HANDSHAKE ── SaslHandshake ──▶ AUTHENTICATE ──▶ COMPLETE
            └──────────────── SaslHandshake ─────────────────┘

ApiVersions is answered by its ordinary handler (`PASS`). SaslHandshake v0 means the tokens that
follow are raw, size-prefixed SASL tokens (old clients); v1 means they travel in SaslAuthenticate
requests (KIP-152). Each refusal is a `Failed` step: the server sends its response (if any), after
`connection.failed.authentication.delay.ms` when Kafka delays it (an AuthenticationException there),
and closes the connection. As Kafka does:

- another API before the handshake: IllegalSaslStateException, no answer, delayed close;
- another API after a v1 handshake: that request's own error response with ILLEGAL_SASL_STATE
  (its API's `refusal`), delayed, then closed;
- an unsupported mechanism: UNSUPPORTED_SASL_MECHANISM with the enabled ones; a bad token:
  SASL_AUTHENTICATION_FAILED with Kafka's message; both delayed;
- what Kafka cannot parse (an unknown API key once a first request was read, a SaslHandshake or
  SaslAuthenticate version it does not support, a malformed request) and a second ApiVersions are
  not authentication failures there: the connection is closed at once, unanswered.

With `connections.max.reauth.ms` set, a successful SaslAuthenticate (v1+) tells the client its
session lifetime; the client re-authenticates on the same connection with a new SaslHandshake
(KIP-368), with the same mechanism and principal, and a connection whose session expired is closed
at its next request, as Kafka does.

The mechanisms themselves (PLAIN, SCRAM-SHA-256/512) are the domain's pure state machines.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security import (
    KafkaPrincipal,
    SaslAuthenticationFailed,
    SaslException,
    SaslServer,
    UserScramCredentials,
    client_message,
    client_text,
)

# SASL's schemas are compiled at a SASL listener's first connection, not at start (issue 39)
from trafka.schema_codec import messages

from ..api import HandlerRegistry
from ..wire.codec import ProtocolError, UnsupportedVersion, decode_request, encode_response

if TYPE_CHECKING:
    from trafka.domain.security.scram import TokenLookup

_API_KEY = struct.Struct(">h")
_API_VERSION = struct.Struct(">h")  # after the api key
_HEADER_SIZE = 8  # api key, api version, correlation id: what Kafka reads before the client id
_SIZE = struct.Struct(">i")
# The ids of Kafka's ApiKeys (0-92, contiguous, as kafka-python 3.0.12's ApiKey lists them): the keys whose
# header Kafka can parse.
_KAFKA_API_KEYS = range(93)


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
    # delegation tokens' SCRAM logins (KIP-48): token id -> (owner, credential), or None
    tokens: TokenLookup | None = None
    failed_authentication_delay_ms: int = 100
    max_reauth_ms: int = 0  # connections.max.reauth.ms: 0 never asks clients to re-authenticate
    max_receive_size: int = 524288  # sasl.server.max.receive.size: a frame's bound until authenticated

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
    """Authentication failed: after the delay (if `delayed`), send `response` if any, then close."""

    reason: str
    response: bytes | None = None
    delayed: bool = True


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
        self.session_expires_ms: int | None = None
        self._previous: tuple[str, KafkaPrincipal] | None = None  # (mechanism, principal) while re-authenticating
        self._bad_mechanism: str | None = None
        self._mechanism = ""
        self._now_ms = 0
        self._first_request = True  # Kafka's INITIAL_REQUEST: no request header read yet
        self.completions = 0  # 1 after authentication, more after each re-authentication

    @property
    def complete(self) -> bool:
        return self.state is SaslState.COMPLETE

    def intercepts(self, frame: bytes) -> bool:
        """Whether this frame is the authenticator's: everything before authentication, and a
        SaslHandshake starting a re-authentication (KIP-368) when `connections.max.reauth.ms` is set."""
        if not self.complete:
            return True
        if self._authentication.max_reauth_ms <= 0 or len(frame) < _API_KEY.size:
            return False
        if _API_KEY.unpack_from(frame)[0] != messages.SaslHandshakeRequest.API_KEY:
            return False
        assert self.principal is not None
        self._previous = (self._mechanism, self.principal)
        self.state = SaslState.HANDSHAKE
        return True

    def expired(self, now_ms: int) -> bool:
        """The session lifetime told to the client has passed without a re-authentication: Kafka closes."""
        return self.session_expires_ms is not None and now_ms > self.session_expires_ms

    def receive(self, frame: bytes, now_ms: int = 0) -> Reply | Failed | object:
        self._now_ms = now_ms
        if self.state is SaslState.AUTHENTICATE and self._raw_tokens:
            return self._raw_token(frame)
        api_key = _API_KEY.unpack_from(frame)[0] if len(frame) >= _HEADER_SIZE else None
        if api_key is None or api_key not in _KAFKA_API_KEYS:
            # Kafka's RequestHeader.parse fails: on the first request that is a GSSAPI token, refused
            # as an unsupported mechanism (GSSAPI is never enabled here), later an invalid request.
            reason = f"not a Kafka request header during SASL {self._phase}"
            return self._fail(reason) if self._first_request else self._close(reason)
        self._first_request = False
        if self.state is SaslState.AUTHENTICATE:
            if api_key != messages.SaslAuthenticateRequest.API_KEY:
                return self._unexpected_during_authentication(frame, api_key)
            return self._authenticate(frame)
        if api_key == messages.ApiVersionsRequest.API_KEY:
            if self.state is not SaslState.HANDSHAKE_OR_VERSIONS:
                return self._close(
                    f"Unexpected ApiVersions request received during SASL authentication state {self.state.value}"
                )
            if self._serves_api_versions(_API_VERSION.unpack_from(frame, _API_KEY.size)[0]):
                self.state = SaslState.HANDSHAKE
            # else: answered UNSUPPORTED_VERSION, and Kafka stays ready for the client's retry at a
            # version it serves (SaslServerAuthenticator.handleApiVersionsRequest)
            return PASS
        if api_key != messages.SaslHandshakeRequest.API_KEY:
            return self._fail(f"Unexpected Kafka request of type {self._api_name(api_key)} during SASL handshake.")
        return self._handshake(frame)

    def _serves_api_versions(self, version: int) -> bool:
        handler = self._registry.get(messages.ApiVersionsRequest.API_KEY)
        return handler is not None and handler.min_version <= version <= handler.max_version

    def _unexpected_during_authentication(self, frame: bytes, api_key: int) -> Failed:
        """Kafka parses the request and answers it with its own error response, ILLEGAL_SASL_STATE."""
        reason = f"Unexpected Kafka request of type {self._api_name(api_key)} during SASL authentication."
        request = self._decode(frame)
        if isinstance(request, Failed):
            return request
        response = request.handler.refuse(request.body, request.api_version, ErrorCode.ILLEGAL_SASL_STATE)
        if response is None:
            return self._close(reason)
        return self._fail(reason, encode_response(response, request.api_version, request.correlation_id))

    @property
    def _phase(self) -> str:
        return "authentication" if self.state is SaslState.AUTHENTICATE else "handshake"

    def _api_name(self, api_key: int) -> str:
        handler = self._registry.get(api_key)
        return handler.name if handler is not None else str(api_key)

    def _fail(self, reason: str, response: bytes | None = None, delayed: bool = True) -> Failed:
        self.state = SaslState.FAILED
        self._server = None
        return Failed(reason, response, delayed)

    def _close(self, reason: str) -> Failed:
        """Not an authentication failure in Kafka (an invalid request, an illegal state): closed at once."""
        return self._fail(reason, delayed=False)

    def _decode(self, frame: bytes):
        try:
            return decode_request(frame, self._registry)
        except UnsupportedVersion as exc:
            return self._close(
                f"unsupported version {exc.api_version} of API key {exc.api_key} during SASL {self._phase}"
            )
        except ProtocolError as exc:
            return self._close(f"cannot decode a request during SASL {self._phase}: {exc}")

    def _handshake(self, frame: bytes) -> Reply | Failed:
        request = self._decode(frame)
        if isinstance(request, Failed):
            return request
        mechanism = request.body.mechanism
        enabled = list(self._sasl.enabled_mechanisms)
        server = self._new_server(mechanism) if mechanism in enabled else None
        if server is None:
            response = messages.SaslHandshakeResponse(
                version=request.api_version, error_code=ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms=enabled
            )
            return self._fail(
                f"Unsupported SASL mechanism {client_text(mechanism)}",
                encode_response(response, request.api_version, request.correlation_id),
            )
        if self._previous is not None and mechanism != self._previous[0]:
            self._bad_mechanism = (
                f"SASL mechanism '{mechanism}' requested by client is not supported for re-authentication "
                f"of mechanism '{self._previous[0]}'"
            )
        self._server = server
        self._mechanism = mechanism
        self._raw_tokens = request.api_version == 0
        self.state = SaslState.AUTHENTICATE
        response = messages.SaslHandshakeResponse(
            version=request.api_version, error_code=ErrorCode.NONE, mechanisms=enabled
        )
        return Reply(encode_response(response, request.api_version, request.correlation_id))

    def _new_server(self, mechanism: str) -> SaslServer | None:
        if mechanism == "PLAIN":
            from trafka.domain.security.plain import PlainServer  # loaded at a PLAIN handshake only (issue 39)

            return PlainServer(self._sasl.plain_users)
        from trafka.domain.security.scram import ScramMechanism, ScramServer  # at a SCRAM handshake (issue 39)

        scram = ScramMechanism.from_name(mechanism)
        if scram is not None:
            return ScramServer(
                scram,
                self._authentication.credentials.lookup,
                self._authentication.new_nonce,
                self._authentication.tokens,
            )
        return None

    def _evaluate(self, token: bytes) -> bytes | SaslException:
        assert self._server is not None
        if self._bad_mechanism is not None:
            return SaslAuthenticationFailed(self._bad_mechanism)
        try:
            response = self._server.evaluate(token)
        except SaslException as exc:
            return exc
        if self._server.complete:
            assert self._server.authorization_id is not None
            tokened = bool(getattr(self._server, "token_authenticated", False))
            principal = KafkaPrincipal("User", self._server.authorization_id, tokened)
            if self._previous is not None and principal != self._previous[1]:
                before = self._previous[1]
                return SaslAuthenticationFailed(
                    f"Cannot change principals during re-authentication from {before.principal_type}.{before.name}: "
                    f"{principal.principal_type}.{principal.name}"
                )
            self.principal = principal
            self._previous = None
            self.state = SaslState.COMPLETE
            self.completions += 1
        return response

    def _session_lifetime_ms(self) -> int:
        """Kafka's session lifetime (calcCompletionTimesAndReturnSessionLifetimeMs): connections.max.reauth.ms
        from the completion, whatever the client's versions; a client that cannot re-authenticate (SaslHandshake
        v0, SaslAuthenticate v0) is never told, and its connection is closed when the session expires. A
        delegation token's login lasts at most until the token expires, with or without re-authentication."""
        max_reauth = self._authentication.max_reauth_ms if self.complete else 0
        expiry = getattr(self._server, "credential_expiry_ms", None) if self.complete else None
        if expiry is None:
            lifetime = max_reauth
        else:
            until_expiry = max(expiry - self._now_ms, 0)
            lifetime = until_expiry if max_reauth <= 0 else min(until_expiry, max_reauth)
        self.session_expires_ms = self._now_ms + lifetime if lifetime > 0 or expiry is not None else None
        return max(lifetime, 0)

    def _failure_text(self, outcome: SaslException, server: SaslServer) -> str:
        """What the log says: Kafka's generic text (what the client is told), with the mechanism's own
        reason, client strings in it shown by `client_text`."""
        generic = client_message(outcome, server.mechanism_name, self._previous is not None)
        detail = str(outcome)
        return generic if detail == generic else f"{generic} ({client_text(detail)})"

    def _raw_token(self, frame: bytes) -> Reply | Failed:
        server = self._server
        assert server is not None
        outcome = self._evaluate(frame)
        if isinstance(outcome, SaslException):
            return self._fail(self._failure_text(outcome, server))
        if self.complete:
            self._session_lifetime_ms()
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
            response = messages.SaslAuthenticateResponse(
                version=version,
                error_code=ErrorCode.SASL_AUTHENTICATION_FAILED,
                error_message=client_message(outcome, server.mechanism_name, self._previous is not None),
                auth_bytes=b"",
                session_lifetime_ms=0,
            )
            return self._fail(self._failure_text(outcome, server), encode_response(response, version, correlation_id))
        response = messages.SaslAuthenticateResponse(
            version=version,
            error_code=ErrorCode.NONE,
            error_message=None,
            auth_bytes=outcome,
            session_lifetime_ms=self._session_lifetime_ms() if self.complete else 0,
        )
        return Reply(encode_response(response, version, correlation_id))
