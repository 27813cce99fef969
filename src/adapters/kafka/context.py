"""What a request handler can reach: the domain services, the advertised endpoint, the clock.

The composition root builds one `BrokerContext` per broker, frozen: nothing assigns into it afterwards.
What changes once the broker runs is per-listener state (`Listening`: the listeners as bound, the
bootstrap address), set by the server when it binds. `AppendNotifier` is how a long-poll Fetch
learns that data arrived on one of its partitions: it registers an event for those partitions before
reading, and produce sets the events of the partitions it appended to, so a parked fetch wakes only
for its own partitions (as Kafka's delayed-fetch purgatory is keyed by partition). `notify_all` wakes
every parked fetch (transaction markers moving last stable offsets, shutdown).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

import attrs
import trio

from trafka.domain.catalog import TopicCatalog
from trafka.domain.configs import BrokerPolicy
from trafka.domain.errors import ErrorCode
from trafka.domain.features import FeatureControl
from trafka.domain.fetch_sessions import MAX_SLOTS, FetchSessionCache
from trafka.domain.listeners import Listener
from trafka.domain.ports import BrokerObserver
from trafka.domain.producers import ProducerIdAllocator
from trafka.domain.quotas import QuotaSensors
from trafka.domain.replica_manager import ReplicaManager
from trafka.domain.security import UserScramCredentials
from trafka.domain.telemetry import ClientTelemetry
from trafka.domain.topics import TopicPartition
from trafka.domain.transactions import TransactionService

from .connection.faults import Faults
from .connection.tls import ListenerTls
from .security.authentication import Authentication

if TYPE_CHECKING:
    from trafka.domain.groups.recorded_configs import DurableGroupConfigs

    from .cluster import ClusterMap
    from .security.authorization import AuthorizationGate
    from .share_runtime import ShareRuntime
from .api import HandlerRegistry
from .group_runtime import GroupRuntime
from .request_context import ClientInfo as ClientInfo  # re-exported: the app and tests name it here
from .request_context import Endpoint as Endpoint
from .unit_of_work import UnitOfWork


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


class Waiter(Protocol):
    def set(self) -> None: ...


class AppendNotifier:
    """Who waits for the next append to a partition: Trio events (a parked task wakes in a later
    scheduler pass), or completers, whose `set()` runs at once in the appending task, after the
    events are set (a parked Fetch that reads and answers right there, ADR 58)."""

    def __init__(self) -> None:
        self._waiters: dict[TopicPartition, set[Waiter]] = {}
        self.woken = 0  # how many times a notify woke a parked fetch's task (the reader answers those first)

    def waiter(self, partitions: Iterable[TopicPartition]) -> trio.Event:
        """An event set by the next append to any of `partitions` (take it before reading the logs)."""
        event = trio.Event()
        self.add(event, partitions)
        return event

    def add(self, waiter: Waiter, partitions: Iterable[TopicPartition]) -> None:
        """`waiter.set()` at the next append to any of `partitions` (once: it is then forgotten there)."""
        for tp in partitions:
            self._waiters.setdefault(tp, set()).add(waiter)

    def forget(self, event: Waiter, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            waiting = self._waiters.get(tp)
            if waiting is not None:
                waiting.discard(event)
                if not waiting:
                    del self._waiters[tp]

    def notify(self, partitions: Iterable[TopicPartition]) -> None:
        if not self._waiters:  # no fetch is waiting: the common case while producers are busy
            return
        completers: set[Waiter] = set()
        for tp in partitions:
            waiting = self._waiters.pop(tp, None)
            if waiting:
                self._set(waiting, completers)
        for completer in completers:
            completer.set()

    def notify_all(self) -> None:
        waiters, self._waiters = self._waiters, {}
        completers: set[Waiter] = set()
        for waiting in waiters.values():
            self._set(waiting, completers)
        for completer in completers:
            completer.set()

    def _set(self, waiting: set[Waiter], completers: set[Waiter]) -> None:
        """Set the events among `waiting`; gather its completers (each runs once per notify)."""
        woke = False
        for waiter in waiting:
            if type(waiter) is trio.Event:
                waiter.set()
                woke = True
            else:
                completers.add(waiter)
        if woke:
            self.woken += 1


def fetch_session_cache(max_slots: int = MAX_SLOTS) -> FetchSessionCache:
    """The broker's fetch sessions, with random session ids as Kafka's (`ThreadLocalRandom`)."""
    draw = random.Random()
    return FetchSessionCache(lambda: draw.randint(1, 2**31 - 2), max_slots)


class UnobservedBroker:
    """The `BrokerObserver` when nothing collects metrics."""

    def connection_opened(self, listener: str) -> None:
        pass

    def connection_closed(self, listener: str) -> None:
        pass

    def request_completed(self, api: str, version: int, seconds: float) -> None:
        pass

    def partition_produced(self, topic: str, error: ErrorCode, records: int, size: int) -> None:
        pass

    def partition_fetched(self, topic: str, error: ErrorCode, size: int) -> None:
        pass


@attrs.define
class Listening:
    """Per-listener state: the listeners with their bound ports once the server listens, and the first
    one's advertised address (the bootstrap address the embedded broker and the console show)."""

    advertised: Endpoint
    listeners: tuple[Listener, ...] = ()

    def bound(self, listeners: tuple[Listener, ...]) -> None:
        self.listeners = listeners
        self.advertised = Endpoint(listeners[0].advertised_host, listeners[0].advertised_port)


