"""Requests a SASL listener receives before authentication completes, answered as Kafka's
SaslServerAuthenticator answers them: which get a response, with which error, which are closed after
`connection.failed.authentication.delay.ms` (an AuthenticationException in Kafka) and which at once
(an invalid request or an illegal state, not an authentication failure).

The delay is 1 s here so that "delayed" and "at once" cannot be confused on a loaded machine.
"""

from __future__ import annotations

import struct
import time

import pytest
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse
from kafka.protocol.producer import ProduceRequest, ProduceResponse
from kafka.protocol.sasl import SaslHandshakeRequest

from .secured import sasl_config, secured_broker
from .test_sasl_wire import authenticate, handshake
from .wire import WireClient

DELAY = 1.0
ILLEGAL_SASL_STATE = 34


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory):
    config = sasl_config("SASL_PLAINTEXT://127.0.0.1:0").replace(
        "connection_failed_authentication_delay_ms = 100",
        f"connection_failed_authentication_delay_ms = {int(DELAY * 1000)}",
    )
    with secured_broker(tmp_path_factory.mktemp("sasl-before-auth"), config) as found:
        yield found["SASL_PLAINTEXT"]["bootstrap"]


@pytest.fixture
def sasl(bootstrap):
    with WireClient(bootstrap) as client:
        yield client
    with WireClient(bootstrap) as witness:  # the broker goes on serving everyone else
        assert handshake(witness, "PLAIN").error_code == 0
        assert authenticate(witness, b"\0alice\0alice-secret").error_code == 0
        assert witness.request(MetadataRequest[1](topics=[]), MetadataResponse, 1).brokers


def closed_unanswered(client: WireClient) -> float:
    """Seconds until the broker closes the connection, which must come with no response."""
    started = time.monotonic()
    assert client.sock.recv(1) == b"", "closed without a response"
    return time.monotonic() - started


def raw_header(api_key: int, version: int, correlation_id: int = 7) -> bytes:
    """A v1 request header (non-flexible) with client id "t", framed, and no body."""
    body = struct.pack(">hhih", api_key, version, correlation_id, 1) + b"t"
    return struct.pack(">i", len(body)) + body


def produce(acks: int) -> ProduceRequest:
    Topic = ProduceRequest[8].TopicProduceData
    return ProduceRequest[8](
        transactional_id=None,
        acks=acks,
        timeout_ms=1000,
        topic_data=[Topic(name="orders", partition_data=[Topic.PartitionProduceData(index=0, records=None)])],
    )


# -- before the handshake: Kafka raises IllegalSaslStateException before parsing, sends nothing --------


def test_produce_before_the_handshake_is_closed_after_the_delay_unanswered(sasl):
    sasl.send(produce(acks=1), 8)
    assert closed_unanswered(sasl) >= DELAY


def test_metadata_before_the_handshake_is_closed_after_the_delay_unanswered(sasl):
    sasl.request(ApiVersionsRequest[0](), ApiVersionsResponse, 0)
    sasl.send(MetadataRequest[1](topics=["orders"]), 1)
    assert closed_unanswered(sasl) >= DELAY


def test_an_unsupported_sasl_handshake_version_is_closed_at_once_unanswered(sasl):
    assert SaslHandshakeRequest.max_version == 1
    sasl.send_raw(raw_header(SaslHandshakeRequest.API_KEY, 2) + b"")
    assert closed_unanswered(sasl) < DELAY


def test_a_second_api_versions_is_closed_at_once_unanswered(sasl):
    sasl.request(ApiVersionsRequest[0](), ApiVersionsResponse, 0)
    sasl.send(ApiVersionsRequest[0](), 0)
    assert closed_unanswered(sasl) < DELAY


def test_an_unknown_api_key_first_is_a_gssapi_token_refused_after_the_delay(sasl):
    sasl.send_raw(raw_header(32000, 0))
    assert closed_unanswered(sasl) >= DELAY


def test_an_unknown_api_key_after_api_versions_is_closed_at_once(sasl):
    sasl.request(ApiVersionsRequest[0](), ApiVersionsResponse, 0)
    sasl.send_raw(raw_header(32000, 0))
    assert closed_unanswered(sasl) < DELAY


# -- between the handshake and authentication: the request's own error response, ILLEGAL_SASL_STATE ----


def test_metadata_between_handshake_and_authentication_is_answered_illegal_sasl_state(sasl):
    assert handshake(sasl, "PLAIN").error_code == 0
    started = time.monotonic()
    answer = sasl.request(MetadataRequest[1](topics=["orders", "payments"]), MetadataResponse, 1)
    assert time.monotonic() - started >= DELAY
    assert [(t.name, t.error_code, t.partitions) for t in answer.topics] == [
        ("orders", ILLEGAL_SASL_STATE, []),
        ("payments", ILLEGAL_SASL_STATE, []),
    ]
    assert answer.brokers == [], "nothing is served before authentication"
    assert closed_unanswered(sasl) < DELAY


def test_produce_between_handshake_and_authentication_is_answered_per_partition(sasl):
    assert handshake(sasl, "PLAIN").error_code == 0
    answer = sasl.request(produce(acks=1), ProduceResponse, 8)
    assert [(t.name, [(p.index, p.error_code) for p in t.partition_responses]) for t in answer.responses] == [
        ("orders", [(0, ILLEGAL_SASL_STATE)])
    ]
    assert closed_unanswered(sasl) < DELAY


def test_an_acks_0_produce_between_handshake_and_authentication_is_closed_at_once(sasl):
    assert handshake(sasl, "PLAIN").error_code == 0
    sasl.send(produce(acks=0), 8)
    assert closed_unanswered(sasl) < DELAY


def test_api_versions_between_handshake_and_authentication_is_answered_illegal_sasl_state(sasl):
    assert handshake(sasl, "PLAIN").error_code == 0
    correlation_id = sasl.send(ApiVersionsRequest[3](client_software_name="t", client_software_version="1"), 3)
    (size,) = struct.unpack(">i", sasl._read_exactly(4))
    answer = sasl._read_exactly(size)  # read by hand: kafka-python 3.0.12 cannot decode an empty api_keys
    # correlation id (response header v0), error code, api_keys (compact, empty), throttle, no tags
    assert answer == struct.pack(">ihBiB", correlation_id, ILLEGAL_SASL_STATE, 1, 0, 0)
    assert closed_unanswered(sasl) < DELAY


def test_an_unsupported_sasl_authenticate_version_is_closed_at_once_unanswered(sasl):
    assert handshake(sasl, "PLAIN").error_code == 0
    sasl.send_raw(raw_header(36, 3))
    assert closed_unanswered(sasl) < DELAY


def test_a_request_kafka_cannot_parse_during_authentication_is_closed_at_once(sasl):
    assert handshake(sasl, "PLAIN").error_code == 0
    sasl.send_raw(raw_header(3, 1) + b"\xff")  # Metadata v1 whose topic array is cut short
    assert closed_unanswered(sasl) < DELAY
