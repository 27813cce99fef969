"""SASL settings as Kafka's keys, refused with a message naming the listener and the key."""

from __future__ import annotations

import pytest

from trafka.adapters.memory import MemoryScramCredentialStore
from trafka.app.bootstrap import listeners_from
from trafka.app.config import ConfigError, load_settings
from trafka.app.security_wiring import authentication_from
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
    authentication = wire({
        "sasl_enabled_mechanisms": "PLAIN",
        "listener_name": {"sasl_plaintext": {"plain_sasl_jaas_config": JAAS}},
    })
    assert dict(authentication.listeners["SASL_PLAINTEXT"].plain_users) == {"alice": "a-secret"}


@pytest.mark.parametrize(
    "security, message",
    [
        ({}, "sasl.enabled.mechanisms GSSAPI is not supported"),
        ({"sasl_enabled_mechanisms": "PLAIN"}, "listener.name.sasl_plaintext.plain.sasl.jaas.config"),
        ({"sasl_enabled_mechanisms": "PLAIN", "listener_name": {"sasl_plaintext": {"plain_sasl_jaas_config": "nope"}}},
         "not terminated by semi-colon"),
        ({"sasl_enabled_mechanisms": "SCRAM-SHA-256", "listener_name": {"other": {}}}, "security.listener_name.other names no listener"),
        ({"sasl_enabled_mechanisms": " , "}, "has no sasl.enabled.mechanisms"),
    ],
)
def test_what_the_broker_refuses(security, message):
    with pytest.raises(ConfigError, match=message):
        wire(security)


def test_a_plaintext_listener_needs_no_sasl_settings():
    assert wire({}, "PLAINTEXT://127.0.0.1:0").listeners == {}
