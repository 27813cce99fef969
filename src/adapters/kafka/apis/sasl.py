"""The SASL exchange: SaslHandshake (key 17): v0-1 and SaslAuthenticate (key 36): v0-2. On a SASL
listener the connection's authenticator (`security/authentication.py`) answers them before anything
else; served elsewhere they answer as Kafka does on a listener without SASL. Unauthorized, as Kafka.
"""

from __future__ import annotations

import attrs

from trafka.domain.errors import ErrorCode
from trafka.schema_codec.messages import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)

from ..api import KafkaApi, top_level_error
from ..request_context import ClientInfo


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""


def handle_sasl_handshake(ctx: Uses, request: SaslHandshakeRequest, version: int, client: ClientInfo):
    return SaslHandshakeResponse(version=version, error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])


def handle_sasl_authenticate(ctx: Uses, request: SaslAuthenticateRequest, version: int, client: ClientInfo):
    return SaslAuthenticateResponse(
        version=version,
        error_code=ErrorCode.ILLEGAL_SASL_STATE,
        error_message="SaslAuthenticate request received after successful authentication",
        auth_bytes=b"",
        session_lifetime_ms=0,
    )


SASL_HANDSHAKE = KafkaApi(
    SaslHandshakeRequest,
    SaslHandshakeResponse,
    (0, 1),
    handle_sasl_handshake,
    authorization=None,
    refusal=top_level_error,
    read_only=False,
    quota=None,
)
SASL_AUTHENTICATE = KafkaApi(
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    (0, 2),
    handle_sasl_authenticate,
    authorization=None,
    refusal=top_level_error,
    read_only=False,
    quota=None,
)
APIS = (SASL_HANDSHAKE, SASL_AUTHENTICATE)