@attrs.frozen
class BrokerContext:
    """The broker's services, made by the composition root (`app/wiring/bootstrap.py`)."""

    catalog: TopicCatalog
    replicas: ReplicaManager
    policy: BrokerPolicy
    registry: HandlerRegistry
    groups: GroupRuntime
    unit_of_work: UnitOfWork  # writes what a call decided and wakes what it released (ADR 79)
    producer_ids: ProducerIdAllocator
    transactions: TransactionService
    clock_ms: Callable[[], int]
    credentials: UserScramCredentials
    authentication: Authentication
    quotas: QuotaSensors  # client quotas: what is set (`quotas.quotas`) and the rates they bound
    tls: Mapping[str, ListenerTls] = attrs.field(factory=dict)  # by listener name: SSL and SASL_SSL listeners
    authorization: AuthorizationGate | None = None  # set when `authorizer.class.name` is
    listening: Listening = attrs.field(factory=lambda: Listening(Endpoint("localhost", 9092)))
    appends: AppendNotifier = attrs.field(factory=AppendNotifier)
    clock_signal: ClockSignal = attrs.field(factory=ClockSignal)  # the manual clock's moves
    shutting_down: trio.Event = attrs.field(factory=trio.Event)
    faults: Faults = attrs.field(factory=Faults)
    observer: BrokerObserver = attrs.field(factory=UnobservedBroker)  # metrics, when the app wires them
    telemetry: ClientTelemetry | None = None  # KIP-714's pushed client metrics, with the HTTP listener
    features: FeatureControl = attrs.field(kw_only=True)  # supported and finalized features (UpdateFeatures)
    cluster: ClusterMap | None = None  # several simulated brokers over this one (trafka.Cluster)
    share: ShareRuntime | None = None  # share groups (KIP-932), unless turned off
    fetch_sessions: FetchSessionCache = attrs.field(factory=lambda: fetch_session_cache())  # KIP-227 (ADR 56)
    group_configs: DurableGroupConfigs | None = None  # the GROUP config resource's store (not durable: None)

    @property
    def advertised(self) -> Endpoint:
        """The first listener's advertised address: the bootstrap address."""
        return self.listening.advertised

    @property
    def listeners(self) -> tuple[Listener, ...]:
        """The listeners as bound (empty until the server listens)."""
        return self.listening.listeners
