"""Delegation tokens (KIP-48): CreateDelegationToken (key 38): v1-3, RenewDelegationToken (key 39): v1-2,
ExpireDelegationToken (key 40): v1-2 and DescribeDelegationToken (key 41): v1-3, as Kafka 4.2's KafkaApis
and its controller's DelegationTokenControlManager answer them (ADR 139).

Refused with DELEGATION_TOKEN_REQUEST_NOT_ALLOWED on a connection that did not authenticate (PLAINTEXT,
one-way SSL) or that logged in with a token; DELEGATION_TOKEN_AUTH_DISABLED without
`delegation.token.secret.key`. Authorization: creating a token for another owner needs CREATE_TOKENS on
that owner's USER resource; describing another's token needs DESCRIBE on it (DELEGATION_TOKEN) or
DESCRIBE_TOKENS on its owner (USER). No cluster check, as Kafka.

Version notes:
- CreateDelegationToken v3 (KIP-373): an owner other than the requester; the requester in the answer.
- DescribeDelegationToken v3: each token's requester.
- v2: flexible versions. v0 was removed in Kafka 4.0 (KIP-896).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.security.principal import ANONYMOUS, KafkaPrincipal
from trafka.schema_codec.messages import (
    CreateDelegationTokenRequest,
    CreateDelegationTokenResponse,
    DescribeDelegationTokenRequest,
    DescribeDelegationTokenResponse,
    ExpireDelegationTokenRequest,
    ExpireDelegationTokenResponse,
    RenewDelegationTokenRequest,
    RenewDelegationTokenResponse,
)

from ..api import KafkaApi, top_level_error
from ..request_context import ClientInfo
from ..security.checks import Filter

if TYPE_CHECKING:
    from trafka.domain.security.delegation_tokens import DelegationTokens, TokenInformation

    from ..security.authorization import AuthorizationGate


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    tokens: DelegationTokens
    authorization: AuthorizationGate | None
    clock_ms: Any


def _allows_token_requests(client: ClientInfo) -> bool:
    """Kafka's KafkaApis.allowTokenRequests: not a token login, and not PLAINTEXT or one-way SSL (no SASL and
    the anonymous principal)."""
    if client.principal.token_authenticated:
        return False
    return client.sasl or client.principal != ANONYMOUS


def _allowed(ctx: Uses, client: ClientInfo, operation: Op, resource: Res, name: str) -> bool:
    return ctx.authorization is None or ctx.authorization.allowed(client, operation, resource, name)


def _tokens(ctx: Uses) -> DelegationTokens:
    ctx.tokens.maybe_sweep(ctx.clock_ms())
    return ctx.tokens


def handle_create_delegation_token(ctx: Uses, request: Any, version: int, client: ClientInfo) -> Any:
    requester = client.principal
    owner = requester
    if request.owner_principal_name:
        if request.owner_principal_type is None:  # Kafka's KafkaPrincipal refuses a null type: its error answer
            return _created(version, ErrorCode.UNKNOWN_SERVER_ERROR, requester, requester, -1)
        owner = KafkaPrincipal(request.owner_principal_type, request.owner_principal_name)
    renewers = [KafkaPrincipal(r.principal_type, r.principal_name) for r in request.renewers]

    def refused(error: ErrorCode, stamp: int) -> Any:
        return _created(version, error, owner, requester, stamp)

    if not _allows_token_requests(client):
        return refused(ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, -1)
    if owner != requester and not _allowed(ctx, client, Op.CREATE_TOKENS, Res.USER, str(owner)):
        return refused(ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED, -1)
    if any(r.principal_type != "User" for r in renewers):
        return refused(ErrorCode.INVALID_PRINCIPAL_TYPE, -1)
    created = _tokens(ctx).create(requester, owner, renewers, request.max_lifetime_ms, ctx.clock_ms())
    if created.token is None:  # the controller's refusals leave the timestamps at their defaults
        return refused(created.error, 0)
    return _created(version, ErrorCode.NONE, owner, requester, 0, created.token, created.hmac)


def _created(
    version: int,
    error: ErrorCode,
    owner: KafkaPrincipal,
    requester: KafkaPrincipal,
    stamp: int,
    token: TokenInformation | None = None,
    token_hmac: bytes = b"",
) -> Any:
    """CreateDelegationToken's answer: the token's, or a refusal's with `stamp` for its timestamps."""
    return CreateDelegationTokenResponse(
        version=version,
        error_code=error,
        principal_type=owner.principal_type,
        principal_name=owner.name,
        token_requester_principal_type=requester.principal_type,
        token_requester_principal_name=requester.name,
        issue_timestamp_ms=stamp if token is None else token.issue_ms,
        expiry_timestamp_ms=stamp if token is None else token.expiry_ms,
        max_timestamp_ms=stamp if token is None else token.max_ms,
        token_id="" if token is None else token.token_id,
        hmac=token_hmac,
        throttle_time_ms=0,
    )


