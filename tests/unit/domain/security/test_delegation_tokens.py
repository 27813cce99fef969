"""Delegation tokens (KIP-48) as Kafka 4.2's DelegationTokenControlManager and KafkaApis keep them: the
rules of create, renew, expire, describe and the sweep, and a token's SCRAM login."""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools

import pytest

from tests.scram_client import ScramClient
from trafka.adapters.memory.security_store import MemoryDelegationTokenStore
from trafka.domain.errors import ErrorCode
from trafka.domain.security.delegation_tokens import DelegationTokens, TokenSettings
from trafka.domain.security.principal import KafkaPrincipal
from trafka.domain.security.scram import ScramMechanism, ScramServer


class _TokenClient(ScramClient):
    """A SCRAM client naming a token: the extension is part of its first message's bare part."""

    @property
    def bare(self) -> str:
        return super().bare + ",tokenauth=true"


ALICE, BOB, CAROL = (KafkaPrincipal.user(n) for n in ("alice", "bob", "carol"))
SETTINGS = TokenSettings("secret", max_lifetime_ms=10_000, expiry_time_ms=3_000, expiry_check_interval_ms=1_000)


def _tokens(settings: TokenSettings = SETTINGS, store: MemoryDelegationTokenStore | None = None) -> DelegationTokens:
    ids = (f"token-{n}" for n in itertools.count())
    return DelegationTokens(settings, store or MemoryDelegationTokenStore(), lambda: next(ids), lambda: b"s" * 32)


def test_a_token_is_created_with_kafkas_timestamps_and_hmac():
    tokens = _tokens()
    created = tokens.create(ALICE, ALICE, [BOB], max_lifetime_ms=0, now=1_000)
    assert created.error is ErrorCode.NONE and created.token is not None
    token = created.token
    assert (token.issue_ms, token.expiry_ms, token.max_ms) == (1_000, 4_000, 11_000)
    assert created.hmac == hmac.new(b"secret", b"token-0", hashlib.sha512).digest()  # Kafka's HmacSHA512
    shorter = tokens.create(ALICE, ALICE, [], max_lifetime_ms=2_000, now=1_000).token
    assert shorter is not None and (shorter.expiry_ms, shorter.max_ms) == (3_000, 3_000)  # expiry within max


def test_without_a_secret_key_tokens_are_disabled_and_below_3_6_unsupported():
    off = _tokens(TokenSettings())
    assert off.create(ALICE, ALICE, [], 0, 0).error is ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED
    assert off.renew(ALICE, b"x", 0, 0) == (ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, -1)
    old = DelegationTokens(SETTINGS, MemoryDelegationTokenStore(), lambda: "t", lambda: b"", lambda: False)
    assert old.create(ALICE, ALICE, [], 0, 0).error is ErrorCode.UNSUPPORTED_VERSION


def test_renewers_must_be_users():
    created = _tokens().create(ALICE, ALICE, [KafkaPrincipal("Group", "g")], 0, 0)
    assert created.error is ErrorCode.INVALID_PRINCIPAL_TYPE and created.token is None


def test_renew_by_the_owner_or_a_renewer_within_the_max_lifetime():
    tokens = _tokens()
    created = tokens.create(ALICE, ALICE, [BOB], 0, 0)
    assert tokens.renew(CAROL, created.hmac, 0, 1_000) == (ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH, -1)
    assert tokens.renew(BOB, created.hmac, 500, 1_000) == (ErrorCode.NONE, 1_500)  # the shorter period asked
    assert tokens.renew(ALICE, b"not a token", 0, 1_200) == (ErrorCode.DELEGATION_TOKEN_NOT_FOUND, -1)
    assert tokens.renew(ALICE, created.hmac, 0, 1_501) == (ErrorCode.DELEGATION_TOKEN_EXPIRED, -1)
    short = tokens.create(ALICE, ALICE, [], max_lifetime_ms=4_000, now=0)
    assert tokens.renew(ALICE, short.hmac, 0, 2_000) == (ErrorCode.NONE, 4_000)  # capped at the max timestamp


