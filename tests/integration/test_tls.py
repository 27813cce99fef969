"""TLS with real clients and real certificates made at run time (trustme): confluent-kafka over
SASL_SSL with SCRAM-SHA-512, kafka-python over SSL with a client certificate (mTLS), and the hostile
cases: a plaintext client on the TLS port, a TLS client on the plaintext port, a half-finished
handshake, a missing client certificate. The broker goes on serving TLS clients through each."""

from __future__ import annotations

import socket
import ssl
import time

import pytest
import trustme
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic as KpNewTopic
from kafka.errors import KafkaError as KpKafkaError
from kafka.protocol.metadata import ApiVersionsRequest, MetadataRequest, MetadataResponse

from tests.waiting import eventually

from .clients import TIMEOUT, consume_in_group, unique
from .secured import SCRAM_USERS, add_scram_users, secured_broker
from .wire import WireClient

HANDSHAKE_TIMEOUT_MS = 1500


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pki")
    ca = trustme.CA()
    server = ca.issue_cert("localhost", "127.0.0.1")
    client = ca.issue_cert(
        "client.test", common_name="svc-orders", organization_name="Example", organization_unit_name="eng"
    )
    paths = {
        "ca": folder / "ca.pem",
        "server": folder / "server.pem",
        "client_cert": folder / "client.pem",
        "client_key": folder / "client.key",
    }
    ca.cert_pem.write_to_path(str(paths["ca"]))
    server.private_key_and_cert_chain_pem.write_to_path(str(paths["server"]))
    client.cert_chain_pems[0].write_to_path(str(paths["client_cert"]))
    client.private_key_pem.write_to_path(str(paths["client_key"]))
    return paths


def tls_config(pki) -> str:
    return f"""
[server]
listeners = "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0"

[security]
ssl_keystore_type = "PEM"
ssl_keystore_location = "{pki["server"]}"
ssl_truststore_type = "PEM"
ssl_truststore_location = "{pki["ca"]}"
ssl_handshake_timeout_ms = {HANDSHAKE_TIMEOUT_MS}
sasl_enabled_mechanisms = "SCRAM-SHA-512"
authorizer_class_name = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
allow_everyone_if_no_acl_found = true

[security.listener_name.ssl]
ssl_client_auth = "required"
"""


@pytest.fixture(scope="module")
def tls_broker(tmp_path_factory, pki):
    with secured_broker(tmp_path_factory.mktemp("tls"), tls_config(pki)) as listeners:
        add_scram_users(listeners["PLAINTEXT"]["bootstrap"], SCRAM_USERS)
        yield listeners


def client_ssl_context(pki, with_certificate=True) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki["ca"]))
    if with_certificate:
        context.load_cert_chain(str(pki["client_cert"]), str(pki["client_key"]))
    return context


def tls_metadata(bootstrap: str, context: ssl.SSLContext) -> MetadataResponse:
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=host) as sock:
            request = MetadataRequest[1](topics=[])
            request.with_header(correlation_id=1, client_id="tls-test")
            sock.sendall(bytes(request.encode(version=1, header=True, framed=True)))
            size = int.from_bytes(_read(sock, 4), "big")
            return MetadataResponse.decode(_read(sock, size), version=1, header=True)


def _read(sock, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


@pytest.fixture
def still_serving(tls_broker, pki):
    yield
    assert tls_metadata(tls_broker["SSL"]["bootstrap"], client_ssl_context(pki)).brokers


def test_confluent_kafka_over_sasl_ssl_with_scram_sha_512(tls_broker, pki):
    security = {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "carol",
        "sasl.password": SCRAM_USERS["carol"],
        "ssl.ca.location": str(pki["ca"]),
        "log_level": 0,
    }
    bootstrap = tls_broker["SASL_SSL"]["bootstrap"]
    topic = unique("sasl-ssl")
    admin = AdminClient({"bootstrap.servers": bootstrap, **security})
    assert admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])[topic].result(TIMEOUT) is None
    producer = Producer({"bootstrap.servers": bootstrap, **security})
    for i in range(10):
        producer.produce(topic, value=f"s{i}".encode())
    assert producer.flush(TIMEOUT) == 0
    seen = consume_in_group(bootstrap, topic, 10, **security)
    assert seen == [f"s{i}".encode() for i in range(10)]


def kafka_python_ssl(pki, with_certificate=True) -> dict:
    return {"security_protocol": "SSL", "ssl_context": client_ssl_context(pki, with_certificate)}


