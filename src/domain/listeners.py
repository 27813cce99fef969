"""Listeners as Kafka configures them: `listeners`, `advertised.listeners`, `listener.security.protocol.map`.

`resolve_listeners` parses the three strings the way Kafka's `SocketServerConfigs.listenerListToEndPoints`
and `KafkaConfig` validation do and pairs each listener with what Metadata and FindCoordinator tell the
clients that connect through it. Each entry is `NAME://host:port`; the name is upper-cased, an empty
host binds every interface, an IPv6 host sits in brackets. Every listener name needs a security
protocol from the map (which by default maps each protocol's own name to itself), names and ports are
distinct, advertised names are a subset of the listeners, and no advertised host is 0.0.0.0.

A listener without an advertised entry advertises its own host; an empty host there is filled in by
the caller's `default_host` (Kafka uses the machine's canonical host name). An advertised port of 0
means the port the listener was bound to, known only once it listens (`Listener.advertise`).
"""

from __future__ import annotations

import enum
import re

import attrs


class SecurityProtocol(enum.Enum):
    PLAINTEXT = "PLAINTEXT"
    SSL = "SSL"
    SASL_PLAINTEXT = "SASL_PLAINTEXT"
    SASL_SSL = "SASL_SSL"

    @property
    def uses_tls(self) -> bool:
        return self in (SecurityProtocol.SSL, SecurityProtocol.SASL_SSL)

    @property
    def uses_sasl(self) -> bool:
        return self in (SecurityProtocol.SASL_PLAINTEXT, SecurityProtocol.SASL_SSL)


DEFAULT_SECURITY_PROTOCOL_MAP = ",".join(f"{p.value}:{p.value}" for p in SecurityProtocol)

_ENDPOINT = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


class ListenerConfigError(ValueError):
    """A listener setting Kafka would refuse; the message is Kafka's."""


@attrs.frozen
class ListenerEndpoint:
    name: str
    security_protocol: SecurityProtocol
    host: str  # "" binds every interface
    port: int


@attrs.frozen
class Listener:
    """One listener: where it binds and what it advertises (port 0: the bound port)."""

    name: str
    security_protocol: SecurityProtocol
    host: str
    port: int
    advertised_host: str
    advertised_port: int

    def advertise(self, bound_port: int) -> Listener:
        """This listener once bound: an advertised port of 0 becomes the bound one."""
        return attrs.evolve(self, port=bound_port, advertised_port=self.advertised_port or bound_port)


def parse_security_protocol_map(text: str) -> dict[str, SecurityProtocol]:
    out: dict[str, SecurityProtocol] = {}
    for entry in _csv(text):
        name, sep, protocol = entry.partition(":")
        if not sep:
            raise ListenerConfigError(f"Invalid listener.security.protocol.map entry {entry!r}: expected NAME:PROTOCOL")
        try:
            security = SecurityProtocol[protocol.strip().upper()]
        except KeyError:
            raise ListenerConfigError(f"No enum constant SecurityProtocol.{protocol.strip()}") from None
        key = name.strip().upper()
        if key in out:
            raise ListenerConfigError(f"Duplicate listener name {key} in listener.security.protocol.map")
        out[key] = security
    return out


def parse_endpoints(text: str, protocols: dict[str, SecurityProtocol]) -> list[ListenerEndpoint]:
    endpoints = []
    for entry in _csv(text):
        match = _ENDPOINT.match(entry)
        if match is None:
            raise ListenerConfigError(
                f"Error creating broker listeners from '{text}': Unable to parse {entry} to a broker endpoint"
            )
        name, host, port = match.group(1).upper(), match.group(2), int(match.group(3))
        if name not in protocols:
            raise ListenerConfigError(
                f"Error creating broker listeners from '{text}': No security protocol defined for listener {name}"
            )
        if not 0 <= port <= 65535:
            raise ListenerConfigError(f"Error creating broker listeners from '{text}': port {port} out of range")
        endpoints.append(ListenerEndpoint(name, protocols[name], host, port))
    names = [e.name for e in endpoints]
    if len(set(names)) != len(names):
        raise ListenerConfigError(f"Each listener must have a different name, listeners: {text}")
    return endpoints


def resolve_listeners(
    listeners: str, advertised_listeners: str | None, protocol_map: str, default_host: str
) -> tuple[Listener, ...]:
    """Every listener with its advertised address, validated as Kafka validates them."""
    protocols = parse_security_protocol_map(protocol_map)
    bound = parse_endpoints(listeners, protocols)
    if not bound:
        raise ListenerConfigError("listeners must not be empty")
    ports = [e.port for e in bound if e.port != 0]
    if len(set(ports)) != len(ports):
        raise ListenerConfigError(f"Each listener must have a different port, listeners: {listeners}")
    advertised = {e.name: e for e in parse_endpoints(advertised_listeners, protocols)} if advertised_listeners else {}
    unknown = set(advertised) - {e.name for e in bound}
    if unknown:
        raise ListenerConfigError(
            "advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. "
            f"Found {','.join(advertised)}. The valid options based on the current configuration are "
            f"{','.join(e.name for e in bound)}"
        )
    out = []
    for endpoint in bound:
        shown = advertised.get(endpoint.name, endpoint)
        if shown.host == "0.0.0.0":
            raise ListenerConfigError(
                "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address."
            )
        out.append(
            Listener(
                endpoint.name,
                endpoint.security_protocol,
                endpoint.host,
                endpoint.port,
                shown.host or default_host,
                shown.port,
            )
        )
    return tuple(out)


def _csv(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]
