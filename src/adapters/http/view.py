"""What the HTTP adapter may see of the broker: the domain services and a few facts about the process.

The composition root builds one `BrokerView`. Every page and every metric reads the same objects the
Kafka handlers use, in the same Trio thread, so nothing needs a lock and nothing loops back through a
Kafka client. `Readiness` is set by the app once the Kafka listener accepts connections;
`ConsoleSecurity` is there when the Kafka listeners have security.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable

import attrs

from trafka.domain.catalog import TopicCatalog
from trafka.domain.configs import ConfigEntry
from trafka.domain.errors import ErrorCode
from trafka.domain.groups import GroupCoordinator, OffsetManager
from trafka.domain.groups.modern import ConsumerGroupCoordinator
from trafka.domain.groups.share import ShareGroups
from trafka.domain.groups.streams import StreamsGroupCoordinator
from trafka.domain.quotas import QuotaSensors
from trafka.domain.replica_manager import ReplicaManager
from trafka.domain.security.acls import Authorizer
from trafka.domain.security.passwords import UserCheck
from trafka.domain.telemetry import ClientTelemetry
from trafka.domain.topics import TopicPartition

from .metrics import BrokerMetrics


@attrs.define
class Readiness:
    """/readyz: the log dir is recovered (true once the broker is built) and the Kafka listener is up."""

    log_dir_recovered: bool = False
    listeners_accepting: bool = False
    shutting_down: bool = False

    @property
    def ready(self) -> bool:
        return self.log_dir_recovered and self.listeners_accepting and not self.shutting_down


@attrs.frozen
class BrokerInfo:
    version: str
    node_id: int
    cluster_id: str
    started_ms: int
    listeners: tuple[str, ...]  # "PLAINTEXT://host:port" as Kafka's advertised.listeners
    config: tuple[tuple[str, str, str], ...]  # (name, value, source) of the broker's settings


@attrs.frozen
class ConsoleSecurity:
    """Set when the Kafka listeners have security: the console and the registry then need the same users
    (see login.py) and the console obeys the same ACLs (access.py)."""

    prepare: Callable[[str], UserCheck]  # the domain's PasswordCheck.prepare: a user's stored credentials
    authorizer: Authorizer | None  # None: no authorizer.class.name, every logged-in user may do everything
    failed_authentication_delay_ms: int  # connection.failed.authentication.delay.ms
    session_secret: str = attrs.field(repr=False)
    session_lifetime_ms: int


@attrs.frozen
class HttpOptions:
    """The listener's own settings (`http.*`) that shape every request (guard.py, ADR 40)."""

    allowed_hosts: tuple[str, ...] = ("localhost", "127.0.0.1", "[::1]")  # Host header names; "*" for any
    max_request_bytes: int = 2 * 1024 * 1024  # any route's body; the login form's is smaller
    metrics_authentication: bool = False  # /metrics needs the console's login (session or HTTP Basic)
    ssl_context: ssl.SSLContext | None = None  # http.ssl_enabled: HTTPS with the broker's ssl.* keystore


@attrs.define
class BrokerView:
    catalog: TopicCatalog
    replicas: ReplicaManager
    coordinator: GroupCoordinator
    offsets: OffsetManager
    clock_ms: Callable[[], int]
    info: Callable[[], BrokerInfo]
    readiness: Readiness = attrs.field(factory=Readiness)
    metrics: BrokerMetrics = attrs.field(factory=BrokerMetrics)  # the Kafka listener's BrokerObserver
    security: ConsoleSecurity | None = None  # None: the console is open, as the Kafka listeners are
    consumer_groups: ConsumerGroupCoordinator | None = None  # KIP-848 groups, when the protocol is on
    share: ShareGroups | None = None  # share groups (KIP-932), unless turned off
    streams_groups: StreamsGroupCoordinator | None = None  # streams groups (KIP-1071), when served
    # The log cleaner's first dirty offset of a partition (None: never cleaned), for clean/dirty bytes.
    first_dirty_offset: Callable[[TopicPartition], int | None] = lambda tp: None
    quotas: QuotaSensors | None = None  # client quotas: what is set, and the rates they bound
    telemetry: ClientTelemetry | None = None  # KIP-714: the metrics clients push
    # DeleteGroups as the Kafka API does it (a classic, consumer or share group), given by the wiring.
    delete_group: Callable[[str], ErrorCode] = lambda group_id: ErrorCode.GROUP_ID_NOT_FOUND
    share_changed: Callable[[], None] = lambda: None  # persist changed share-partitions (ShareRuntime.settled)
    group_configs: Callable[[str], list[ConfigEntry]] = lambda group_id: []  # the GROUP config resource
