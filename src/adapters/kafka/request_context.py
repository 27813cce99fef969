"""Who sent a request and where it came in: the values every room, layer and the server share.

A leaf: it imports only the domain, so the modules that name a client (the rooms, the pipeline's
layers, the simulated cluster) need nothing else of the adapter to do so (Kafka's `RequestContext`).
The listeners as bound and the shutdown signal live here too: the two things of the connection
plumbing a room may declare it uses (ADR 103).
"""

from __future__ import annotations

from typing import Protocol

import attrs

from trafka.domain.listeners import Listener
from trafka.domain.security import ANONYMOUS, KafkaPrincipal
from trafka.domain.security.acls import kafka_host


@attrs.frozen
class Endpoint:
    host: str
    port: int


@attrs.frozen
class ClientInfo:
    """Who sent a request: the client id from its header, the peer's address, and the listener it came in
    on with that listener's advertised address (what Metadata and FindCoordinator answer with)."""

    client_id: str
    host: str
    listener: str = "PLAINTEXT"
    advertised: Endpoint = Endpoint("localhost", 9092)
    principal: KafkaPrincipal = ANONYMOUS  # who authenticated on this connection (User:ANONYMOUS if nobody)
    connection: object = None  # the connection's identity (what its close releases: share sessions)
    sasl: bool = False  # the connection authenticated with SASL (a SASL_PLAINTEXT or SASL_SSL listener)

    @property
    def inet_address(self) -> str:
        """The peer as Kafka's `InetAddress.toString()` renders it, a group member's client host:
        `/127.0.0.1` (no name looked up, so nothing before the slash)."""
        return "/" + kafka_host(self.host)


@attrs.define
class Listening:
    """Per-listener state: the listeners with their bound ports once the server listens, and the first
    one's advertised address (the bootstrap address the embedded broker and the console show)."""

    advertised: Endpoint
    listeners: tuple[Listener, ...] = ()

    def bound(self, listeners: tuple[Listener, ...]) -> None:
        self.listeners = listeners
        self.advertised = Endpoint(listeners[0].advertised_host, listeners[0].advertised_port)


class ShutdownSignal(Protocol):
    """Whether the broker is stopping (the server's `trio.Event`): a long poll answers at once then."""

    def is_set(self) -> bool: ...
