"""The composition root: the one place that knows every adapter and wires them to the domain.

`bootstrap` takes every adapter as a parameter; `default_adapters` picks the production ones from
the settings. Nothing is instantiated at import time.
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
import crc32c

from trafka.adapters.compression import decompress as inflate
from trafka.adapters.filesystem import (
    METADATA_TOPIC_ID,
    DataDirError,
    FileAclStore,
    FileCatalogStore,
    FileClientQuotaStore,
    FileLogStore,
    FileOffsetStore,
    FileScramCredentialStore,
    FileTransactionStore,
    InternalLog,
    LogDir,
)
from trafka.adapters.filesystem.fileio import LogDirHealth
from trafka.adapters.filesystem.group_config_store import FileGroupConfigStore
from trafka.adapters.filesystem.log_store import FileCleanerCheckpoints
from trafka.adapters.filesystem.share_state_store import FileShareStateStore
from trafka.adapters.kafka import group_configs
from trafka.adapters.kafka.api import HandlerRegistry
from trafka.adapters.kafka.apis import build_registry
from trafka.adapters.kafka.apis.api_versions import feature_ceilings
from trafka.adapters.kafka.connection.admission import ConnectionLimits
from trafka.adapters.kafka.connection.server import ServerLimits
from trafka.adapters.kafka.context import BrokerContext
from trafka.adapters.kafka.group_runtime import GroupRuntime
from trafka.adapters.kafka.internal_topics import InternalTopics, VisibleTopics
from trafka.adapters.kafka.releases import pinned, release_name
from trafka.adapters.kafka.request_context import Endpoint, Listening
from trafka.adapters.kafka.services import AppendNotifier, BrokerServices, UnobservedBroker, fetch_session_cache
from trafka.adapters.kafka.unit_of_work import UnitOfWork
from trafka.adapters.kafka.wire.consumer_protocol import KafkaPythonConsumerProtocol
from trafka.adapters.memory import (
    MemoryAclStore,
    MemoryCatalogStore,
    MemoryClientQuotaStore,
    MemoryLogStore,
    MemoryOffsetStore,
    MemoryScramCredentialStore,
    MemoryTransactionStore,
)
from trafka.adapters.memory.group_config_store import MemoryGroupConfigStore
from trafka.adapters.memory.share_state_store import MemoryShareStateStore
from trafka.domain.batch import Checksum
from trafka.domain.batch_records import Decompress
from trafka.domain.catalog import TopicCatalog
from trafka.domain.compaction.manager import CleanerCheckpoints, MemoryCheckpoints
from trafka.domain.configs import BrokerPolicy
from trafka.domain.features import (
    KAFKA_43_BOOTSTRAP,
    KAFKA_44_BOOTSTRAP,
    KAFKA_BOOTSTRAP,
    SHARE_VERSION,
    TRANSACTION_VERSION,
    FeatureControl,
)
from trafka.domain.groups import GroupCoordinator, GroupSettings, OffsetManager
from trafka.domain.groups.modern import ConsumerGroupCoordinator, ConsumerGroupSettings, assignor_names
from trafka.domain.groups.modern.consumer import ClassicGroups, TopicLookup
from trafka.domain.groups.modern.migration import MigrationPolicy
from trafka.domain.groups.streams import StreamsGroupCoordinator, StreamsGroupSettings
from trafka.domain.groups.streams.description import IN_MEMORY_PLUGIN
from trafka.domain.listeners import Listener, ListenerConfigError, SecurityProtocol, resolve_listeners
from trafka.domain.ports import (
    AclStore,
    BrokerObserver,
    CatalogStore,
    ClientQuotaStore,
    GroupConfigStore,
    LogStore,
    OffsetStore,
    PartitionLog,
    ScramCredentialStore,
    ShareStateStore,
    TransactionStore,
)
from trafka.domain.producers import ProducerIdAllocator
from trafka.domain.quotas import ClientQuotas, QuotaSensors, QuotaWindow
from trafka.domain.replica_manager import ReplicaManager
from trafka.domain.security import UserScramCredentials
from trafka.domain.security.acls import kafka_host
from trafka.domain.telemetry import ClientTelemetry
from trafka.domain.topics import Topic, TopicPartition
from trafka.domain.transactions import TransactionCoordinator, TransactionService

from .. import extras
from ..config.settings import ConfigError, ServerSettings, Settings
from .clock import Clock, WallClock, clock_from
from .log_cleaner import CleanerSlot
from .schema_registry import SchemaRegistryOnFirstUse, build_schema_registry
from .security import authentication_from, authorization_from
from .share import ClassicOrShareGroupIds, share_groups_from
from .tls import http_ssl_context, tls_from

if TYPE_CHECKING:
    pass

log = logging.getLogger("trafka")


class LogDirUnusable(Exception):
    """The log dir cannot be opened (locked by another broker, not a log dir, not writable...); the
    message names it. `trafka serve` exits 1, as Kafka does."""


@attrs.frozen
class Adapters:
    logs: LogStore
    catalog_store: CatalogStore
    offset_store: OffsetStore
    transaction_store: TransactionStore
    clock_ms: Callable[[], int]
    new_topic_id: Callable[[], uuid.UUID]
    checksum: Checksum
    decompress: Decompress
    new_member_id: Callable[[str], str]
    scram_store: ScramCredentialStore
    acl_store: AclStore
    quota_store: ClientQuotaStore
    cluster_id: str | None = None  # a log dir's own cluster id wins over the configured one
    started: Callable[[], None] = lambda: None  # after the catalog and logs are loaded
    stop: Callable[[], None] = lambda: None  # after the server stopped: flush, checkpoint, mark clean
    maintain: Callable[[int], None] = lambda now_ms: None  # every second: flush.ms
    checkpoint: Callable[[], None] = lambda: None  # periodically: flush and write recovery points
    health: LogDirHealth | None = None  # the log dir's write failures (filesystem store only)
    observer: BrokerObserver = attrs.field(factory=UnobservedBroker)  # the metrics, with the HTTP listener
    share_state_store: ShareStateStore = attrs.field(factory=MemoryShareStateStore)  # __share_group_state
    group_config_store: GroupConfigStore = attrs.field(factory=MemoryGroupConfigStore)  # GROUP ConfigRecords
    clock: Clock = attrs.field(factory=WallClock)  # clock_ms's clock: what deadline waiters ask and listen to
    # The log cleaner's first dirty offsets (cleaner-offset-checkpoint in a log dir), and the cleaner itself.
    cleaner_checkpoints: CleanerCheckpoints = attrs.field(factory=MemoryCheckpoints)
    cleaning: CleanerSlot = attrs.field(factory=CleanerSlot)
    compacted_internal: Callable[[], list[tuple[TopicPartition, PartitionLog, dict[str, str]]]] = list
    internal_topic_ids: Mapping[str, uuid.UUID] = attrs.field(factory=dict)  # the log dir's internal topics
    # Given the function to call after each append to an internal topic Fetch reads (ADR 108).
    watch_internal_appends: Callable[[Callable[[TopicPartition], None]], None] = lambda appended: None


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def _observer(settings: Settings) -> BrokerObserver:
    """The HTTP listener's metrics when it is on; nothing otherwise (its libraries load only with it)."""
    if settings.http.port is None:
        return UnobservedBroker()
    extras.require("console", "the HTTP listener (--http-port, http.port)")
    from trafka.adapters.http.metrics import BrokerMetrics

    return BrokerMetrics()


