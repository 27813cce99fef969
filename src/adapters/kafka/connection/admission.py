"""Which connections the broker takes, and how long it keeps an idle one: Kafka's ConnectionQuotas and
the Selector's idle expiry.

- `max.connections`: with that many connections open (every listener together), the accept loops stop
  accepting until one closes, as Kafka's Acceptor waits for a connection slot; the clients wait in
  the kernel's backlog, the connections open keep being served.
- `max.connections.per.ip` (and `max.connections.per.ip.overrides`, `host:count,...`): a connection
  beyond its address's limit is closed at once, logged as Kafka logs it ("Rejected connection from
  ..., address already has the configured maximum of N connections.").
- `connections.max.idle.ms`: a connection that sent nothing for that long, with no response still
  to come, is closed (authenticated or not: Kafka has no other deadline before authentication).
- A connection waiting in the listen backlog is taken at the accept loop's next turn with every other
  one waiting there (up to `max.connections`), as Kafka's Acceptor, a thread of its own, takes them
  as they come: a broker whose loop is busy serving requests does not leave clients it has not
  accepted yet waiting on their first answer for seconds (franz-go opens a connection from the
  goroutine that writes every request to that broker, its heartbeats included).
- A listener whose `accept` fails (EMFILE: the process is at its descriptor limit) says so in one
  ERROR line, retries every 100 ms without logging, and says when it accepts again: once it has taken
  every client waiting in its backlog (a descriptor freed for a moment, taken by one client while
  others still wait, does not end the failure).
"""

from __future__ import annotations

import logging
import os
import socket as stdlib_socket
from collections import Counter
from collections.abc import Iterator, Mapping

import attrs
import trio

log = logging.getLogger("trafka.server")

UNLIMITED = 2**31 - 1  # Kafka's Int.MaxValue default for max.connections and max.connections.per.ip


@attrs.frozen
class ConnectionLimits:
    max_connections: int = UNLIMITED  # max.connections
    max_connections_per_ip: int = UNLIMITED  # max.connections.per.ip
    per_ip_overrides: Mapping[str, int] = attrs.field(factory=dict)  # address (Kafka's rendering) -> limit
    max_idle_ms: int = 600_000  # connections.max.idle.ms (10 min); -1 never closes an idle connection


class Admission:
    """The broker's open connections, counted per address and in total."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.open = 0
        self._per_ip: Counter[str] = Counter()
        self._closed = trio.Event()
        self._accept_failing = False

    async def wait_for_slot(self) -> None:
        """Return once fewer than `max.connections` are open."""
        while self.open >= self.limits.max_connections:
            await self._closed.wait()

    @property
    def has_slot(self) -> bool:
        """Fewer than `max.connections` are open."""
        return self.open < self.limits.max_connections

    def admit(self, host: str) -> bool:
        """Count a new connection from `host`, or refuse it (logged) when its address is at its limit."""
        limit = self.limits.per_ip_overrides.get(host, self.limits.max_connections_per_ip)
        if self._per_ip[host] >= limit:
            log.info(
                "Rejected connection from %s, address already has the configured maximum of %d connections.",
                host,
                limit,
            )
            return False
        self._per_ip[host] += 1
        self.open += 1
        return True

    def release(self, host: str) -> None:
        self.open -= 1
        self._per_ip[host] -= 1
        if not self._per_ip[host]:
            del self._per_ip[host]
        self._closed.set()
        self._closed = trio.Event()

    def accept_failed(self, listener: str, exc: OSError) -> None:
        if not self._accept_failing:
            self._accept_failing = True
            log.error(
                "listener %s cannot accept connections (%s); the %d connections open are still served",
                listener,
                exc,
                self.open,
            )

    def caught_up(self, listener: str) -> None:
        """The accept loop took every client waiting in `listener`'s backlog: a failure to accept is over.
        Not "a connection open at the failure closed": the closes free descriptors before they are
        counted (a stream's close is a checkpoint), so the backlog could be taken whole with the count
        unchanged and the recovery never said."""
        if self._accept_failing:
            self._accept_failing = False
            log.warning("listener %s accepts connections again", listener)


class Backlog:
    """The connections waiting in a listener's backlog, taken without waiting: the accept loop awaits
    the first (trio's `accept`, which yields to the scheduler once per connection) and then takes the
    rest here in the same turn. Works on a duplicate of the listening descriptor (closed with it)."""

    def __init__(self, listener: trio.SocketListener) -> None:
        self._socket = stdlib_socket.socket(fileno=os.dup(listener.socket.fileno()))
        self._socket.setblocking(False)
        self.empty = False  # the last `waiting` took every connection the kernel held

    def waiting(self, admission: Admission, limit: int) -> Iterator[trio.SocketStream]:
        """Up to `limit` connections the kernel holds, while `admission` has a slot for each; stops at
        the first refusal (EMFILE and friends: the accept loop's next `accept` reports it). Sets `empty`
        when it stopped because none was left."""
        self.empty = False
        for _ in range(limit):
            if not admission.has_slot:
                return
            try:
                accepted, _ = self._socket.accept()
            except BlockingIOError:  # none left
                self.empty = True
                return
            except OSError:
                return
            yield trio.SocketStream(trio.socket.from_stdlib_socket(accepted))

    def close(self) -> None:
        self._socket.close()
