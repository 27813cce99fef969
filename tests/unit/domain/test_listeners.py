"""Kafka's listener settings parsed and validated as Kafka's KafkaConfig does."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trafka.domain.listeners import (
    DEFAULT_SECURITY_PROTOCOL_MAP,
    Listener,
    ListenerConfigError,
    SecurityProtocol,
    parse_security_protocol_map,
    resolve_listeners,
)


def resolve(listeners, advertised=None, protocols=DEFAULT_SECURITY_PROTOCOL_MAP):
    return resolve_listeners(listeners, advertised, protocols, "broker.local")


def test_the_issue_s_three_listeners():
    found = resolve(
        "PLAINTEXT://0.0.0.0:9092,INTERNAL://0.0.0.0:29092,SECURE://0.0.0.0:9093",
        "PLAINTEXT://localhost:9092,INTERNAL://broker:29092,SECURE://broker.example:9093",
        "PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT,SECURE:SASL_SSL",
    )
    assert found == (
        Listener("PLAINTEXT", SecurityProtocol.PLAINTEXT, "0.0.0.0", 9092, "localhost", 9092),
        Listener("INTERNAL", SecurityProtocol.PLAINTEXT, "0.0.0.0", 29092, "broker", 29092),
        Listener("SECURE", SecurityProtocol.SASL_SSL, "0.0.0.0", 9093, "broker.example", 9093),
    )


def test_names_are_upper_cased_and_an_unadvertised_listener_advertises_itself():
    [listener] = resolve("sasl_ssl://kafka.local:9093")
    assert (listener.name, listener.security_protocol, listener.advertised_host) == (
        "SASL_SSL",
        SecurityProtocol.SASL_SSL,
        "kafka.local",
    )


def test_an_empty_host_binds_everything_and_advertises_the_default_host():
    [listener] = resolve("PLAINTEXT://:9092")
    assert (listener.host, listener.advertised_host) == ("", "broker.local")


def test_ipv6_hosts_in_brackets():
    [listener] = resolve("PLAINTEXT://[::1]:9092")
    assert listener.host == "::1"


def test_port_zero_advertises_the_bound_port_unless_an_advertised_port_is_given():
    plain, internal = resolve("PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", "SSL://broker:29093")
    assert plain.advertise(40001).advertised_port == 40001
    assert internal.advertise(40002).advertised_port == 29093
    assert internal.advertise(40002).port == 40002


@pytest.mark.parametrize(
    "listeners, advertised, protocols, message",
    [
        (
            "PLAINTEXT://localhost:9092,PLAINTEXT://localhost:9093",
            None,
            DEFAULT_SECURITY_PROTOCOL_MAP,
            "Each listener must have a different name",
        ),
        (
            "PLAINTEXT://localhost:9092,SSL://localhost:9092",
            None,
            DEFAULT_SECURITY_PROTOCOL_MAP,
            "Each listener must have a different port",
        ),
        (
            "INTERNAL://localhost:9092",
            None,
            DEFAULT_SECURITY_PROTOCOL_MAP,
            "No security protocol defined for listener INTERNAL",
        ),
        ("localhost:9092", None, DEFAULT_SECURITY_PROTOCOL_MAP, "Unable to parse localhost:9092 to a broker endpoint"),
        (
            "PLAINTEXT://0.0.0.0:9092",
            None,
            DEFAULT_SECURITY_PROTOCOL_MAP,
            "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0",
        ),
        (
            "PLAINTEXT://localhost:9092",
            "SSL://localhost:9093",
            DEFAULT_SECURITY_PROTOCOL_MAP,
            "advertised.listeners listener names must be equal to or a subset of the ones defined in listeners",
        ),
        ("PLAINTEXT://localhost:9092", None, "PLAINTEXT:TLS", "No enum constant SecurityProtocol.TLS"),
        ("PLAINTEXT://localhost:9092", None, "PLAINTEXT", "expected NAME:PROTOCOL"),
        ("PLAINTEXT://localhost:99999", None, DEFAULT_SECURITY_PROTOCOL_MAP, "port 99999 out of range"),
        ("", None, DEFAULT_SECURITY_PROTOCOL_MAP, "listeners must not be empty"),
    ],
)
def test_what_kafka_refuses(listeners, advertised, protocols, message):
    with pytest.raises(ListenerConfigError, match=message):
        resolve(listeners, advertised, protocols)


def test_the_default_map_names_each_protocol_after_itself():
    assert parse_security_protocol_map(DEFAULT_SECURITY_PROTOCOL_MAP) == {p.value: p for p in SecurityProtocol}


@given(
    st.lists(
        st.tuples(st.from_regex(r"[A-Z][A-Z_]{0,8}", fullmatch=True), st.sampled_from(list(SecurityProtocol))),
        min_size=1,
        max_size=5,
        unique_by=lambda item: item[0],
    )
)
def test_every_named_listener_resolves_with_its_protocol(named):
    protocols = ",".join(f"{name}:{protocol.value}" for name, protocol in named)
    listeners = ",".join(f"{name}://host{i}:{9000 + i}" for i, (name, _) in enumerate(named))
    found = resolve(listeners, None, protocols)
    assert [(x.name, x.security_protocol, x.advertised_host, x.advertised_port) for x in found] == [
        (name, protocol, f"host{i}", 9000 + i) for i, (name, protocol) in enumerate(named)
    ]