def default_adapters(settings: Settings) -> Adapters:
    """The production adapters: the filesystem store (or memory with `kind = "memory"`)."""
    clock = clock_from(settings.broker.clock)
    clock_ms = clock.now_ms  # the filesystem store stamps segments and internal batches with it
    common: dict[str, Any] = {
        "observer": _observer(settings),
        "clock": clock,
        "clock_ms": clock.now_ms,
        "new_topic_id": uuid.uuid4,
        "checksum": crc32c.crc32c,
        "decompress": inflate,
        "new_member_id": lambda client_id: f"{client_id}-{uuid.uuid4()}",
    }
    if settings.storage.kind == "memory":
        return Adapters(
            logs=MemoryLogStore(topic_defaults_from(settings), clock_ms),
            catalog_store=MemoryCatalogStore(),
            offset_store=MemoryOffsetStore(),
            transaction_store=MemoryTransactionStore(),
            scram_store=MemoryScramCredentialStore(),
            acl_store=MemoryAclStore(),
            quota_store=MemoryClientQuotaStore(),
            **common,
        )
    try:
        logdir = LogDir.open(settings.storage.data_dir, settings.broker.node_id, uuid.uuid4(), uuid.uuid4())
    except DataDirError as exc:
        raise LogDirUnusable(str(exc)) from exc
    logs = FileLogStore(logdir, crc32c.crc32c, clock_ms, settings.storage.flush_messages, topic_defaults_from(settings))
    metadata = InternalLog(logs, TopicPartition("__cluster_metadata", 0), METADATA_TOPIC_ID, crc32c.crc32c, clock_ms)
    catalog_store = FileCatalogStore(metadata, settings.broker.node_id, logdir.meta.directory_id)
    recorded = catalog_store.internal_topic_ids()  # an internal topic keeps the id the metadata log gave it
    offsets = InternalLog(
        logs,
        TopicPartition("__consumer_offsets", 0),
        recorded.get("__consumer_offsets", uuid.uuid4()),
        crc32c.crc32c,
        clock_ms,
        {"segment.bytes": str(settings.groups.offsets_topic_segment_bytes)},
    )
    txn_state = InternalLog(
        logs,
        TopicPartition("__transaction_state", 0),
        recorded.get("__transaction_state", uuid.uuid4()),
        crc32c.crc32c,
        clock_ms,
        {"segment.bytes": str(settings.broker.transaction_state_log_segment_bytes)},
    )
    share_state = InternalLog(
        logs,
        TopicPartition("__share_group_state", 0),
        recorded.get("__share_group_state", uuid.uuid4()),
        crc32c.crc32c,
        clock_ms,
    )

    def watch_internal_appends(appended: Callable[[TopicPartition], None]) -> None:
        for internal in (offsets, txn_state, share_state):
            internal.appended = appended

    def started() -> None:
        logs.remove_stray(catalog_store.removed_topic_ids)
        logdir.start()

    def stop() -> None:
        logs.close()
        if logs.clean:  # after a failed write, the next start recovers the logs
            logdir.mark_clean_shutdown()
        logdir.unlock()

    for internal, configs in (
        (offsets, OFFSETS_TOPIC_CONFIGS),
        (txn_state, TRANSACTION_TOPIC_CONFIGS),
        (share_state, SHARE_STATE_TOPIC_CONFIGS),
    ):
        topic = Topic(internal.log_tp.topic, internal.topic_id, 1, {**configs, **internal.configs})
        catalog_store.register_internal(topic)
    return Adapters(
        logs=logs,
        catalog_store=catalog_store,
        offset_store=FileOffsetStore(offsets),
        transaction_store=FileTransactionStore(txn_state),
        share_state_store=FileShareStateStore(
            share_state, clock_ms, settings.groups.share_snapshot_update_records_per_snapshot
        ),
        scram_store=FileScramCredentialStore(metadata),
        acl_store=FileAclStore(metadata),
        quota_store=FileClientQuotaStore(metadata),
        group_config_store=FileGroupConfigStore(metadata),
        cluster_id=logdir.meta.cluster_id,
        started=started,
        stop=stop,
        maintain=logs.maintain,
        checkpoint=logs.checkpoint,
        health=logs.health,
        cleaner_checkpoints=FileCleanerCheckpoints(logdir),
        compacted_internal=lambda: [
            (
                internal.log_tp,
                internal.log,
                {"cleanup.policy": "compact", "segment.bytes": str(internal.log.config.segment_bytes)},
            )
            for internal in (offsets, txn_state)
        ],
        internal_topic_ids={internal.log_tp.topic: internal.topic_id for internal in (offsets, txn_state, share_state)},
        watch_internal_appends=watch_internal_appends,
        **common,
    )


