"""The composition root: the one place that knows every adapter and wires them to the domain.

`bootstrap` takes every adapter as a parameter; `default_adapters` picks the production ones from
the settings. Nothing is instantiated at import time.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from trafka.adapters.kafka.api import HandlerRegistry
from trafka.adapters.kafka.apis import build_registry
from trafka.adapters.kafka.apis.api_versions import feature_ceilings
from trafka.adapters.kafka.connection.admission import ConnectionLimits
from trafka.adapters.kafka.connection.limits import ServerLimits
from trafka.adapters.kafka.context import BrokerContext
from trafka.adapters.kafka.internal_topics import InternalTopics, VisibleTopics
from trafka.adapters.kafka.releases import pinned, release_name
from trafka.adapters.kafka.request_context import Endpoint, Listening
from trafka.adapters.kafka.runtime import group_configs
from trafka.adapters.kafka.runtime.group_runtime import GroupRuntime
from trafka.adapters.kafka.runtime.unit_of_work import UnitOfWork
from trafka.adapters.kafka.services import AppendNotifier, BrokerServices, BuiltOnFirstUse, fetch_session_cache
from trafka.domain.catalog import TopicCatalog
from trafka.domain.configs import TOPIC_CONFIG_SYNONYMS, BrokerPolicy
from trafka.domain.errors import ErrorCode
from trafka.domain.features import (
    ELIGIBLE_LEADER_REPLICAS_VERSION,
    KAFKA_43_BOOTSTRAP,
    KAFKA_44_BOOTSTRAP,
    KAFKA_BOOTSTRAP,
    METADATA_VERSION,
    SHARE_VERSION,
    TRANSACTION_VERSION,
    FeatureControl,
)
from trafka.domain.groups import GroupCoordinator, GroupSettings, OffsetManager
from trafka.domain.groups.group_ids import ClassicOrShareGroupIds
from trafka.domain.listeners import Listener, ListenerConfigError, SecurityProtocol, resolve_listeners
from trafka.domain.ports import ClientQuotaStore
from trafka.domain.producers import ProducerIdAllocator
from trafka.domain.quotas import ClientQuotas, QuotaSensors, QuotaWindow
from trafka.domain.replica_manager import ReplicaManager
from trafka.domain.security import UserScramCredentials
from trafka.domain.security.acls import kafka_host

from .. import extras
from ..config.settings import ConfigError, ServerSettings, Settings
from .adapters import Adapters, LogDirUnusable, default_adapters, topic_defaults_from
from .groups import consumer_groups_from, consumer_protocol_enabled, streams_groups_from, streams_plugin
from .schema_registry import SchemaRegistryOnFirstUse, build_schema_registry
from .security import (
    DELEGATION_TOKEN_METADATA_VERSION,
    authentication_from,
    authorization_from,
    delegation_tokens_from,
    token_logins,
)

if TYPE_CHECKING:
    from trafka.adapters.kafka.connection.tls import ListenerTls
    from trafka.adapters.kafka.runtime.share_runtime import ShareRuntime
    from trafka.domain.groups.modern import ConsumerGroupCoordinator
    from trafka.domain.groups.streams import StreamsGroupCoordinator
    from trafka.domain.telemetry import ClientTelemetry
    from trafka.domain.transactions import TransactionService

__all__ = [  # what the rest of the application imports from here (the adapters are in `adapters.py`)
    "Adapters",
    "LogDirUnusable",
    "bootstrap",
    "default_adapters",
    "limits_from",
    "listeners_from",
    "log_dir_cordoned",
    "policy_from",
    "topic_defaults_from",
]

log = logging.getLogger("trafka")


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
        static_names=static_names_from(settings),
        log_dir_cordoned=log_dir_cordoned(settings),
        log_dir_names=log_dir_names(settings),
        schema_validation_available=schema_registry_installed(),
    )


def static_names_from(settings: Settings) -> dict[str, str]:
    """The Kafka key each time-valued topic default was given as, where it is not the broker config's own."""
    log = settings.log
    given = {"retention.ms": log.retention_ms_key, "segment.ms": log.roll_ms_key, "flush.ms": log.flush_interval_ms_key}
    return {topic: key for topic, key in given.items() if key != TOPIC_CONFIG_SYNONYMS[topic]}


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


