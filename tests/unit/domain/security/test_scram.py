"""SCRAM-SHA-256/512 and PLAIN as pure state machines: RFC 7677's exchange, Kafka's failures."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.scram_client import ScramClient
from trafka.domain.security import (
    PlainServer,
    SaslAuthenticationFailed,
    SaslException,
    ScramCredential,
    ScramMechanism,
    ScramServer,
    client_message,
    parse_jaas_config,
)
from trafka.domain.security.jaas import JaasConfigError
from trafka.domain.security.scram import ScramState

SHA256 = ScramMechanism.SCRAM_SHA_256


def server_for(credentials, mechanism=SHA256, nonce="%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"):
    return ScramServer(mechanism, lambda user, m: credentials.get((user, m)), lambda: nonce)


def test_rfc_7677_exchange_byte_for_byte():
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    credential = ScramCredential.from_password(SHA256, "pencil", salt, 4096)
    server = server_for({("user", SHA256): credential})
    server_first = server.evaluate(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
    assert server_first == b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    server_final = server.evaluate(
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    assert server_final == b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    assert server.complete and server.authorization_id == "user"


@settings(max_examples=20, deadline=None)
@given(
    mechanism=st.sampled_from(list(ScramMechanism)),
    user=st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=12),
    password=st.text(min_size=1, max_size=16),
    salt=st.binary(min_size=8, max_size=32),
    nonce=st.from_regex(r"[A-Za-z0-9+/]{8,24}", fullmatch=True),
    wrong=st.booleans(),
)
def test_any_user_authenticates_with_the_right_password_only(mechanism, user, password, salt, nonce, wrong):
    credential = ScramCredential.from_password(mechanism, password, salt, 4096)
    server = server_for({(user, mechanism): credential}, mechanism, nonce)
    client = ScramClient(mechanism.hash_name, user, password + "x" if wrong else password)
    final = client.client_final(server.evaluate(client.client_first()))
    if wrong:
        with pytest.raises(SaslException, match="Invalid client credentials"):
            server.evaluate(final)
        assert server.state is ScramState.FAILED
    else:
        assert client.verify_server_final(server.evaluate(final))
        assert server.authorization_id == user


def _exchange(server, client, **final):
    return server.evaluate(client.client_final(server.evaluate(client.client_first()), **final))


def credentials():
    return {("alice", SHA256): ScramCredential.from_password(SHA256, "secret", b"salt-salt", 4096)}


def test_an_unknown_user_fails_without_saying_so_to_the_client():
    server = server_for(credentials())
    with pytest.raises(SaslException) as failure:
        server.evaluate(ScramClient("sha256", "mallory", "x").client_first())
    assert not isinstance(failure.value, SaslAuthenticationFailed)
    assert client_message(failure.value, "SCRAM-SHA-256") == (
        "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"
    )


def test_a_final_message_with_another_nonce_fails():
    with pytest.raises(SaslException, match="Invalid client nonce"):
        _exchange(
            server_for(credentials()), ScramClient("sha256", "alice", "secret"), nonce="fyko+d2lbbFgONRv9qkxdawLforged"
        )


def test_a_forged_proof_fails():
    with pytest.raises(SaslException, match="Invalid client credentials"):
        _exchange(server_for(credentials()), ScramClient("sha256", "alice", "secret"), proof=b"\0" * 32)


def test_a_short_proof_fails():
    with pytest.raises(SaslException, match="Invalid client credentials"):
        _exchange(server_for(credentials()), ScramClient("sha256", "alice", "secret"), proof=b"\0" * 4)


@pytest.mark.parametrize("message", [b"", b"garbage", b"y,,n=alice,r=abc", b"n,,r=abc", "n,,n=alice,r=\u00e9".encode()])
def test_a_malformed_first_message_fails(message):
    with pytest.raises(SaslException, match="Invalid SCRAM client first message format"):
        server_for(credentials()).evaluate(message)


def test_an_authorization_id_other_than_the_user_is_told_to_the_client():
    server = server_for(credentials())
    with pytest.raises(SaslAuthenticationFailed) as failure:
        server.evaluate(ScramClient("sha256", "alice", "secret").client_first(authzid="admin"))
    assert client_message(failure.value, "SCRAM-SHA-256") == (
        "Authentication failed: Client requested an authorization id that is different from username"
    )


def test_a_credential_below_the_minimum_iterations_is_refused():
    weak = {("alice", SHA256): ScramCredential.from_password(SHA256, "secret", b"salt", 1000)}
    with pytest.raises(SaslException, match="Iterations 1000 is less than the minimum 4096"):
        server_for(weak).evaluate(ScramClient("sha256", "alice", "secret").client_first())


def test_no_message_after_the_exchange_ended():
    server = server_for(credentials())
    _exchange(server, ScramClient("sha256", "alice", "secret"))
    with pytest.raises(SaslException, match="Unexpected challenge in Sasl server state COMPLETE"):
        server.evaluate(b"n,,n=alice,r=abc")


def test_the_credential_never_shows_its_keys():
    assert "salt" not in repr(credentials()[("alice", SHA256)])


# -- PLAIN ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "token, message",
    [
        (b"\0alice\0wrong", "Authentication failed: Invalid username or password"),
        (b"\0mallory\0secret", "Authentication failed: Invalid username or password"),
        (b"\0\0secret", "Authentication failed: username not specified"),
        (b"\0alice\0", "Authentication failed: password not specified"),
        (b"alice\0secret", "Invalid SASL/PLAIN response: expected 3 tokens, got 2"),
        (b"a\0b\0c\0d", "Invalid SASL/PLAIN response: expected 3 tokens, got 4"),
        (b"bob\0alice\0secret", "Client requested an authorization id that is different from username"),
    ],
)
def test_plain_refuses_with_kafka_s_messages(token, message):
    with pytest.raises(SaslAuthenticationFailed, match=message):
        PlainServer({"alice": "secret"}).evaluate(token)


def test_plain_accepts_a_configured_user():
    server = PlainServer({"alice": "secret"})
    assert server.evaluate(b"alice\0alice\0secret") == b""
    assert server.complete and server.authorization_id == "alice"


def test_jaas_config_users_as_kafka_s_plain_login_module():
    entry = parse_jaas_config(
        "org.apache.kafka.common.security.plain.PlainLoginModule required\n"
        '  username="admin" password="admin-secret" user_admin="admin-secret" user_alice="a;b \\"c\\"";'
    )
    assert entry.flag == "required"
    assert entry.plain_users() == {"admin": "admin-secret", "alice": 'a;b "c"'}


@pytest.mark.parametrize(
    "text, message",
    [
        ('org.apache.kafka.common.security.plain.PlainLoginModule required user_a="x"', "not terminated by semi-colon"),
        ('org.apache.kafka.common.security.plain.PlainLoginModule user_a="x";', "control flag not specified"),
        ("org.apache.kafka.common.security.plain.PlainLoginModule required user_a;", "key=value pairs"),
    ],
)
def test_a_bad_jaas_config_is_refused(text, message):
    with pytest.raises(JaasConfigError, match=message):
        parse_jaas_config(text)


def test_plain_users_need_kafka_s_plain_login_module():
    with pytest.raises(JaasConfigError, match="expected org.apache.kafka.common.security.plain.PlainLoginModule"):
        parse_jaas_config("org.apache.kafka.common.security.scram.ScramLoginModule required;").plain_users()