# The configs Kafka's coordinators create their internal topics with (the ConfigRecords a Kafka log dir
# holds for them), besides segment.bytes from the settings.
OFFSETS_TOPIC_CONFIGS = {"cleanup.policy": "compact", "compression.type": "producer"}
TRANSACTION_TOPIC_CONFIGS = {
    "cleanup.policy": "compact",
    "compression.type": "uncompressed",
    "min.insync.replicas": "1",
    "unclean.leader.election.enable": "false",
}
SHARE_STATE_TOPIC_CONFIGS = {
    "cleanup.policy": "delete",
    "compression.type": "producer",
    "min.insync.replicas": "1",
    "retention.ms": "-1",
}


def topic_defaults_from(settings: Settings) -> dict[str, str]:
    """The broker's defaults for topic configs that the configuration sets (Kafka's log.* keys)."""
    log_settings = settings.log
    values = {
        "retention.ms": log_settings.retention_ms,
        "retention.bytes": log_settings.retention_bytes,
        "segment.bytes": log_settings.segment_bytes,
        "segment.ms": log_settings.roll_ms,
        "flush.messages": log_settings.flush_interval_messages,
        "flush.ms": log_settings.flush_interval_ms,
        "index.interval.bytes": log_settings.index_interval_bytes,
    }
    return {name: str(value) for name, value in values.items() if value is not None}


