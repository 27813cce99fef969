"""SASL on the wire, byte for byte: KIP-152 framing, v0 raw tokens, and every rejected case.

Each hostile case is answered as Kafka answers it (or the connection closed), after
`connection.failed.authentication.delay.ms`, while an authenticated connection keeps being served.
"""

from __future__ import annotations

import struct
import time

import pytest
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse
from kafka.protocol.producer import ProduceRequest
from kafka.protocol.sasl import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)

from ..scram_client import ScramClient
from .secured import SCRAM_USERS, add_scram_users, sasl_config, secured_broker
from .wire import WireClient

FAILED = 58
GENERIC = "Authentication failed during authentication due to invalid credentials with SASL mechanism {}"


@pytest.fixture(scope="module")
def listeners(tmp_path_factory):
    config = sasl_config("PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0")
    with secured_broker(tmp_path_factory.mktemp("sasl-wire"), config) as found:
        add_scram_users(found["PLAINTEXT"]["bootstrap"], SCRAM_USERS)
        yield found


@pytest.fixture(scope="module")
def witness(listeners):
    """An authenticated connection held open for the whole module: it must be served throughout."""
    with WireClient(listeners["SASL_PLAINTEXT"]["bootstrap"]) as client:
        assert handshake(client, "PLAIN").error_code == 0
        assert authenticate(client, b"\0alice\0alice-secret").error_code == 0
        yield client


@pytest.fixture
def sasl(listeners, witness):
    with WireClient(listeners["SASL_PLAINTEXT"]["bootstrap"]) as client:
        yield client
    metadata = witness.request(MetadataRequest[1](topics=[]), MetadataResponse, 1)
    assert metadata.brokers, "the authenticated connection is still served"


def handshake(client, mechanism, version=1):
    return client.request(SaslHandshakeRequest[version](mechanism=mechanism), SaslHandshakeResponse, version)


def authenticate(client, token, version=2):
    return client.request(SaslAuthenticateRequest[version](auth_bytes=token), SaslAuthenticateResponse, version)


def test_plain_succeeds_and_then_every_api_is_served(sasl):
    assert handshake(sasl, "PLAIN").mechanisms == ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
    answer = authenticate(sasl, b"\0alice\0alice-secret")
    assert (answer.error_code, answer.auth_bytes, answer.session_lifetime_ms) == (0, b"", 0)
    assert sasl.request(MetadataRequest[1](topics=[]), MetadataResponse, 1).brokers


def test_api_versions_is_served_before_the_handshake(sasl):
    versions = sasl.request(
        ApiVersionsRequest[3](client_software_name="t", client_software_version="1"), ApiVersionsResponse, 3
    )
    assert {SaslHandshakeRequest.API_KEY, SaslAuthenticateRequest.API_KEY} <= {k.api_key for k in versions.api_keys}
    assert handshake(sasl, "SCRAM-SHA-256").error_code == 0


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_succeeds_and_the_server_proves_itself(sasl, mechanism):
    client = ScramClient("sha" + mechanism[-3:], "carol", SCRAM_USERS["carol"])
    assert handshake(sasl, mechanism).error_code == 0
    first = authenticate(sasl, client.client_first())
    final = authenticate(sasl, client.client_final(first.auth_bytes))
    assert final.error_code == 0 and client.verify_server_final(final.auth_bytes)


def test_v0_handshake_then_raw_tokens_for_old_clients(sasl):
    assert handshake(sasl, "PLAIN", version=0).error_code == 0
    token = b"\0alice\0alice-secret"
    sasl.send_raw(struct.pack(">i", len(token)) + token)
    assert sasl._read_exactly(4) == struct.pack(">i", 0), "an empty server token, size-prefixed"
    assert sasl.request(MetadataRequest[1](topics=[]), MetadataResponse, 1).brokers


def _failed_then_closed(sasl, answer, message):
    assert (answer.error_code, answer.error_message) == (FAILED, message)
    assert sasl.is_closed_by_peer()


def test_a_wrong_plain_password_after_the_delay(sasl):
    handshake(sasl, "PLAIN")
    started = time.monotonic()
    answer = authenticate(sasl, b"\0alice\0wrong")
    assert time.monotonic() - started >= 0.1, "connection.failed.authentication.delay.ms"
    _failed_then_closed(sasl, answer, "Authentication failed: Invalid username or password")


def test_an_unknown_scram_user(sasl):
    handshake(sasl, "SCRAM-SHA-256")
    answer = authenticate(sasl, ScramClient("sha256", "mallory", "x").client_first())
    _failed_then_closed(sasl, answer, GENERIC.format("SCRAM-SHA-256"))


