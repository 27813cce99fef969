"""Delegation tokens (KIP-48) as Kafka 4.2's controller and brokers keep them: created, renewed, expired,
described and swept as `DelegationTokenControlManager` and `KafkaApis` do, and used to log in with
SCRAM (`tokenauth=true`) as the token's owner.

A token is its id (a random Kafka Uuid's text) and its information (owner, requester, renewers, issue,
expiry and max timestamps); its HMAC is HmacSHA512 of the id under `delegation.token.secret.key`, never
stored: Kafka's DelegationTokenRecord holds the information, and every node computes the HMAC again.
The HMAC in base64 is the token's SCRAM password, for both mechanisms at 4096 iterations.

Without a secret key tokens are disabled (DELEGATION_TOKEN_AUTH_DISABLED). Randomness (token ids, SCRAM
salts) and time come in from outside; persistence is the `DelegationTokenStore` port.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

import attrs

from ..errors import ErrorCode
from .principal import USER_TYPE, KafkaPrincipal

if TYPE_CHECKING:
    from .scram import ScramCredential, ScramMechanism

ERROR_TIMESTAMP = -1  # Kafka's DelegationTokenManager.ErrorTimestamp


@attrs.frozen
class TokenSettings:
    secret_key: str | None = attrs.field(default=None, repr=False)  # delegation.token.secret.key
    max_lifetime_ms: int = 7 * 24 * 3600 * 1000  # delegation.token.max.lifetime.ms
    expiry_time_ms: int = 24 * 3600 * 1000  # delegation.token.expiry.time.ms
    expiry_check_interval_ms: int = 3600 * 1000  # delegation.token.expiry.check.interval.ms


@attrs.frozen
class TokenInformation:
    token_id: str
    owner: KafkaPrincipal
    requester: KafkaPrincipal
    renewers: tuple[KafkaPrincipal, ...]
    issue_ms: int
    max_ms: int
    expiry_ms: int

    def owner_or_renewer(self, principal: KafkaPrincipal) -> bool:
        """Kafka's TokenInformation.ownerOrRenewer: the owner, the requester or a renewer."""
        return principal in (self.owner, self.requester) or principal in self.renewers

    def expired(self, now: int) -> bool:
        return self.max_ms < now or self.expiry_ms < now


@attrs.frozen
class CreatedToken:
    error: ErrorCode
    owner: KafkaPrincipal
    requester: KafkaPrincipal
    token: TokenInformation | None = None
    hmac: bytes = b""


@attrs.frozen
class DescribedToken:
    token: TokenInformation
    hmac: bytes


class DelegationTokenStore(Protocol):
    """Where tokens live (Kafka: DelegationTokenRecord and RemoveDelegationTokenRecord in
    `__cluster_metadata`)."""

    def load_tokens(self) -> Sequence[TokenInformation]:
        """Every token stored, in the order they were last written."""

    def token_written(self, token: TokenInformation) -> None:
        """Persist a new or renewed token, durably, before it takes effect."""

    def token_removed(self, token_id: str) -> None:
        """Persist a token's removal (expired or swept)."""


def _sum(now: int, duration: int) -> int:
    return 2**63 - 1 if now > 2**63 - 1 - duration else now + duration