def bootstrap(settings: Settings, adapters: Adapters) -> BrokerContext:
    if settings.http.port is not None:
        extras.require("console", "the HTTP listener (--http-port, http.port)")
    listeners = listeners_from(settings)
    first_listener = listeners[0]
    credentials = UserScramCredentials(adapters.scram_store)
    authentication = authentication_from(settings, listeners, credentials)
    tls: dict[str, ListenerTls] = {}
    if settings.http.ssl_enabled or any(listener.security_protocol.uses_tls for listener in listeners):
        from .tls import http_ssl_context, tls_from  # the ssl contexts' wiring: with a TLS listener only

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
    recorded_group_configs = group_configs.DurableGroupConfigs(adapters.group_config_store)

    def build_consumer() -> ConsumerGroupCoordinator:
        consumer = consumer_groups_from(settings, VisibleTopics(catalog, internal_topics), group_ids)
        assert consumer is not None, "built only with the consumer protocol on"
        group_configs.restore_consumer_groups(recorded_group_configs, consumer)  # sessions use them
        consumer.load(offsets.consumer_group_records(), adapters.clock_ms())
        return consumer

    # KIP-848 groups: built now when `__consumer_offsets` holds some, else at the first use (ADR 118)
    serves_consumer = consumer_protocol_enabled(settings)
    consumer_groups = build_consumer() if serves_consumer and offsets.consumer_group_records() else None
    producer_ids = ProducerIdAllocator(
        adapters.catalog_store.next_producer_id(),
        lambda start, end: adapters.catalog_store.producer_ids_reserved(end),
    )
    recorded_transactions = adapters.transaction_store.load()

    def build_transactions() -> TransactionService:
        from trafka.domain.transactions import TransactionCoordinator, TransactionService

        service = TransactionService(
            TransactionCoordinator(
                producer_ids.allocate,
                adapters.transaction_store.record,
                recorded_transactions,
                remove=adapters.transaction_store.remove,
                max_timeout_ms=settings.broker.transaction_max_timeout_ms,
            ),
            catalog,
            replicas,
            offsets,
        )
        for transactional_id in service.recover(adapters.clock_ms()):
            log.warning("transaction %s was unfinished at shutdown: its markers are written now", transactional_id)
        return service

    # Built now when the transaction log holds transactions (they are recovered now, as before), else at
    # the first use: InitProducerId, a transactional request, ListTransactions... (ADR 124)
    transactions = BuiltOnFirstUse(build_transactions)

    def first_transactional_batch(*batch: Any) -> ErrorCode:
        """A transactional batch before any transactional request: answered by the coordinator, built now
        (its answer, INVALID_PRODUCER_ID_MAPPING, is a coordinator's that knows no such id); building
        it puts its own check in this one's place."""
        return transactions.get().coordinator.check_produce(*batch)

    replicas.admission.transaction_check = first_transactional_batch
    if recorded_transactions:
        transactions.get()
    adapters.started()
    streams_plugin(settings)  # a configuration error stops the start, as before the coordinator was lazy

    def build_streams() -> StreamsGroupCoordinator:
        streams = streams_groups_from(settings, catalog, group_ids, lambda group_id: groups.is_consumer_group(group_id))
        group_configs.restore_streams_groups(recorded_group_configs, streams)  # before its sessions restart
        streams.load(offsets.streams_group_records(), adapters.clock_ms())
        return streams

    # Built now when the log dir holds streams groups, else at the first use (ADR 110)
    streams_groups = build_streams() if offsets.streams_group_records() else None
    offsets.has_members_elsewhere = lambda group_id: (  # a consumer or streams group's offsets stay
        groups.has_consumer_members(group_id) or groups.has_streams_members(group_id)
    )
    groups = GroupRuntime(
        coordinator,
        offsets,
        adapters.clock_ms,
        unit_of_work,
        appends,
        adapters.clock.seconds_until,
        consumer=consumer_groups,
        streams=streams_groups,
        build_streams=build_streams,
        build_consumer=build_consumer if serves_consumer and consumer_groups is None else None,
    )
    adapters.clock.listen(groups.touched)

    def build_share() -> ShareRuntime:
        from .share import share_groups_from  # the share groups' domain loads with their first use (ADR 118)

        share = share_groups_from(
            settings,
            catalog,
            replicas,
            coordinator,
            groups.is_consumer_group,
            adapters,
            appends,
            unit_of_work,
            group_ids,
        )
        assert share is not None, "built only with share groups on"
        # KIP-1191's copies once share.version 2 is finalized, as Kafka 4.4
        share.dead_letters_enabled = lambda: share_dead_letters_enabled(ctx)
        return share

    tokens = delegation_tokens_from(settings, adapters.token_store, lambda: delegation_tokens_supported(ctx))
    authentication.tokens = token_logins(tokens, adapters.clock_ms)  # SCRAM with tokenauth=true (KIP-48)
    services = BrokerServices(
        delegation_tokens=tokens,
        catalog=catalog,
        replicas=replicas,
        policy=policy,
        groups=groups,
        unit_of_work=unit_of_work,
        producer_ids=producer_ids,
        transaction_service=transactions,
        clock_ms=adapters.clock_ms,
        credentials=credentials,
        quotas=quotas_from(settings, adapters.quota_store),
        features=FeatureControl(adapters.catalog_store, settings.broker.node_id, bootstrap_features(settings)),
        authorization=authorization,
        appends=appends,
        observer=adapters.observer,
        telemetry=client_telemetry(settings),
        share_groups=BuiltOnFirstUse(build_share) if settings.groups.share_enable else None,
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
    log_dir_store = sys.modules.get("trafka.adapters.filesystem.transaction_store")  # loaded with a log dir only
    if log_dir_store is not None and isinstance(adapters.transaction_store, log_dir_store.FileTransactionStore):
        # v1 records unless TV 0 is finalized
        adapters.transaction_store.value_version = lambda: transaction_log_value_version(ctx)
    if ctx.services.share_groups is not None and holds_share_groups(adapters):
        ctx.services.share_groups.get()  # built now when the store holds share groups, else at first use (ADR 124)
    ceilings = feature_ceilings(ctx.registry)
    features, broker_configs = ctx.services.features, ctx.services.catalog.broker_configs
    broker_configs.elr_enabled = lambda: features.finalized(ceilings).get(ELIGIBLE_LEADER_REPLICAS_VERSION, 0) > 0
    features.elr_turned_on = broker_configs.elr_safety  # the cluster's min.insync.replicas, as Kafka (KIP-966)
    features.record_bootstrapped(ceilings)  # in the metadata log, for Kafka
    group_configs.restore(services)  # the GROUP config resource's overrides, as recorded
    return ctx


def holds_share_groups(adapters: Adapters) -> bool:
    """Does the broker's store hold share groups (their records in `__consumer_offsets`, or share-partition
    state)? Then their runtime is built at start, so its sessions and locks run from the start."""
    return bool(adapters.offset_store.share_group_records()) or bool(adapters.share_state_store.load())


def client_telemetry(settings: Settings) -> ClientTelemetry | None:
    """KIP-714's receiver of pushed client metrics: with the HTTP listener only (its module loaded then)."""
    if settings.http.port is None:
        return None
    from trafka.domain.telemetry import ClientTelemetry

    return ClientTelemetry(settings.http.telemetry_push_interval_ms, settings.http.telemetry_max_bytes)


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


def delegation_tokens_supported(ctx: BrokerContext) -> bool:
    """Kafka's MetadataVersion.isDelegationTokenSupported: metadata.version 3.6-IV2 or later finalized."""
    finalized = ctx.services.features.finalized(feature_ceilings(ctx.registry))
    return finalized.get(METADATA_VERSION, 0) >= DELEGATION_TOKEN_METADATA_VERSION


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