def policy_from(settings: Settings) -> BrokerPolicy:
    broker = settings.broker
    return BrokerPolicy(
        node_id=broker.node_id,
        cluster_id=broker.cluster_id,
        auto_create_topics_enable=broker.auto_create_topics_enable,
        num_partitions=broker.num_partitions,
        default_replication_factor=broker.default_replication_factor,
        message_max_bytes=broker.message_max_bytes,
        fetch_max_bytes=broker.fetch_max_bytes,
        topic_defaults=topic_defaults_from(settings),
        log_dir_cordoned=log_dir_cordoned(settings),
        log_dir_names=log_dir_names(settings),
        schema_validation_available=schema_registry_installed(),
    )


def schema_registry_installed() -> bool:
    """The Schema Registry's libraries are there: the registry extra (and the console's, which it pulls)."""
    return extras.installed("registry") and extras.installed("console")


def log_dir_names(settings: Settings) -> frozenset[str]:
    """How an entry of `cordoned.log.dirs` may name the log dir: as configured, or its absolute path."""
    data_dir = settings.storage.data_dir
    return frozenset() if data_dir is None else frozenset({str(data_dir), os.path.abspath(data_dir)})


def log_dir_cordoned(settings: Settings) -> bool:
    """Is the log dir in `cordoned.log.dirs` (KIP-1066: by its path, or `*` for every log dir)?"""
    cordoned = {entry.strip() for entry in settings.broker.cordoned_log_dirs.split(",") if entry.strip()}
    if "*" in cordoned:
        return True
    data_dir = settings.storage.data_dir
    return data_dir is not None and os.path.abspath(data_dir) in {os.path.abspath(d) for d in cordoned}


def listeners_from(settings: Settings) -> tuple[Listener, ...]:
    """Kafka's `listeners`/`advertised.listeners`/`listener.security.protocol.map`, or, when `listeners`
    is unset, one PLAINTEXT listener from the `--host/--port/--advertised-*` shorthand."""
    server = settings.server
    if server.listeners is None:
        host = server.advertised_host or server.host
        if host in ("", "0.0.0.0", "::"):
            host = "localhost"
        return (
            Listener(
                "PLAINTEXT", SecurityProtocol.PLAINTEXT, server.host, server.port, host, server.advertised_port or 0
            ),
        )
    try:
        return resolve_listeners(
            server.listeners, server.advertised_listeners, server.listener_security_protocol_map, socket.getfqdn()
        )
    except ListenerConfigError as exc:
        raise ConfigError(f"invalid configuration: {exc}") from exc


def advertised_endpoint(listener: Listener) -> Endpoint:
    return Endpoint(listener.advertised_host, listener.advertised_port)


def connection_limits_from(server: ServerSettings) -> ConnectionLimits:
    """Kafka's max.connections* and connections.max.idle.ms; an override names an address or a host name
    (resolved now, as Kafka's ConnectionQuotas resolves it with InetAddress.getByName)."""
    overrides: dict[str, int] = {}
    for entry in (e.strip() for e in server.max_connections_per_ip_overrides.split(",") if e.strip()):
        host, colon, count = entry.rpartition(":")
        if not colon or not host or not count.strip().isdigit():
            raise ConfigError(f"invalid configuration: max.connections.per.ip.overrides {entry!r} is not host:count")
        try:
            addresses = {info[4][0] for info in socket.getaddrinfo(host.strip("[] "), None)}
        except OSError as exc:
            raise ConfigError(f"invalid configuration: max.connections.per.ip.overrides: {host}: {exc}") from exc
        for address in addresses:
            overrides[kafka_host(address)] = int(count)
    if server.max_connections_per_ip == 0 and not overrides:
        raise ConfigError(
            "invalid configuration: max.connections.per.ip 0 needs max.connections.per.ip.overrides "
            "(Kafka: the addresses that may connect)"
        )
    return ConnectionLimits(
        max_connections=server.max_connections,
        max_connections_per_ip=server.max_connections_per_ip,
        per_ip_overrides=overrides,
        max_idle_ms=server.connections_max_idle_ms,
    )


