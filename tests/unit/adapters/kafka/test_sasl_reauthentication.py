"""Re-authentication (KIP-368) on the connection's SASL authenticator, under a fake clock."""

from __future__ import annotations

from tests.scram_client import ScramClient
from trafka.adapters.kafka.apis import build_registry
from trafka.adapters.kafka.security.authentication import Authentication, Failed, ListenerSasl, Reply, SaslAuthenticator
from trafka.adapters.memory import MemoryScramCredentialStore
from trafka.domain.security import ScramCredential, ScramMechanism, UserScramCredentials
from trafka.schema_codec.messages import SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest

USERS = {"alice": "a-secret", "bob": "b-secret"}


def authenticator(max_reauth_ms: int) -> SaslAuthenticator:
    credentials = UserScramCredentials(MemoryScramCredentialStore())
    sha = ScramMechanism.SCRAM_SHA_256
    credentials.upsert("alice", sha, ScramCredential.from_password(sha, "a-secret", b"salt-1", 4096))
    authentication = Authentication(credentials, lambda: "servernonce", max_reauth_ms=max_reauth_ms)
    return SaslAuthenticator(ListenerSasl(("PLAIN", "SCRAM-SHA-256"), USERS), authentication, build_registry())


def frame(request, version: int) -> bytes:
    request.with_header(correlation_id=7, client_id="t")
    return bytes(request.encode(version=version, header=True))


def handshake(mechanism: str) -> bytes:
    return frame(SaslHandshakeRequest[1](mechanism=mechanism), 1)


def token(data: bytes, version: int = 2) -> bytes:
    return frame(SaslAuthenticateRequest[version](auth_bytes=data), version)


def answer(step: Reply) -> SaslAuthenticateResponse:
    return SaslAuthenticateResponse.decode(step.response[4:], version=2, header=True)


def plain_login(auth: SaslAuthenticator, user: str, now_ms: int):
    assert auth.intercepts(handshake("PLAIN"))
    assert isinstance(auth.receive(handshake("PLAIN"), now_ms), Reply)
    return auth.receive(token(f"\0{user}\0{USERS[user]}".encode()), now_ms)


def test_the_session_lifetime_is_connections_max_reauth_ms_and_expires():
    auth = authenticator(1000)
    step = plain_login(auth, "alice", now_ms=5000)
    assert answer(step).session_lifetime_ms == 1000
    assert not auth.expired(6000) and auth.expired(6001)


def test_a_v0_authenticate_session_expires_too_as_kafka_closes_it_whatever_the_version():
    auth = authenticator(1000)
    auth.receive(handshake("PLAIN"), 0)
    auth.receive(token(b"\0alice\0a-secret", version=0), 0)
    assert auth.complete and not auth.expired(1000) and auth.expired(1001)


def test_a_v0_handshake_raw_token_session_expires_too():
    auth = authenticator(1000)
    auth.receive(frame(SaslHandshakeRequest[0](mechanism="PLAIN"), 0), 50)
    assert isinstance(auth.receive(b"\0alice\0a-secret", 50), Reply)
    assert auth.complete and not auth.expired(1050) and auth.expired(1051)


def test_no_lifetime_without_the_setting():
    plain = authenticator(0)
    assert answer(plain_login(plain, "alice", 0)).session_lifetime_ms == 0
    assert not plain.intercepts(handshake("PLAIN")), "a handshake after authentication is the ordinary handler's"


def test_re_authentication_as_the_same_user_renews_the_session():
    auth = authenticator(1000)
    plain_login(auth, "alice", now_ms=0)
    step = plain_login(auth, "alice", now_ms=900)
    assert answer(step).error_code == 0 and answer(step).session_lifetime_ms == 1000
    assert auth.complete and not auth.expired(1500) and auth.expired(1901)


def test_re_authentication_with_scram_after_plain_is_refused_as_a_mechanism_change():
    auth = authenticator(1000)
    plain_login(auth, "alice", now_ms=0)
    assert auth.intercepts(handshake("SCRAM-SHA-256"))
    auth.receive(handshake("SCRAM-SHA-256"), 10)
    failed = auth.receive(token(ScramClient("sha256", "alice", "a-secret").client_first()), 10)
    assert isinstance(failed, Failed)
    assert SaslAuthenticateResponse.decode(failed.response[4:], version=2, header=True).error_message == (
        "SASL mechanism 'SCRAM-SHA-256' requested by client is not supported for re-authentication of mechanism 'PLAIN'"
    )


def test_re_authentication_as_another_user_is_refused():
    auth = authenticator(1000)
    plain_login(auth, "alice", now_ms=0)
    failed = plain_login(auth, "bob", now_ms=10)
    assert isinstance(failed, Failed)
    assert SaslAuthenticateResponse.decode(failed.response[4:], version=2, header=True).error_message == (
        "Cannot change principals during re-authentication from User.alice: User.bob"
    )


def _token_login(max_reauth_ms: int, token_expiry_ms: int, now_ms: int) -> tuple[SaslAuthenticator, object]:
    """A delegation token's SCRAM login (tokenauth=true) as alice, the token expiring at `token_expiry_ms`."""
    import attrs

    sha = ScramMechanism.SCRAM_SHA_256
    credential = ScramCredential.from_password(sha, "the-hmac", b"salt-2", 4096)
    auth = authenticator(max_reauth_ms)
    auth._authentication = attrs.evolve(
        auth._authentication,
        tokens=lambda token_id, m: ("alice", credential, token_expiry_ms) if token_id == "tok" else None,
    )

    class TokenClient(ScramClient):
        @property
        def bare(self) -> str:
            return super().bare + ",tokenauth=true"

    client = TokenClient("sha256", "tok", "the-hmac")
    auth.receive(handshake("SCRAM-SHA-256"), now_ms)
    first = answer(auth.receive(token(client.client_first()), now_ms)).auth_bytes
    return auth, auth.receive(token(client.client_final(first)), now_ms)


def test_a_token_login_lasts_until_the_token_expires_as_kafkas_credential_lifetime():
    auth, step = _token_login(max_reauth_ms=0, token_expiry_ms=9_000, now_ms=5_000)
    assert answer(step).error_code == 0 and answer(step).session_lifetime_ms == 4_000
    assert auth.principal is not None and auth.principal.name == "alice" and auth.principal.token_authenticated
    assert not auth.expired(9_000) and auth.expired(9_001)
    shorter, step = _token_login(max_reauth_ms=1_000, token_expiry_ms=9_000, now_ms=5_000)
    assert answer(step).session_lifetime_ms == 1_000  # the smaller of the two