def handle_renew_delegation_token(ctx: Uses, request: Any, version: int, client: ClientInfo) -> Any:
    if not _allows_token_requests(client):
        error, expiry = ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, -1
    else:
        error, expiry = _tokens(ctx).renew(client.principal, request.hmac, request.renew_period_ms, ctx.clock_ms())
    return RenewDelegationTokenResponse(
        version=version, error_code=error, expiry_timestamp_ms=expiry, throttle_time_ms=0
    )


def handle_expire_delegation_token(ctx: Uses, request: Any, version: int, client: ClientInfo) -> Any:
    if not _allows_token_requests(client):
        error, expiry = ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, -1
    else:
        tokens = _tokens(ctx)
        error, expiry = tokens.expire(client.principal, request.hmac, request.expiry_time_period_ms, ctx.clock_ms())
    return ExpireDelegationTokenResponse(
        version=version, error_code=error, expiry_timestamp_ms=expiry, throttle_time_ms=0
    )


def handle_describe_delegation_token(ctx: Uses, request: Any, version: int, client: ClientInfo) -> Any:
    def answer(error: ErrorCode, described: list[Any]) -> Any:
        return DescribeDelegationTokenResponse(version=version, error_code=error, tokens=described, throttle_time_ms=0)

    if not _allows_token_requests(client):
        return answer(ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, [])
    tokens = _tokens(ctx)
    if not tokens.enabled:
        return answer(ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, [])
    owners = (
        None if request.owners is None else [KafkaPrincipal(o.principal_type, o.principal_name) for o in request.owners]
    )
    found = tokens.describe(
        client.principal,
        owners,
        lambda token_id: _allowed(ctx, client, Op.DESCRIBE, Res.DELEGATION_TOKEN, token_id),
        lambda owner: _allowed(ctx, client, Op.DESCRIBE_TOKENS, Res.USER, str(owner)),
    )
    Token = DescribeDelegationTokenResponse.DescribedDelegationToken
    Renewer = Token.DescribedDelegationTokenRenewer
    return answer(
        ErrorCode.NONE,
        [
            Token(
                principal_type=d.token.owner.principal_type,
                principal_name=d.token.owner.name,
                token_requester_principal_type=d.token.requester.principal_type,
                token_requester_principal_name=d.token.requester.name,
                issue_timestamp=d.token.issue_ms,
                expiry_timestamp=d.token.expiry_ms,
                max_timestamp=d.token.max_ms,
                token_id=d.token.token_id,
                hmac=d.hmac,
                renewers=[Renewer(principal_type=r.principal_type, principal_name=r.name) for r in d.token.renewers],
            )
            for d in found
        ],
    )


def _authorized_within(gate: Any, api: KafkaApi, ctx: Any, body: Any, version: int, client: ClientInfo) -> Any:
    """Each handler asks the gate itself, per owner and per token, as Kafka's KafkaApis does."""
    return api.handle(ctx, body, version, client)


def _api(request: Any, response: Any, versions: tuple[int, int], handle: Any) -> KafkaApi:
    return KafkaApi(
        request,
        response,
        versions,
        handle,
        authorization=Filter(_authorized_within),
        refusal=top_level_error,
        read_only=False,
    )


APIS = (
    _api(CreateDelegationTokenRequest, CreateDelegationTokenResponse, (1, 3), handle_create_delegation_token),
    _api(RenewDelegationTokenRequest, RenewDelegationTokenResponse, (1, 2), handle_renew_delegation_token),
    _api(ExpireDelegationTokenRequest, ExpireDelegationTokenResponse, (1, 2), handle_expire_delegation_token),
    _api(DescribeDelegationTokenRequest, DescribeDelegationTokenResponse, (1, 3), handle_describe_delegation_token),
)