def limits_from(settings: Settings) -> ServerLimits:
    server = settings.server
    return ServerLimits(
        max_request_bytes=server.max_request_bytes,
        max_inflight_requests=server.max_inflight_requests,
        max_queued_response_bytes=server.max_queued_response_bytes,
        shutdown_grace_seconds=server.shutdown_grace_seconds,
        connections=connection_limits_from(server),
    )


def consumer_groups_from(
    settings: Settings, topics: TopicLookup, classic: ClassicGroups
) -> ConsumerGroupCoordinator | None:
    """The KIP-848 coordinator, unless `group.coordinator.rebalance.protocols` leaves `consumer` out."""
    groups = settings.groups
    if "consumer" not in {p.strip() for p in groups.rebalance_protocols.split(",")}:
        return None
    try:
        migration_policy = MigrationPolicy.parse(groups.consumer_migration_policy)
    except ValueError as exc:
        raise ConfigError(f"invalid configuration: {exc}") from exc
    consumer_settings = ConsumerGroupSettings(
        session_timeout_ms=groups.consumer_session_timeout_ms,
        heartbeat_interval_ms=groups.consumer_heartbeat_interval_ms,
        max_size=groups.consumer_max_size,
        assignors=assignor_names(groups.consumer_assignors),
        min_session_timeout_ms=groups.consumer_min_session_timeout_ms,
        max_session_timeout_ms=groups.consumer_max_session_timeout_ms,
        min_heartbeat_interval_ms=groups.consumer_min_heartbeat_interval_ms,
        max_heartbeat_interval_ms=groups.consumer_max_heartbeat_interval_ms,
        migration_policy=migration_policy,
    )
    return ConsumerGroupCoordinator(
        consumer_settings, topics, classic, lambda: str(uuid.uuid4()), KafkaPythonConsumerProtocol()
    )


def streams_groups_from(
    settings: Settings,
    catalog: TopicCatalog,
    group_ids: ClassicOrShareGroupIds,
    consumer: ConsumerGroupCoordinator | None,
) -> StreamsGroupCoordinator:
    """The KIP-1071 coordinator (served while `streams.version` is finalized at 1, ADR 82)."""
    groups = settings.groups
    streams = StreamsGroupCoordinator(
        StreamsGroupSettings(
            session_timeout_ms=groups.streams_session_timeout_ms,
            heartbeat_interval_ms=groups.streams_heartbeat_interval_ms,
            num_standby_replicas=groups.streams_num_standby_replicas,
            max_standby_replicas=groups.streams_max_standby_replicas,
            max_size=groups.streams_max_size,
            min_session_timeout_ms=groups.streams_min_session_timeout_ms,
            max_session_timeout_ms=groups.streams_max_session_timeout_ms,
            min_heartbeat_interval_ms=groups.streams_min_heartbeat_interval_ms,
            max_heartbeat_interval_ms=groups.streams_max_heartbeat_interval_ms,
            initial_rebalance_delay_ms=groups.streams_initial_rebalance_delay_ms,
        ),
        catalog,
        group_ids,
        (lambda group_id: group_id in consumer.groups) if consumer is not None else (lambda group_id: False),
    )
    plugin = groups.streams_topology_description_plugin_class.strip()
    if plugin and plugin != IN_MEMORY_PLUGIN:
        raise ConfigError(
            f"group.streams.topology.description.plugin.class: {plugin!r} cannot be loaded (a Java class); "
            f"trafka keeps descriptions in memory with {IN_MEMORY_PLUGIN}"
        )
    streams.describes_topologies = bool(plugin)
    group_ids.streams = streams
    return streams