def test_expire_now_removes_the_token_and_a_period_shortens_it():
    store = MemoryDelegationTokenStore()
    tokens = _tokens(store=store)
    first, second = (tokens.create(ALICE, ALICE, [], 0, 0) for _ in range(2))
    assert tokens.expire(ALICE, first.hmac, 1_000, 500) == (ErrorCode.NONE, 1_500)
    assert tokens.expire(ALICE, second.hmac, -1, 500) == (ErrorCode.NONE, 500)
    assert list(store.tokens) == ["token-0"]
    assert tokens.expire(ALICE, second.hmac, -1, 600) == (ErrorCode.DELEGATION_TOKEN_NOT_FOUND, -1)
    assert tokens.expire(ALICE, first.hmac, 1_000, 2_000) == (ErrorCode.DELEGATION_TOKEN_EXPIRED, -1)


def test_describe_shows_own_and_renewable_tokens_and_what_acls_allow():
    tokens = _tokens()
    alice = tokens.create(ALICE, ALICE, [BOB], 0, 0).token
    carol = tokens.create(CAROL, CAROL, [], 0, 0).token
    assert alice is not None and carol is not None

    def ids(requester, owners=None, by_token=lambda t: False, by_owner=lambda o: False):
        return [d.token.token_id for d in tokens.describe(requester, owners, by_token, by_owner)]

    assert ids(ALICE) == [alice.token_id]
    assert ids(BOB) == [alice.token_id]  # a renewer
    assert ids(BOB, by_token=lambda t: t == carol.token_id) == [alice.token_id, carol.token_id]
    assert ids(BOB, by_owner=lambda o: o == CAROL) == [alice.token_id, carol.token_id]
    assert ids(BOB, owners=[CAROL], by_owner=lambda o: True) == [carol.token_id]
    assert ids(ALICE, owners=[]) == []  # an empty owner list asks for none


def test_the_sweep_removes_expired_tokens_once_per_check_interval():
    store = MemoryDelegationTokenStore()
    tokens = _tokens(store=store)
    tokens.create(ALICE, ALICE, [], 0, 0)  # expires at 3 000
    tokens.maybe_sweep(2_500)  # starts the interval: next sweep at 3 500
    tokens.maybe_sweep(3_400)
    assert list(store.tokens) == ["token-0"]
    tokens.maybe_sweep(3_500)
    assert store.tokens == {}


def test_tokens_are_loaded_from_the_store():
    store = MemoryDelegationTokenStore()
    created = _tokens(store=store).create(ALICE, ALICE, [BOB], 0, 0)
    again = _tokens(store=store)
    assert again.renew(BOB, created.hmac, 0, 1) == (ErrorCode.NONE, 3_001)


@pytest.mark.parametrize("mechanism", list(ScramMechanism))
def test_a_token_logs_in_with_scram_as_its_owner(mechanism):
    tokens = _tokens()
    created = tokens.create(ALICE, ALICE, [], 0, 0)
    assert created.token is not None
    token_id, password = created.token.token_id, base64.b64encode(created.hmac).decode()

    def lookup(tid, m):
        token, credential = tokens.owner_of(tid), tokens.credential(tid, m)
        return None if token is None or credential is None else (token.owner.name, credential, token.expiry_ms)

    server = ScramServer(mechanism, lambda user, m: None, lambda: "server-nonce", lookup)
    client = _TokenClient(mechanism.hash_name, token_id, password)
    server_first = server.evaluate(client.client_first())
    server.evaluate(client.client_final(server_first))
    assert server.complete and server.authorization_id == "alice" and server.token_authenticated
    assert server.credential_expiry_ms == created.token.expiry_ms
    refused = ScramServer(mechanism, lambda user, m: None, lambda: "n", lookup)
    with pytest.raises(Exception, match="Token Authentication failed: Invalid tokenId : nope"):
        refused.evaluate(_TokenClient(mechanism.hash_name, "nope", "x").client_first())