def test_kafka_python_over_ssl_with_a_client_certificate(tls_broker, pki):
    bootstrap = tls_broker["SSL"]["bootstrap"]
    topic = unique("mtls")
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, **kafka_python_ssl(pki))
    try:
        admin.create_topics([KpNewTopic(topic, 1, 1)])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, **kafka_python_ssl(pki))
    for i in range(5):
        producer.send(topic, f"m{i}".encode())
    producer.flush(TIMEOUT)
    producer.close()
    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=unique("g"),
        auto_offset_reset="earliest",
        consumer_timeout_ms=int(TIMEOUT * 1000),
        **kafka_python_ssl(pki),
    )
    try:
        assert [next(consumer).value for _ in range(5)] == [f"m{i}".encode() for i in range(5)]
    finally:
        consumer.close()


def _logged(broker, before: int, text: str, timeout: float = TIMEOUT) -> bool:
    return eventually(lambda: any(text in line for line in broker.output[before:]), timeout, what=repr(text))


def test_a_client_without_a_certificate_where_one_is_required(tls_broker, pki, still_serving):
    broker = tls_broker["SSL"]["process"]
    before = len(broker.output)
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        tls_metadata(tls_broker["SSL"]["bootstrap"], client_ssl_context(pki, with_certificate=False))
    assert _logged(broker, before, "TLS handshake failed")
    with pytest.raises(KpKafkaError):
        KafkaAdminClient(
            bootstrap_servers=tls_broker["SSL"]["bootstrap"],
            bootstrap_timeout_ms=2000,
            **kafka_python_ssl(pki, with_certificate=False),
        )


def test_a_plaintext_client_on_the_tls_port(tls_broker, still_serving):
    broker = tls_broker["SSL"]["process"]
    before = len(broker.output)
    with WireClient(tls_broker["SSL"]["bootstrap"]) as client:
        client.send(ApiVersionsRequest[0](), 0)
        assert client.is_closed_by_peer()
    assert _logged(broker, before, "TLS handshake failed")


def test_a_tls_client_on_the_plaintext_port(tls_broker, pki, still_serving):
    broker = tls_broker["PLAINTEXT"]["process"]
    before = len(broker.output)
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        tls_metadata(tls_broker["PLAINTEXT"]["bootstrap"], client_ssl_context(pki))
    assert _logged(broker, before, "closing connection from")
    with WireClient(tls_broker["PLAINTEXT"]["bootstrap"]) as client:
        assert client.request(MetadataRequest[1](topics=[]), MetadataResponse, 1).brokers


def test_a_half_finished_handshake_costs_one_connection_and_a_log_line(tls_broker, pki, still_serving):
    broker = tls_broker["SSL"]["process"]
    before = len(broker.output)
    host, port = tls_broker["SSL"]["bootstrap"].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as stalled:
        stalled.sendall(b"\x16\x03\x01\x02\x00\x01")  # the start of a ClientHello, then silence
        assert tls_metadata(tls_broker["SSL"]["bootstrap"], client_ssl_context(pki)).brokers, (
            "others are served meanwhile"
        )
        started = time.monotonic()
        assert stalled.recv(1) == b"", "the broker closes the stalled connection"
        assert time.monotonic() - started < HANDSHAKE_TIMEOUT_MS / 1000 + 5
    assert _logged(broker, before, f"TLS handshake not finished in {HANDSHAKE_TIMEOUT_MS / 1000:.1f} s")


def test_the_client_certificate_subject_is_the_principal_acls_name(tls_broker, pki):
    from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, ResourcePatternType, ResourceType
    from kafka.errors import TopicAuthorizationFailedError

    topic = unique("guarded")
    admin = AdminClient({"bootstrap.servers": tls_broker["PLAINTEXT"]["bootstrap"], "log_level": 0})
    assert admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(TIMEOUT) is None
    deny = AclBinding(
        ResourceType.TOPIC,
        topic,
        ResourcePatternType.LITERAL,
        "User:CN=svc-orders,OU=eng,O=Example",
        "*",
        AclOperation.WRITE,
        AclPermissionType.DENY,
    )
    everyone = AclBinding(
        ResourceType.TOPIC,
        topic,
        ResourcePatternType.LITERAL,
        "User:*",
        "*",
        AclOperation.WRITE,
        AclPermissionType.ALLOW,
    )
    for future in admin.create_acls([deny, everyone]).values():
        assert future.result(TIMEOUT) is None
    others = Producer(
        {
            "bootstrap.servers": tls_broker["SASL_SSL"]["bootstrap"],
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "carol",
            "sasl.password": SCRAM_USERS["carol"],
            "ssl.ca.location": str(pki["ca"]),
            "log_level": 0,
        }
    )
    others.produce(topic, b"allowed")
    assert others.flush(TIMEOUT) == 0, "User:carol may write"
    producer = KafkaProducer(
        bootstrap_servers=tls_broker["SSL"]["bootstrap"], max_block_ms=5000, **kafka_python_ssl(pki)
    )
    try:
        with pytest.raises(TopicAuthorizationFailedError):
            producer.send(topic, b"x").get(TIMEOUT)
    finally:
        producer.close()