def bootstrap(settings: Settings, adapters: Adapters) -> BrokerContext:
    if settings.http.port is not None:
        extras.require("console", "the HTTP listener (--http-port, http.port)")
    listeners = listeners_from(settings)
    first_listener = listeners[0]
    credentials = UserScramCredentials(adapters.scram_store)
    authentication = authentication_from(settings, listeners, credentials)
    tls = tls_from(settings, listeners)
    http_ssl_context(settings)  # a bad http.ssl_* keystore is refused at start, as a listener's (ADR 40)
    authorization = authorization_from(settings, adapters.acl_store)
    policy = policy_from(settings)
    if adapters.cluster_id is not None:
        policy = attrs.evolve(policy, cluster_id=adapters.cluster_id)
    catalog = TopicCatalog(adapters.catalog_store, adapters.logs, policy, adapters.new_topic_id)
    unit_of_work = UnitOfWork()
    appends = AppendNotifier(unit_of_work)  # the purgatory (ADR 80)
    # Broker-side schema validation checks ids against the broker's registry, with or without --http-port.
    registry = SchemaRegistryOnFirstUse(lambda: build_schema_registry(catalog, replicas, adapters.clock_ms, appends))
    replicas = ReplicaManager(catalog, adapters.logs, policy, adapters.checksum, adapters.decompress, registry)
    group_settings = GroupSettings(
        min_session_timeout_ms=settings.groups.min_session_timeout_ms,
        max_session_timeout_ms=settings.groups.max_session_timeout_ms,
        initial_rebalance_delay_ms=settings.groups.initial_rebalance_delay_ms,
    )
    coordinator = GroupCoordinator(group_settings, adapters.new_member_id)
    offsets = OffsetManager(coordinator, adapters.offset_store, catalog, adapters.clock_ms())
    group_ids = ClassicOrShareGroupIds(coordinator)  # classic, consumer and share groups share ids
    internal_topics = InternalTopics.with_ids(adapters.internal_topic_ids)  # which Metadata lists (ADR 89)
    replicas.internal_topics = internal_topics.get  # Fetch and ListOffsets read those that exist (ADR 108)
    adapters.watch_internal_appends(lambda tp: appends.notify((tp,)))  # and a Fetch parked on one wakes
    consumer_groups = consumer_groups_from(settings, VisibleTopics(catalog, internal_topics), group_ids)
    recorded_group_configs = group_configs.DurableGroupConfigs(adapters.group_config_store)
    if consumer_groups is not None:
        group_configs.restore_consumer_groups(recorded_group_configs, consumer_groups)  # sessions use them
        consumer_groups.load(offsets.consumer_group_records(), adapters.clock_ms())
        offsets.has_members_elsewhere = consumer_groups.has_members
    producer_ids = ProducerIdAllocator(
        adapters.catalog_store.next_producer_id(),
        lambda start, end: adapters.catalog_store.producer_ids_reserved(end),
    )
    transactions = TransactionService(
        TransactionCoordinator(
            producer_ids.allocate,
            adapters.transaction_store.record,
            adapters.transaction_store.load(),
            remove=adapters.transaction_store.remove,
            max_timeout_ms=settings.broker.transaction_max_timeout_ms,
        ),
        catalog,
        replicas,
        offsets,
    )
    for transactional_id in transactions.recover(adapters.clock_ms()):
        log.warning("transaction %s was unfinished at shutdown: its markers are written now", transactional_id)
    adapters.started()
    streams_groups = streams_groups_from(settings, catalog, group_ids, consumer_groups)
    group_configs.restore_streams_groups(recorded_group_configs, streams_groups)  # before its sessions restart
    streams_groups.load(offsets.streams_group_records(), adapters.clock_ms())
    members_elsewhere = offsets.has_members_elsewhere  # a consumer or streams group's offsets stay
    offsets.has_members_elsewhere = lambda group_id: members_elsewhere(group_id) or streams_groups.has_members(group_id)
    groups = GroupRuntime(
        coordinator,
        offsets,
        adapters.clock_ms,
        unit_of_work,
        appends,
        adapters.clock.seconds_until,
        consumer=consumer_groups,
        streams=streams_groups,
    )
    adapters.clock.listen(groups.touched)
    services = BrokerServices(
        catalog=catalog,
        replicas=replicas,
        policy=policy,
        groups=groups,
        unit_of_work=unit_of_work,
        producer_ids=producer_ids,
        transactions=transactions,
        clock_ms=adapters.clock_ms,
        credentials=credentials,
        quotas=quotas_from(settings, adapters.quota_store),
        features=FeatureControl(adapters.catalog_store, settings.broker.node_id, bootstrap_features(settings)),
        authorization=authorization,
        appends=appends,
        observer=adapters.observer,
        telemetry=None
        if settings.http.port is None
        else ClientTelemetry(settings.http.telemetry_push_interval_ms, settings.http.telemetry_max_bytes),
        share=share_groups_from(
            settings, catalog, replicas, coordinator, consumer_groups, adapters, appends, unit_of_work, group_ids
        ),
        fetch_sessions=fetch_session_cache(settings.broker.max_incremental_fetch_session_cache_slots),
        group_configs=recorded_group_configs,
        internal_topics=internal_topics,
    )
    ctx = BrokerContext(
        services,
        registry=_registry(settings),
        authentication=authentication,
        tls=tls,
        listening=Listening(advertised_endpoint(first_listener.advertise(first_listener.port))),
    )
    adapters.clock.listen(ctx.clock_signal.moved)  # idle connections follow a manual clock
    if isinstance(adapters.transaction_store, FileTransactionStore):  # v1 records unless TV 0 is finalized
        adapters.transaction_store.value_version = lambda: transaction_log_value_version(ctx)
    if ctx.services.share is not None:  # KIP-1191's copies once share.version 2 is finalized, as Kafka 4.4
        ctx.services.share.dead_letters_enabled = lambda: share_dead_letters_enabled(ctx)
    ctx.services.features.record_bootstrapped(feature_ceilings(ctx.registry))  # in the metadata log, for Kafka
    group_configs.restore(services)  # the GROUP config resource's overrides, as recorded
    return ctx