class DelegationTokens:
    def __init__(
        self,
        settings: TokenSettings,
        store: DelegationTokenStore,
        new_token_id: Callable[[], str],
        new_salt: Callable[[], bytes],
        supported: Callable[[], bool] = lambda: True,
    ) -> None:
        """`supported`: the finalized metadata.version has delegation tokens (3.6-IV2 and later)."""
        self.settings = settings
        self._store = store
        self._new_token_id = new_token_id
        self._new_salt = new_salt
        self._supported = supported
        self._tokens: dict[str, TokenInformation] = {t.token_id: t for t in store.load_tokens()}
        self._credentials: dict[tuple[str, str], ScramCredential] = {}  # (token id, mechanism name)
        self._next_sweep: int | None = None  # Kafka sweeps every delegation.token.expiry.check.interval.ms
        self._hmacs: dict[bytes, str] | None = None  # HMAC -> token id, computed at the first lookup

    @property
    def enabled(self) -> bool:
        return self.settings.secret_key is not None

    def hmac(self, token_id: str) -> bytes:
        assert self.settings.secret_key is not None
        return hmac.new(self.settings.secret_key.encode(), token_id.encode(), hashlib.sha512).digest()

    def _refusal(self) -> ErrorCode | None:
        if not self.enabled:
            return ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED
        if not self._supported():
            return ErrorCode.UNSUPPORTED_VERSION
        return None

    def _by_hmac(self, token_hmac: bytes) -> TokenInformation | None:
        """The token whose HMAC this is (Kafka's tokenCache.tokenForHmac), by an index of the HMACs."""
        if self._hmacs is None:
            self._hmacs = {self.hmac(token_id): token_id for token_id in self._tokens}
        token_id = self._hmacs.get(bytes(token_hmac))
        return None if token_id is None else self._tokens.get(token_id)

    def create(
        self,
        requester: KafkaPrincipal,
        owner: KafkaPrincipal,
        renewers: Iterable[KafkaPrincipal],
        max_lifetime_ms: int,
        now: int,
    ) -> CreatedToken:
        refused = self._refusal()
        if refused is not None:
            return CreatedToken(refused, owner, requester)
        renewers = tuple(renewers)
        if any(r.principal_type != USER_TYPE for r in renewers):
            return CreatedToken(ErrorCode.INVALID_PRINCIPAL_TYPE, owner, requester)
        lifetime = self.settings.max_lifetime_ms
        if max_lifetime_ms > 0:
            lifetime = min(lifetime, max_lifetime_ms)
        max_ms = _sum(now, lifetime)
        token = TokenInformation(
            self._new_token_id(),
            owner,
            requester,
            renewers,
            now,
            max_ms,
            min(max_ms, _sum(now, self.settings.expiry_time_ms)),
        )
        self._write(token)
        return CreatedToken(ErrorCode.NONE, owner, requester, token, self.hmac(token.token_id))

    def renew(
        self, principal: KafkaPrincipal, token_hmac: bytes, renew_period_ms: int, now: int
    ) -> tuple[ErrorCode, int]:
        """(error, the new expiry timestamp or -1)."""
        token, refused = self._renewable(principal, token_hmac, now, expired_first=True)
        if token is None:
            return refused, ERROR_TIMESTAMP
        period = self.settings.expiry_time_ms
        if renew_period_ms > 0:
            period = min(period, renew_period_ms)
        expiry = min(token.max_ms, now + period)
        self._write(attrs.evolve(token, expiry_ms=expiry))
        return ErrorCode.NONE, expiry

    def expire(
        self, principal: KafkaPrincipal, token_hmac: bytes, expiry_period_ms: int, now: int
    ) -> tuple[ErrorCode, int]:
        """(error, the new expiry timestamp or -1); a negative period expires the token at once."""
        token, refused = self._renewable(principal, token_hmac, now, expired_first=False)
        if token is None:
            return refused, ERROR_TIMESTAMP
        if expiry_period_ms < 0:
            self._remove(token.token_id)
            return ErrorCode.NONE, now
        if token.expired(now):
            return ErrorCode.DELEGATION_TOKEN_EXPIRED, ERROR_TIMESTAMP
        expiry = min(token.max_ms, _sum(now, expiry_period_ms))
        self._write(attrs.evolve(token, expiry_ms=expiry))
        return ErrorCode.NONE, expiry

    def _renewable(
        self, principal: KafkaPrincipal, token_hmac: bytes, now: int, expired_first: bool
    ) -> tuple[TokenInformation | None, ErrorCode]:
        """The token an HMAC names if `principal` owns or may renew it, else the error, in Kafka's order:
        disabled, unsupported, not found, (for a renewal) expired, owner mismatch."""
        refused = self._refusal()
        if refused is not None:
            return None, refused
        token = self._by_hmac(token_hmac)
        if token is None:
            return None, ErrorCode.DELEGATION_TOKEN_NOT_FOUND
        if expired_first and token.expired(now):
            return None, ErrorCode.DELEGATION_TOKEN_EXPIRED
        if not (token.owner == principal or principal in token.renewers):
            return None, ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH
        return token, ErrorCode.NONE

    def describe(
        self,
        requester: KafkaPrincipal,
        owners: Sequence[KafkaPrincipal] | None,
        may_describe_token: Callable[[str], bool],
        may_describe_owner: Callable[[KafkaPrincipal], bool],
    ) -> list[DescribedToken]:
        """Kafka's DelegationTokenManager.filterToken over every token (all owners when `owners` is None;
        none when it is empty): the requester's own, owned or renewable, and those its ACLs let it see."""
        if owners is not None and not owners:
            return []
        out = []
        for token in self._tokens.values():
            if owners is not None and not any(token.owner_or_renewer(o) for o in owners):
                continue
            if (
                token.owner_or_renewer(requester)
                or may_describe_token(token.token_id)
                or may_describe_owner(token.owner)
            ):
                out.append(DescribedToken(token, self.hmac(token.token_id)))
        return out

    def maybe_sweep(self, now: int) -> None:
        """Sweep when a check interval has passed since the last sweep (the first call starts the clock),
        as Kafka's controller sweeps on its timer: a token past its expiry is gone within an interval."""
        if self._next_sweep is None:
            self._next_sweep = now + self.settings.expiry_check_interval_ms
        elif now >= self._next_sweep:
            self.sweep(now)
            self._next_sweep = now + self.settings.expiry_check_interval_ms

    def sweep(self, now: int) -> list[TokenInformation]:
        """Remove the tokens past their expiry or max timestamp (Kafka's sweepExpiredDelegationTokens)."""
        gone = [t for t in self._tokens.values() if t.expired(now)]
        for token in gone:
            self._remove(token.token_id)
        return gone

    # -- SCRAM with a token (`tokenauth=true`) -----------------------------------------------------

    def owner_of(self, token_id: str) -> TokenInformation | None:
        """The token a SCRAM login names as its user, if it exists and tokens are enabled."""
        return self._tokens.get(token_id) if self.enabled else None

    def credential(self, token_id: str, mechanism: ScramMechanism) -> ScramCredential | None:
        """The token's SCRAM credential: its HMAC in base64 as the password, Kafka's minimum iterations."""
        if self.owner_of(token_id) is None:
            return None
        key = (token_id, mechanism.mechanism_name)
        credential = self._credentials.get(key)
        if credential is None:
            from .scram import ScramCredential

            password = base64.b64encode(self.hmac(token_id)).decode()
            credential = ScramCredential.from_password(mechanism, password, self._new_salt(), mechanism.min_iterations)
            self._credentials[key] = credential
        return credential

    def _write(self, token: TokenInformation) -> None:
        self._store.token_written(token)
        self._tokens[token.token_id] = token
        if self._hmacs is not None:
            self._hmacs[self.hmac(token.token_id)] = token.token_id

    def _remove(self, token_id: str) -> None:
        self._store.token_removed(token_id)
        self._tokens.pop(token_id, None)
        if self._hmacs is not None:
            self._hmacs = {h: t for h, t in self._hmacs.items() if t != token_id}
        for key in [k for k in self._credentials if k[0] == token_id]:
            del self._credentials[key]
