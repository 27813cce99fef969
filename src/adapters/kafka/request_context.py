"""Who sent a request and where it came in: the values every room, layer and the server share.

A leaf: it imports only the domain, so the modules that name a client (the rooms, the pipeline's
layers, the simulated cluster) need nothing else of the adapter to do so (Kafka's `RequestContext`).
"""

from __future__ import annotations

import attrs

from trafka.domain.security import ANONYMOUS, KafkaPrincipal


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