def transaction_log_value_version(ctx: BrokerContext) -> int:
    """Kafka 4.2's TransactionVersion.transactionLogValueVersion: TransactionLogValue v1 (flexible, with
    the client's transaction version) once `transaction.version` 1 or more is finalized, else v0."""
    finalized = ctx.services.features.finalized(feature_ceilings(ctx.registry))
    return 1 if finalized.get(TRANSACTION_VERSION, 0) >= 1 else 0


def bootstrap_features(settings: Settings) -> Mapping[str, int]:
    """The levels a new log dir is formatted with: a new Kafka 4.2 cluster's, or 4.3's or 4.4's when
    pinned to it (their metadata.version; 4.4's share.version 2)."""
    release = settings.broker.kafka_version
    name = release_name(release) if release is not None else None
    return {"4.3": KAFKA_43_BOOTSTRAP, "4.4": KAFKA_44_BOOTSTRAP}.get(name or "", KAFKA_BOOTSTRAP)


def share_dead_letters_enabled(ctx: BrokerContext) -> bool:
    """Kafka 4.4's ShareVersion.supportsShareGroupDLQ: `share.version` 2 or more finalized."""
    return ctx.services.features.finalized(feature_ceilings(ctx.registry)).get(SHARE_VERSION, 0) >= 2


def quotas_from(settings: Settings, store: ClientQuotaStore) -> QuotaSensors:
    broker = settings.broker
    return QuotaSensors(
        ClientQuotas(store),
        QuotaWindow(broker.quota_window_num, broker.quota_window_size_seconds * 1000),
        QuotaWindow(broker.controller_quota_window_num, broker.controller_quota_window_size_seconds * 1000),
    )


def _registry(settings: Settings) -> HandlerRegistry:
    """Every API trafka serves, or (with `kafka_version`) what that Kafka release does of them; KIP-714's
    telemetry APIs only with the HTTP listener and the telemetry extra (as Kafka advertises them only
    with a ClientTelemetry receiver configured)."""
    telemetry = settings.http.port is not None
    if telemetry and not extras.installed("telemetry"):
        log.info("client telemetry (KIP-714) is off: pip install 'trafka[telemetry]' to receive it")
        telemetry = False
    registry = build_registry(telemetry=telemetry)
    if settings.broker.kafka_version is not None:
        registry = pinned(registry, settings.broker.kafka_version)
    return registry
