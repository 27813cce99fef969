"""SASL settings as Kafka's keys, refused with a message naming the listener and the key."""

from __future__ import annotations

import pytest

from trafka.adapters.memory import MemoryScramCredentialStore
from trafka.app.config.settings import ConfigError, load_settings
from trafka.app.wiring.bootstrap import listeners_from
from trafka.app.wiring.security import authentication_from
from trafka.domain.security import UserScramCredentials

JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="a-secret";'


def wire(security: dict, listeners: str = "SASL_PLAINTEXT://127.0.0.1:0", protocols: str | None = None):
    server = {"listeners": listeners} | ({"listener_security_protocol_map": protocols} if protocols else {})
    settings = load_settings(None, None, {"server": server, "security": security})
    return authentication_from(settings, listeners_from(settings), UserScramCredentials(MemoryScramCredentialStore()))


def test_per_listener_mechanisms_and_plain_users():
    authentication = wire(
        {
            "sasl_enabled_mechanisms": "SCRAM-SHA-512",
            "listener_name": {"internal": {"sasl_enabled_mechanisms": "PLAIN", "plain_sasl_jaas_config": JAAS}},
        },
        "SASL_PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
        "SASL_PLAINTEXT:SASL_PLAINTEXT,INTERNAL:SASL_PLAINTEXT,PLAINTEXT:PLAINTEXT",
    )
    assert authentication.listeners["SASL_PLAINTEXT"].enabled_mechanisms == ("SCRAM-SHA-512",)
    assert authentication.listeners["INTERNAL"].enabled_mechanisms == ("PLAIN",)
    assert dict(authentication.listeners["INTERNAL"].plain_users) == {"alice": "a-secret"}
    assert "PLAINTEXT" not in authentication.listeners


def test_plain_users_from_the_listener_s_jaas_config():
    authentication = wire(
        {
            "sasl_enabled_mechanisms": "PLAIN",
            "listener_name": {"sasl_plaintext": {"plain_sasl_jaas_config": JAAS}},
        }
    )
    assert dict(authentication.listeners["SASL_PLAINTEXT"].plain_users) == {"alice": "a-secret"}


@pytest.mark.parametrize(
    "security, message",
    [
        ({}, "sasl.enabled.mechanisms GSSAPI is not supported"),
        ({"sasl_enabled_mechanisms": "PLAIN"}, "listener.name.sasl_plaintext.plain.sasl.jaas.config"),
        (
            {
                "sasl_enabled_mechanisms": "PLAIN",
                "listener_name": {"sasl_plaintext": {"plain_sasl_jaas_config": "nope"}},
            },
            "not terminated by semi-colon",
        ),
        (
            {"sasl_enabled_mechanisms": "SCRAM-SHA-256", "listener_name": {"other": {}}},
            "security.listener_name.other names no listener",
        ),
        ({"sasl_enabled_mechanisms": " , "}, "has no sasl.enabled.mechanisms"),
    ],
)
def test_what_the_broker_refuses(security, message):
    with pytest.raises(ConfigError, match=message):
        wire(security)


def test_a_plaintext_listener_needs_no_sasl_settings():
    assert wire({}, "PLAINTEXT://127.0.0.1:0").listeners == {}


# -- TLS ---------------------------------------------------------------------------------------------

import ssl  # noqa: E402

import trustme  # noqa: E402

from trafka.app.wiring.tls import tls_from  # noqa: E402


def tls(security: dict, listeners: str = "SSL://127.0.0.1:0"):
    settings = load_settings(None, None, {"server": {"listeners": listeners}, "security": security})
    return tls_from(settings, listeners_from(settings))


@pytest.fixture(scope="module")
def pem(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pem")
    ca = trustme.CA()
    server = ca.issue_cert("localhost")
    server.private_key_and_cert_chain_pem.write_to_path(str(folder / "server.pem"))
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    return {
        "keystore": str(folder / "server.pem"),
        "ca": str(folder / "ca.pem"),
        "key": server.private_key_pem.bytes().decode(),
        "chain": b"".join(p.bytes() for p in server.cert_chain_pems).decode(),
        "ca_pem": ca.cert_pem.bytes().decode(),
    }


def test_a_pem_keystore_file_with_client_auth_required(pem):
    found = tls(
        {
            "ssl_keystore_type": "PEM",
            "ssl_keystore_location": pem["keystore"],
            "ssl_client_auth": "required",
            "ssl_truststore_type": "PEM",
            "ssl_truststore_location": pem["ca"],
        }
    )
    assert found["SSL"].context.verify_mode == ssl.CERT_REQUIRED


def test_kafka_s_inline_pem_forms_per_listener(pem):
    found = tls(
        {
            "listener_name": {
                "sasl_ssl": {
                    "ssl_keystore_type": "PEM",
                    "ssl_keystore_key": pem["key"],
                    "ssl_keystore_certificate_chain": pem["chain"],
                    "ssl_client_auth": "requested",
                    "ssl_truststore_certificates": pem["ca_pem"],
                }
            },
            "sasl_enabled_mechanisms": "SCRAM-SHA-256",
        },
        "SASL_SSL://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
    )
    assert set(found) == {"SASL_SSL"}
    assert found["SASL_SSL"].context.verify_mode == ssl.CERT_OPTIONAL


@pytest.mark.parametrize(
    "security, message",
    [
        ({}, "ssl.keystore.type JKS is not supported; trafka reads PEM"),
        (
            {"ssl_keystore_type": "PEM"},
            "needs ssl.keystore.location, or ssl.keystore.key and ssl.keystore.certificate.chain",
        ),
        (
            {"ssl_keystore_type": "PEM", "ssl_keystore_location": "/nonexistent.pem"},
            "cannot read ssl.keystore.location /nonexistent.pem",
        ),
        (
            {"ssl_keystore_type": "PEM", "ssl_keystore_location": "KEYSTORE", "ssl_client_auth": "always"},
            "ssl.client.auth must be required, requested or none",
        ),
        (
            {"ssl_keystore_type": "PEM", "ssl_keystore_location": "KEYSTORE", "ssl_client_auth": "required"},
            "needs ssl.truststore.location or ssl.truststore.certificates",
        ),
        ({"ssl_keystore_type": "PEM", "ssl_keystore_location": "CA"}, "cannot load the TLS key and certificates"),
    ],
)
def test_tls_settings_the_broker_refuses(pem, security, message):
    security = {k: pem["keystore"] if v == "KEYSTORE" else pem["ca"] if v == "CA" else v for k, v in security.items()}
    with pytest.raises(ConfigError, match=message):
        tls(security)
