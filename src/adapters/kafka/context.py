"""The connection plumbing: what the server and the request pipeline's layers need beside the services.

The composition root builds one `BrokerContext` per broker, frozen: nothing assigns into it afterwards.
It holds the broker's `BrokerServices` (`services.py`) and what serving connections takes: the handler
registry, SASL and TLS per listener, injected faults, the manual clock's signal and the shutdown
event. What changes once the broker runs is per-listener state (`Listening`: the listeners as bound,
the bootstrap address), set by the server when it binds.

A room's handler never receives this whole: it declares the few services it uses (its `Uses` class)
and `view(uses)` gives it those, drawn from the services, or for the three a room may need of the
plumbing (`registry`, `listening`, `shutting_down`) from here (ADR 103).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs
import trio

from trafka.domain.listeners import Listener

from .api import HandlerRegistry
from .connection.faults import Faults
from .request_context import Endpoint, Listening
from .security.authentication import Authentication
from .services import BrokerServices

if TYPE_CHECKING:
    from .connection.tls import ListenerTls  # loaded with a TLS listener only (issue 39)

ROOM_PLUMBING = frozenset({"registry", "listening", "shutting_down"})
"""What a room may declare of the plumbing: the APIs served (ApiVersions), the bound listeners
(DescribeQuorum), whether the broker is stopping (a long poll answers at once then)."""


class ClockSignal:
    """Wakes what waits on the broker's clock when a manual clock moves (`trafka.Broker(clock="manual")`):
    a wait is a real-time timeout cut short by the next `moved()`; with the wall clock nothing calls it."""

    def __init__(self) -> None:
        self._moved = trio.Event()

    def moved(self) -> None:
        moved, self._moved = self._moved, trio.Event()
        moved.set()

    async def wait(self, seconds: float) -> None:
        with trio.move_on_after(seconds):
            await self._moved.wait()


@attrs.frozen
class BrokerContext:
    """The broker's services and the connection plumbing, made by the composition root (`app/wiring/bootstrap.py`)."""

    services: BrokerServices
    registry: HandlerRegistry
    authentication: Authentication
    tls: Mapping[str, ListenerTls] = attrs.field(factory=dict)  # by listener name: SSL and SASL_SSL listeners
    listening: Listening = attrs.field(factory=lambda: Listening(Endpoint("localhost", 9092)))
    clock_signal: ClockSignal = attrs.field(factory=ClockSignal)  # the manual clock's moves
    shutting_down: trio.Event = attrs.field(factory=trio.Event)
    faults: Faults = attrs.field(factory=Faults)
    _views: dict[type, Any] = attrs.field(factory=dict, init=False, eq=False, repr=False)

    def view(self, uses: type) -> Any:
        """What a room declared it uses (an attrs class of service names), built once per broker."""
        built = self._views.get(uses)
        if built is None:
            built = self._views[uses] = uses(**{f.name: self._service(f.name) for f in attrs.fields(uses)})
        return built

    def _service(self, name: str) -> Any:
        if name in ROOM_PLUMBING:
            return getattr(self, name)
        return getattr(self.services, name)

    @property
    def advertised(self) -> Endpoint:
        """The first listener's advertised address: the bootstrap address."""
        return self.listening.advertised

    @property
    def listeners(self) -> tuple[Listener, ...]:
        """The listeners as bound (empty until the server listens)."""
        return self.listening.listeners
