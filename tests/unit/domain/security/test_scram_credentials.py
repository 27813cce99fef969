"""AlterUserScramCredentials / DescribeUserScramCredentials semantics, as Kafka's controller answers them."""

from __future__ import annotations

from trafka.adapters.memory import MemoryScramCredentialStore
from trafka.domain.errors import ErrorCode
from trafka.domain.security import ScramDeletion, ScramMechanism, ScramUpsertion, UserScramCredentials
from trafka.domain.security.scram import ScramCredential

SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512


def upsertion(name, mechanism=SHA256, iterations=4096, password="secret"):
    salted = mechanism.salted_password(password, b"salt", iterations)
    return ScramUpsertion(name, mechanism.type_id, iterations, b"salt", salted)


def test_an_upsertion_stores_keys_computed_from_the_salted_password():
    store = MemoryScramCredentialStore()
    credentials = UserScramCredentials(store)
    [result] = credentials.alter([], [upsertion("alice")])
    assert result.error is ErrorCode.NONE
    assert store.credentials[("alice", SHA256)] == ScramCredential.from_password(SHA256, "secret", b"salt", 4096)
    assert UserScramCredentials(store).lookup("alice", SHA256) is not None


def test_kafka_s_refusals():
    credentials = UserScramCredentials(MemoryScramCredentialStore())
    results = {
        r.user: (r.error, r.message)
        for r in credentials.alter(
            [ScramDeletion("ghost", SHA256.type_id), ScramDeletion("twice", SHA256.type_id)],
            [
                upsertion("few", iterations=4095),
                upsertion("many", iterations=16385),
                upsertion("twice"),
                ScramUpsertion("odd", 9, 4096, b"s", b"p"),
                upsertion(""),
            ],
        )
    }
    assert results == {
        "ghost": (ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"),
        "twice": (ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"),
        "few": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
        "many": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"),
        "odd": (ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
        "": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
    }


def test_a_user_altered_twice_in_one_request_is_a_duplicate_and_nothing_is_stored():
    store = MemoryScramCredentialStore()
    [result] = UserScramCredentials(store).alter([], [upsertion("alice"), upsertion("alice", SHA512)])
    assert (result.error, result.message) == (
        ErrorCode.DUPLICATE_RESOURCE,
        "A user credential cannot be altered twice in the same request",
    )
    assert store.credentials == {}


def test_describe_every_user_or_the_named_ones():
    credentials = UserScramCredentials(MemoryScramCredentialStore())
    credentials.alter([], [upsertion("alice"), upsertion("bob", SHA512, 8192)])
    credentials.alter([], [upsertion("alice", SHA512)])
    everyone = {r.user: r.credentials for r in credentials.describe(None)}
    assert everyone == {"alice": ((1, 4096), (2, 4096)), "bob": ((2, 8192),)}
    named = {r.user: (r.error, r.message) for r in credentials.describe(["bob", "nobody", "alice", "alice"])}
    assert named["bob"] == (ErrorCode.NONE, None)
    assert named["nobody"] == (
        ErrorCode.RESOURCE_NOT_FOUND,
        "Attempt to describe a user credential that does not exist: nobody",
    )
    assert named["alice"][0] is ErrorCode.DUPLICATE_RESOURCE


def test_a_deletion_removes_one_mechanism():
    credentials = UserScramCredentials(MemoryScramCredentialStore())
    credentials.alter([], [upsertion("alice")])
    credentials.alter([], [upsertion("alice", SHA512)])
    [result] = credentials.alter([ScramDeletion("alice", SHA256.type_id)], [])
    assert result.error is ErrorCode.NONE
    assert credentials.lookup("alice", SHA256) is None and credentials.lookup("alice", SHA512) is not None
