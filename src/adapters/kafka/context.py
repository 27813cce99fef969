"""What a request handler can reach: the domain services, the advertised endpoint, the clock.

The composition root builds one `BrokerContext` per server. `AppendNotifier` is how a long-poll Fetch
learns that data arrived: produce calls `notify()`, waiters hold the event they were given.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import trio

from domain.catalog import TopicCatalog
from domain.configs import BrokerPolicy
from domain.producers import ProducerIdAllocator
from domain.transactions import TransactionService
from domain.replica_manager import ReplicaManager

from .groups import GroupRuntime
from .registry import HandlerRegistry


class AppendNotifier:
    def __init__(self) -> None:
        self._event = trio.Event()

    def notify(self) -> None:
        self._event.set()
        self._event = trio.Event()

    def next_append(self) -> trio.Event:
        """An event set by the next append (take it before checking the log, then wait on it)."""
        return self._event


@attrs.frozen
class ClientInfo:
    """Who sent a request: the client id from its header and the peer's address."""

    client_id: str
    host: str


@attrs.frozen
class Endpoint:
    host: str
    port: int


@attrs.define
class BrokerContext:
    catalog: TopicCatalog
    replicas: ReplicaManager
    policy: BrokerPolicy
    registry: HandlerRegistry
    groups: GroupRuntime
    producer_ids: ProducerIdAllocator
    transactions: TransactionService
    clock_ms: Callable[[], int]
    advertised: Endpoint = Endpoint("localhost", 9092)
    appends: AppendNotifier = attrs.field(factory=AppendNotifier)
    shutting_down: trio.Event = attrs.field(factory=trio.Event)