def test_a_wrong_scram_password(sasl):
    client = ScramClient("sha512", "carol", "not-her-password")
    handshake(sasl, "SCRAM-SHA-512")
    first = authenticate(sasl, client.client_first())
    _failed_then_closed(
        sasl, authenticate(sasl, client.client_final(first.auth_bytes)), GENERIC.format("SCRAM-SHA-512")
    )


def test_a_scram_final_message_with_a_bad_nonce(sasl):
    client = ScramClient("sha256", "carol", SCRAM_USERS["carol"])
    handshake(sasl, "SCRAM-SHA-256")
    first = authenticate(sasl, client.client_first())
    forged = client.client_final(first.auth_bytes, nonce=client.nonce + "forged")
    _failed_then_closed(sasl, authenticate(sasl, forged), GENERIC.format("SCRAM-SHA-256"))


def test_a_scram_final_message_with_a_bad_proof(sasl):
    client = ScramClient("sha256", "carol", SCRAM_USERS["carol"])
    handshake(sasl, "SCRAM-SHA-256")
    first = authenticate(sasl, client.client_first())
    forged = client.client_final(first.auth_bytes, proof=b"\1" * 32)
    _failed_then_closed(sasl, authenticate(sasl, forged), GENERIC.format("SCRAM-SHA-256"))


def test_an_unsupported_mechanism_is_told_the_enabled_ones_and_closed(sasl):
    answer = handshake(sasl, "GSSAPI")
    assert (answer.error_code, answer.mechanisms) == (33, ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
    assert sasl.is_closed_by_peer()


def _produce() -> ProduceRequest:
    return ProduceRequest[8](transactional_id=None, acks=1, timeout_ms=1000, topic_data=[])


def test_produce_before_the_handshake_closes_the_connection_unanswered(sasl):
    sasl.send(_produce(), 8)
    assert sasl.is_closed_by_peer()


def test_metadata_before_authentication_closes_the_connection(sasl):
    sasl.send(MetadataRequest[1](topics=[]), 1)
    assert sasl.is_closed_by_peer()


def test_a_second_api_versions_during_the_handshake_closes_the_connection(sasl):
    request = ApiVersionsRequest[0]()
    sasl.request(request, ApiVersionsResponse, 0)
    sasl.send(ApiVersionsRequest[0](), 0)
    assert sasl.is_closed_by_peer()


def test_garbage_during_authentication_closes_the_connection(sasl):
    handshake(sasl, "PLAIN")
    sasl.send_raw(struct.pack(">i", 6) + b"\x00\x24\x00\x09\xff\xff")
    assert sasl.is_closed_by_peer()


def test_sasl_after_authentication_is_an_illegal_state(sasl):
    handshake(sasl, "PLAIN")
    authenticate(sasl, b"\0bob\0bob-secret")
    assert authenticate(sasl, b"\0bob\0bob-secret").error_code == 34
    assert handshake(sasl, "PLAIN").error_code == 34


def test_a_handshake_on_a_plaintext_listener_is_an_illegal_state(listeners):
    with WireClient(listeners["PLAINTEXT"]["bootstrap"]) as client:
        answer = handshake(client, "PLAIN")
    assert (answer.error_code, answer.mechanisms) == (34, [])


def test_an_api_versions_of_a_newer_version_is_refused_and_the_client_may_ask_again(sasl):
    """A client asks a newer ApiVersions than served first (franz-go did with v5, issue 41): Kafka answers UNSUPPORTED_VERSION
    with a v0 body and stays ready for ApiVersions (SaslServerAuthenticator.handleApiVersionsRequest
    changes state only after a served one), so the client's retry at the version offered is served."""
    frame = bytearray(sasl.frame(ApiVersionsRequest[3](client_software_name="t", client_software_version="1"), 3))
    struct.pack_into(">h", frame, 6, 6)  # size (4), api key (2), then the api version: one past v5 (KIP-1242)
    sasl.send_raw(bytes(frame))
    refused = sasl.receive(ApiVersionsResponse, 0)
    assert refused.error_code == 35
    assert max(k.max_version for k in refused.api_keys if k.api_key == ApiVersionsRequest.API_KEY) == 5
    served = sasl.request(
        ApiVersionsRequest[3](client_software_name="t", client_software_version="1"), ApiVersionsResponse, 3
    )
    assert served.error_code == 0
    assert handshake(sasl, "PLAIN").error_code == 0
    assert authenticate(sasl, b"\0alice\0alice-secret").error_code == 0
