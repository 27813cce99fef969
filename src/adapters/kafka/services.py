"""The broker's services: what the rooms serve Kafka's APIs with (ADR 103).

The composition root builds one `BrokerServices` per broker, frozen. A room never receives it whole:
its handler's first parameter is a small frozen class naming the few services it uses (`Uses` in each
room), and the registry hands it just those (`api.inject`, cosmicpython's `inject_dependencies`;
Tansu narrows state per route the same way). The connection plumbing (listeners, TLS, SASL, faults,
the shutdown event) is `context.BrokerContext`, which holds these services beside it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import attrs

from trafka.domain.catalog import TopicCatalog
from trafka.domain.configs import BrokerPolicy
from trafka.domain.features import FeatureControl
from trafka.domain.fetch_sessions import MAX_SLOTS, FetchSessionCache
from trafka.domain.ports import BrokerObserver
from trafka.domain.producers import ProducerIdAllocator
from trafka.domain.quotas import QuotaSensors
from trafka.domain.replica_manager import ReplicaManager
from trafka.domain.security import UserScramCredentials

from .internal_topics import InternalTopics
from .observing import UnobservedBroker
from .runtime.group_runtime import GroupRuntime
from .runtime.purgatory import Purgatory
from .runtime.unit_of_work import UnitOfWork

if TYPE_CHECKING:
    from trafka.domain.groups.recorded_configs import DurableGroupConfigs
    from trafka.domain.security.delegation_tokens import DelegationTokens
    from trafka.domain.telemetry import ClientTelemetry
    from trafka.domain.transactions import TransactionService

    from .cluster import ClusterMap
    from .runtime.share_runtime import ShareRuntime
    from .security.authorization import AuthorizationGate

AppendNotifier = Purgatory  # the name the wiring and the stores know it by: what an append notifies

T = TypeVar("T")


class BuiltOnFirstUse(Generic[T]):
    """A service the composition root builds at its first use (ADR 118, the pattern of ADR 110's streams
    coordinator): `get()` builds it once; `built` is it once built (None before), for the steps that only
    tend what exists (a closing connection's share sessions); `when_built` calls back with it then, or at
    once if it is built (the supervisor starts its timer task so)."""

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self.built: T | None = None
        self._callbacks: list[Callable[[T], None]] = []

    def get(self) -> T:
        if self.built is None:
            self.built = self._build()
            for callback in self._callbacks:
                callback(self.built)
        return self.built

    def when_built(self, callback: Callable[[T], None]) -> None:
        self._callbacks.append(callback)
        if self.built is not None:
            callback(self.built)


def _tokens_unconfigured() -> DelegationTokens:
    """Delegation tokens without a secret key and without a store: disabled, as Kafka's by default."""
    from trafka.domain.security.delegation_tokens import DelegationTokens, TokenSettings

    class _Nowhere:
        def load_tokens(self) -> list[Any]:
            return []

        def token_written(self, token: object) -> None:
            raise AssertionError("tokens are disabled")

        def token_removed(self, token_id: str) -> None:
            raise AssertionError("tokens are disabled")

    return DelegationTokens(TokenSettings(), _Nowhere(), lambda: "", lambda: b"")


def fetch_session_cache(max_slots: int = MAX_SLOTS) -> FetchSessionCache:
    """The broker's fetch sessions, with random session ids as Kafka's (`ThreadLocalRandom`)."""
    draw = random.Random()
    return FetchSessionCache(lambda: draw.randint(1, 2**31 - 2), max_slots)


@attrs.frozen
class BrokerServices:
    """The domain services and their runtimes, made by the composition root (`app/wiring/bootstrap.py`)."""

    catalog: TopicCatalog
    replicas: ReplicaManager
    policy: BrokerPolicy
    groups: GroupRuntime
    unit_of_work: UnitOfWork  # writes what a call decided and wakes what it released (ADR 79)
    producer_ids: ProducerIdAllocator
    transaction_service: BuiltOnFirstUse[TransactionService]  # the coordinator: built at its first use
    clock_ms: Callable[[], int]
    credentials: UserScramCredentials
    quotas: QuotaSensors  # client quotas: what is set (`quotas.quotas`) and the rates they bound
    features: FeatureControl  # supported and finalized features (UpdateFeatures)
    authorization: AuthorizationGate | None = None  # set when `authorizer.class.name` is
    appends: Purgatory = attrs.field(factory=Purgatory)  # parked requests, woken by appends (ADR 80)
    observer: BrokerObserver = attrs.field(factory=UnobservedBroker)  # metrics, when the app wires them
    telemetry: ClientTelemetry | None = None  # KIP-714's pushed client metrics, with the HTTP listener
    cluster: ClusterMap | None = None  # several simulated brokers over this one (trafka.Cluster)
    share_groups: BuiltOnFirstUse[ShareRuntime] | None = None  # share groups (KIP-932), unless turned off
    fetch_sessions: FetchSessionCache = attrs.field(factory=lambda: fetch_session_cache())  # KIP-227 (ADR 56)
    group_configs: DurableGroupConfigs | None = None  # the GROUP config resource's store (not durable: None)
    internal_topics: InternalTopics = attrs.field(factory=InternalTopics)  # which Metadata lists (issue 41)
    # delegation tokens (KIP-48), built at their first use
    delegation_tokens: BuiltOnFirstUse[DelegationTokens] = attrs.field(
        factory=lambda: BuiltOnFirstUse(_tokens_unconfigured)
    )

    @property
    def transactions(self) -> TransactionService:
        """The transaction coordinator and the service that writes its markers, built at their first use
        (InitProducerId, a transactional request, ListTransactions...), or at start when the transaction
        log holds transactions (ADR 124)."""
        return self.transaction_service.get()

    @property
    def transactions_built(self) -> TransactionService | None:
        """The transactions' service if it is built: no transaction to time out or expire otherwise."""
        return self.transaction_service.built

    @property
    def tokens(self) -> DelegationTokens:
        """The delegation tokens (KIP-48), built at their first use (ADR 139)."""
        return self.delegation_tokens.get()

    @property
    def share(self) -> ShareRuntime | None:
        """The share groups' runtime, built at its first use (a share group request, ListGroups, a GROUP
        config), or at start when the log dir holds share groups; None when share groups are off."""
        return None if self.share_groups is None else self.share_groups.get()

    @property
    def share_built(self) -> ShareRuntime | None:
        """The share groups' runtime if it is built: nothing to tend otherwise."""
        return None if self.share_groups is None else self.share_groups.built
