"""SaslHandshake and SaslAuthenticate outside authentication, and the SCRAM credential admin APIs.

On a SASL listener the connection's `SaslAuthenticator` answers SaslHandshake and SaslAuthenticate
until the client is authenticated; these handlers answer what reaches the ordinary request path, as
KafkaApis does: a handshake on a non-SASL listener or after authentication is ILLEGAL_SASL_STATE, and
so is a SaslAuthenticate (re-authentication is not offered: `session_lifetime_ms` is always 0).

AlterUserScramCredentials and DescribeUserScramCredentials drive the domain's credential service,
which writes Kafka's UserScramCredentialRecord to `__cluster_metadata`.
"""

from __future__ import annotations

from kafka.protocol.admin import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)
from kafka.protocol.sasl import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)

from trafka.domain.errors import ErrorCode
from trafka.domain.security import ScramDeletion, ScramUpsertion

from ..api import HandlerRegistry
from ..context import BrokerContext, ClientInfo


def handle_sasl_handshake(ctx: BrokerContext, request: SaslHandshakeRequest, version: int, client: ClientInfo):
    return SaslHandshakeResponse(version=version, error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])


def handle_sasl_authenticate(ctx: BrokerContext, request: SaslAuthenticateRequest, version: int, client: ClientInfo):
    return SaslAuthenticateResponse(
        version=version,
        error_code=ErrorCode.ILLEGAL_SASL_STATE,
        error_message="SaslAuthenticate request received after successful authentication",
        auth_bytes=b"",
        session_lifetime_ms=0,
    )


def handle_alter_user_scram_credentials(
    ctx: BrokerContext, request: AlterUserScramCredentialsRequest, version: int, client: ClientInfo
):
    results = ctx.credentials.alter(
        [ScramDeletion(d.name, d.mechanism) for d in request.deletions],
        [ScramUpsertion(u.name, u.mechanism, u.iterations, u.salt, u.salted_password) for u in request.upsertions],
    )
    Result = AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult
    return AlterUserScramCredentialsResponse(
        version=version,
        throttle_time_ms=0,
        results=[Result(user=r.user, error_code=r.error, error_message=r.message) for r in results],
    )


def handle_describe_user_scram_credentials(
    ctx: BrokerContext, request: DescribeUserScramCredentialsRequest, version: int, client: ClientInfo
):
    users = None if request.users is None else [u.name for u in request.users]
    Result = DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult
    Info = Result.CredentialInfo
    return DescribeUserScramCredentialsResponse(
        version=version,
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        error_message=None,
        results=[
            Result(
                user=r.user,
                error_code=r.error,
                error_message=r.message,
                credential_infos=[Info(mechanism=m, iterations=i) for m, i in r.credentials],
            )
            for r in ctx.credentials.describe(users)
        ],
    )


def register(registry: HandlerRegistry) -> None:
    registry.register(SaslHandshakeRequest, SaslHandshakeResponse, (0, 1), handle_sasl_handshake)
    registry.register(SaslAuthenticateRequest, SaslAuthenticateResponse, (0, 2), handle_sasl_authenticate)
    registry.register(
        AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse, (0, 0), handle_alter_user_scram_credentials
    )
    registry.register(
        DescribeUserScramCredentialsRequest,
        DescribeUserScramCredentialsResponse,
        (0, 0),
        handle_describe_user_scram_credentials,
    )
