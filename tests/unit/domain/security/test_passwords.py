"""The domain's password check (the console's login, the registry's Basic auth) against SCRAM credentials
and PLAIN's JAAS users, agreeing with what a SCRAM exchange accepts."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.scram_client import ScramClient
from trafka.domain.security import PasswordCheck, SaslException, ScramCredential, ScramMechanism, ScramServer
from trafka.domain.security.passwords import scram_password_matches

SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512


def credentials(users: dict[tuple[str, ScramMechanism], str]):
    stored = {
        key: ScramCredential.from_password(key[1], password, b"salt-" + key[0].encode(), 4096)
        for key, password in users.items()
    }
    return lambda user, mechanism: stored.get((user, mechanism))


def test_scram_users_are_checked_on_the_enabled_mechanisms_only():
    lookup = credentials({("carol", SHA256): "carol-256", ("carol", SHA512): "carol-512", ("dave", SHA512): "d"})
    check = PasswordCheck(lookup, [SHA256])
    assert check.verify("carol", "carol-256")
    assert not check.verify("carol", "carol-512")
    assert not check.verify("dave", "d")
    both = PasswordCheck(lookup, [SHA256, SHA512])
    assert both.verify("carol", "carol-512") and both.verify("dave", "d")
    assert not both.verify("carol", "wrong") and not both.verify("nobody", "carol-256")


def test_plain_users_follow_the_jaas_config_of_each_plain_listener():
    check = PasswordCheck(lambda user, mechanism: None, [], [{"alice": "a1"}, {"alice": "a2", "bob": "b"}])
    assert check.verify("alice", "a1") and check.verify("alice", "a2") and check.verify("bob", "b")
    assert not check.verify("bob", "a1") and not check.verify("carol", "b")
    assert not check.verify("", "") and not check.verify("bob", "") and not check.verify("", "b")


def test_a_credential_whose_server_key_differs_is_refused():
    good = ScramCredential.from_password(SHA256, "pw", b"salt", 4096)
    assert scram_password_matches(SHA256, good, "pw")
    other = ScramCredential(good.salt, good.stored_key, b"\0" * len(good.server_key), good.iterations)
    assert not scram_password_matches(SHA256, other, "pw")


@settings(max_examples=10, deadline=None)
@given(password=st.text(min_size=1, max_size=12), attempt=st.text(min_size=1, max_size=12))
@example(password="pässword", attempt="pässword")
@example(password="pw", attempt="pw ")
def test_the_check_agrees_with_a_scram_exchange(password, attempt):
    lookup = credentials({("u", SHA256): password})
    server = ScramServer(SHA256, lookup, lambda: "servernonce")
    client = ScramClient("sha256", "u", attempt)
    try:
        server_first = server.evaluate(client.client_first())
        server.evaluate(client.client_final(server_first))
        exchanged = server.complete
    except SaslException:
        exchanged = False
    assert PasswordCheck(lookup, [SHA256]).verify("u", attempt) is exchanged
