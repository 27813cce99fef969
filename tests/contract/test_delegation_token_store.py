"""Delegation tokens in the store: the file store writes Kafka's DelegationTokenRecord and
RemoveDelegationTokenRecord to `__cluster_metadata` (never the HMAC) and replays them after a restart;
the memory store keeps the same contract, and a restarted broker's tokens still log in and renew."""

from __future__ import annotations

import uuid

import attrs
import pytest

from trafka.adapters.filesystem.metadata_records import DelegationTokenRecord, decode_metadata_record
from trafka.adapters.filesystem.security_store import FileDelegationTokenStore
from trafka.adapters.memory.security_store import MemoryDelegationTokenStore
from trafka.domain.errors import ErrorCode
from trafka.domain.security.delegation_tokens import DelegationTokens, TokenSettings
from trafka.domain.security.principal import KafkaPrincipal

from .metadata_stores import FileStores, MemoryStores

ALICE, BOB = KafkaPrincipal.user("alice"), KafkaPrincipal.user("bob")
SETTINGS = TokenSettings("secret")


@pytest.fixture(params=["memory", "filesystem"])
def stores(request, tmp_path):
    stores = (
        MemoryStores(MemoryDelegationTokenStore())
        if request.param == "memory"
        else FileStores(str(tmp_path / "logs"), FileDelegationTokenStore)
    )
    yield stores
    stores.close()


def _tokens(store) -> DelegationTokens:
    return DelegationTokens(SETTINGS, store, lambda: f"id-{uuid.uuid4().hex[:6]}", lambda: b"s" * 16)


def test_tokens_survive_a_restart_renewed_and_expired_as_written(stores):
    tokens = _tokens(stores.open())
    kept = tokens.create(ALICE, ALICE, [BOB], 0, 1_000)
    gone = tokens.create(ALICE, ALICE, [], 0, 1_000)
    assert tokens.renew(BOB, kept.hmac, 5_000, 2_000) == (ErrorCode.NONE, 7_000)
    assert tokens.expire(ALICE, gone.hmac, -1, 2_000)[0] is ErrorCode.NONE
    again = _tokens(stores.open())
    described = again.describe(BOB, None, lambda t: False, lambda o: False)
    assert [(d.token, d.hmac) for d in described] == [(attrs.evolve(kept.token, expiry_ms=7_000), kept.hmac)]
    assert again.renew(BOB, kept.hmac, 0, 3_000)[0] is ErrorCode.NONE


def test_the_file_store_writes_kafkas_record_without_the_hmac(tmp_path):
    stores = FileStores(str(tmp_path / "logs"), FileDelegationTokenStore)
    try:
        created = _tokens(stores.open()).create(ALICE, BOB, [BOB], 0, 1_000)
        assert created.token is not None
        values = [value for _, _, value in stores.log.records() if value is not None]
        [record] = [r for r in map(decode_metadata_record, values) if isinstance(r, DelegationTokenRecord)]
        assert (record.owner, record.requester, record.renewers, record.token_id) == (
            "User:bob",
            "User:alice",
            ["User:bob"],
            created.token.token_id,
        )
        assert (record.issue_timestamp, record.expiration_timestamp) == (1_000, created.token.expiry_ms)
        assert all(created.hmac not in value for value in values)
    finally:
        stores.close()
