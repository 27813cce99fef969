"""trafka's settings tree: one frozen attrs class per section (`server`, `broker`, `groups`, `storage`,
`http`, `log`, `security`, `log_cleaner`), each default declared once where it acts. Built and
checked by `settings.py`'s converter, which forbids extra keys."""

from __future__ import annotations

from typing import Literal

import attrs

from trafka.adapters.kafka.connection.limits import ServerLimits
from trafka.domain.configs import BrokerPolicy
from trafka.domain.groups import GroupSettings
from trafka.domain.listeners import DEFAULT_SECURITY_PROTOCOL_MAP
from trafka.domain.transactions.limits import MAX_TRANSACTION_TIMEOUT_MS

# Each default is declared once, where it acts: the settings below refer to these.
_POLICY, _GROUPS, _LIMITS = BrokerPolicy(), GroupSettings(), ServerLimits()


class ConfigError(Exception):
    """The configuration cannot be used; the message names the offending key."""


@attrs.frozen
class ServerSettings:
    host: str = "localhost"
    port: int = 9092
    advertised_host: str | None = None
    advertised_port: int | None = None
    # Kafka's listener keys; `listeners` unset: one PLAINTEXT listener from host/port/advertised_* above.
    listeners: str | None = None  # listeners, e.g. "PLAINTEXT://0.0.0.0:9092,INTERNAL://0.0.0.0:29092"
    advertised_listeners: str | None = None  # advertised.listeners
    listener_security_protocol_map: str = DEFAULT_SECURITY_PROTOCOL_MAP  # listener.security.protocol.map
    max_request_bytes: int = _LIMITS.max_request_bytes
    max_inflight_requests: int = _LIMITS.max_inflight_requests
    max_queued_response_bytes: int = _LIMITS.max_queued_response_bytes
    shutdown_grace_seconds: float = _LIMITS.shutdown_grace_seconds
    # Kafka's connection limits (ConnectionQuotas) and idle expiry
    connections_max_idle_ms: int = _LIMITS.connections.max_idle_ms  # connections.max.idle.ms; -1: never
    max_connections: int = _LIMITS.connections.max_connections  # max.connections, every listener together
    max_connections_per_ip: int = _LIMITS.connections.max_connections_per_ip  # max.connections.per.ip
    max_connections_per_ip_overrides: str = ""  # max.connections.per.ip.overrides: "host:count,host:count"


@attrs.frozen
class BrokerSettings:
    node_id: int = _POLICY.node_id
    cluster_id: str = _POLICY.cluster_id
    auto_create_topics_enable: bool = _POLICY.auto_create_topics_enable
    num_partitions: int = _POLICY.num_partitions
    default_replication_factor: int = _POLICY.default_replication_factor
    message_max_bytes: int = _POLICY.message_max_bytes
    fetch_max_bytes: int = _POLICY.fetch_max_bytes
    producer_id_expiration_ms: int = 86400000  # producer.id.expiration.ms (1 day)
    producer_id_expiration_check_interval_ms: int = 600000  # producer.id.expiration.check.interval.ms
    transactional_id_expiration_ms: int = 604800000  # transactional.id.expiration.ms (7 days)
    # transaction.remove.expired.transaction.cleanup.interval.ms
    transaction_remove_expired_transaction_cleanup_interval_ms: int = 3600000
    # transaction.max.timeout.ms: a producer asking for a longer transaction.timeout.ms is refused
    transaction_max_timeout_ms: int = MAX_TRANSACTION_TIMEOUT_MS
    transaction_state_log_segment_bytes: int = 104857600  # transaction.state.log.segment.bytes
    # Client quotas' windowed rates (Kafka's quota.window.num / quota.window.size.seconds, and the
    # controller.* pair for controller_mutation_rate)
    quota_window_num: int = 11
    quota_window_size_seconds: int = 1
    controller_quota_window_num: int = 11
    controller_quota_window_size_seconds: int = 1
    # max.incremental.fetch.session.cache.slots: Fetch sessions kept (KIP-227, ADR 56)
    max_incremental_fetch_session_cache_slots: int = 1000
    # cordoned.log.dirs (Kafka 4.3, KIP-1066): log dirs that take no new partitions ("*": every one)
    cordoned_log_dirs: str = ""
    # trafka's own: advertise and accept only what this Kafka release does ("2.8", "3.9", "4.2"; ADR 43)
    kafka_version: str | None = None
    # trafka's own: "manual" for a broker clock that moves only by `broker.advance(seconds)` (tests)
    clock: Literal["wall", "manual"] = "wall"


@attrs.frozen
class GroupCoordinatorSettings:
    initial_rebalance_delay_ms: int = _GROUPS.initial_rebalance_delay_ms
    min_session_timeout_ms: int = _GROUPS.min_session_timeout_ms
    max_session_timeout_ms: int = _GROUPS.max_session_timeout_ms
    offsets_retention_minutes: int = 10080  # offsets.retention.minutes (7 days)
    offsets_retention_check_interval_ms: int = 600000  # offsets.retention.check.interval.ms
    offsets_topic_segment_bytes: int = 104857600  # offsets.topic.segment.bytes
    # KIP-848 consumer groups (group.consumer.*, group.coordinator.rebalance.protocols), Kafka's defaults
    consumer_session_timeout_ms: int = 45000
    consumer_min_session_timeout_ms: int = 45000
    consumer_max_session_timeout_ms: int = 60000
    consumer_heartbeat_interval_ms: int = 5000
    consumer_min_heartbeat_interval_ms: int = 5000
    consumer_max_heartbeat_interval_ms: int = 15000
    consumer_max_size: int = 2147483647
    consumer_assignors: str = "uniform,range"
    consumer_migration_policy: str = "bidirectional"
    rebalance_protocols: str = "classic,consumer"
    # KIP-1071 streams groups (group.streams.*), Kafka 4.2's defaults
    streams_session_timeout_ms: int = 45000
    streams_heartbeat_interval_ms: int = 5000
    streams_num_standby_replicas: int = 0
    streams_max_standby_replicas: int = 2
    streams_max_size: int = 2147483647
    streams_min_session_timeout_ms: int = 45000  # bounds of a group's streams.session.timeout.ms
    streams_max_session_timeout_ms: int = 60000
    streams_min_heartbeat_interval_ms: int = 5000  # bounds of a group's streams.heartbeat.interval.ms
    streams_max_heartbeat_interval_ms: int = 15000
    streams_initial_rebalance_delay_ms: int = 3000  # Kafka's code default; `trafka serve` and Broker() use 0
    # Kafka 4.4 (KIP-1331): Kafka's InMemoryTopologyDescriptionPlugin class name keeps the members'
    # topology descriptions in memory (ADR 95); empty: none kept, as Kafka without a plugin
    streams_topology_description_plugin_class: str = ""
    # KIP-932 share groups (group.share.*), Kafka 4.2's defaults
    share_enable: bool = True
    share_session_timeout_ms: int = 45000
    share_heartbeat_interval_ms: int = 5000
    share_max_size: int = 200
    share_record_lock_duration_ms: int = 30000
    share_min_record_lock_duration_ms: int = 15000  # bounds of a group's share.record.lock.duration.ms
    share_max_record_lock_duration_ms: int = 60000
    share_delivery_count_limit: int = 5
    share_partition_max_record_locks: int = 2000
    # share.coordinator.snapshot.update.records.per.snapshot: ShareUpdates between two ShareSnapshots
    share_snapshot_update_records_per_snapshot: int = 500
    # KIP-1191's errors.deadletterqueue.topic.name.prefix: a dead-letter topic's name must start with it
    share_dead_letter_topic_prefix: str = "dlq."
    # KIP-1191's errors.deadletterqueue.auto.create.topics.enable: a missing dead-letter topic is created
    share_dead_letter_auto_create_topics_enable: bool = False


@attrs.frozen
class StorageSettings:
    kind: Literal["memory", "filesystem"] = "filesystem"
    data_dir: str = "/tmp/trafka-logs"  # like Kafka's default log.dirs=/tmp/kafka-logs
    flush_messages: int | None = None  # overrides every topic's flush.messages; 1 = fsync each batch
    checkpoint_interval_ms: int = 60000  # flush and write recovery points (log.flush.offset.checkpoint.interval.ms)
    retention_check_interval_ms: int = 300000  # as Kafka's log.retention.check.interval.ms
    retention_initial_delay_ms: int = 30000  # Kafka's LogManager starts its retention task 30 s in


@attrs.frozen
class HttpSettings:
    """The HTTP listener (health, Prometheus metrics, the console); off unless a port is given."""

    host: str = "127.0.0.1"  # loopback: an open console (no security on the Kafka listeners) is not exposed by accident
    port: int | None = None  # 0 picks a free port
    # The console's login session when the Kafka listeners have security (trafka's own keys): the cookie's
    # signing secret (made per process when unset, so a restart logs everyone out) and its lifetime from login.
    session_secret: str | None = None
    session_lifetime_ms: int = 8 * 60 * 60 * 1000
    # Hostile clients (issue 27, ADR 40): the Host header names served (comma separated, "*.domain" or "*";
    # loopback names by default: DNS rebinding), the largest request body of any route (413 beyond), and
    # whether /metrics needs the console's login when the Kafka listeners have security.
    allowed_hosts: str = attrs.field(default="localhost,127.0.0.1,[::1]", validator=lambda _s, _a, v: host_patterns(v))
    max_request_bytes: int = 2 * 1024 * 1024
    metrics_authentication: bool = False
    # HTTPS for the HTTP listener: each ssl_* key here, else the broker-wide `ssl.*` one (as a Kafka listener's
    # `listener.name.<l>.ssl.*` override), read by the same TLS wiring (app/wiring/tls.py).
    ssl_enabled: bool = False
    ssl_keystore_type: str | None = None
    ssl_keystore_location: str | None = None
    ssl_keystore_certificate_chain: str | None = None
    ssl_keystore_key: str | None = None
    ssl_key_password: str | None = None
    ssl_truststore_type: str | None = None
    ssl_truststore_location: str | None = None
    ssl_truststore_certificates: str | None = None
    ssl_client_auth: str | None = None
    # KIP-714: how often clients push their metrics (Kafka's client-metrics `interval.ms`, 5 min by default;
    # shorter here so /metrics is fresh), and the largest push accepted
    telemetry_push_interval_ms: int = 30_000
    telemetry_max_bytes: int = 1 << 20
    # trafka's own: the /testing/... control endpoints (advance the clock, stop a broker, intercept) for
    # test suites in other languages; they stop brokers and refuse requests on demand, so off by default
    testing: bool = False


def host_patterns(names: str) -> tuple[str, ...]:
    """`http.allowed_hosts` as patterns: comma separated names, `*.domain` or `*` (any)."""
    patterns = tuple(name.strip().lower() for name in names.split(",") if name.strip())
    for pattern in patterns:
        if "*" in pattern[1:] or (pattern.startswith("*") and pattern != "*" and not pattern.startswith("*.")):
            raise ValueError(f"http.allowed_hosts: {pattern!r} is not a name, '*.domain' or '*'")
    return patterns


@attrs.frozen
class LogSettings:
    """The broker's defaults for topic configs (Kafka's `log.*` keys); a topic's own config wins.
    None is Kafka's default (`trafka.domain.configs.TOPIC_CONFIG_DEFAULTS`)."""

    retention_ms: int | None = None  # retention.ms; log.retention.ms|minutes|hours
    retention_bytes: int | None = None  # retention.bytes
    segment_bytes: int | None = None  # segment.bytes; at least 1 MiB, as Kafka 4.1+ (ADR 99)
    roll_ms: int | None = None  # segment.ms; log.roll.ms|hours
    flush_interval_messages: int | None = None  # flush.messages
    flush_interval_ms: int | None = None  # flush.ms
    index_interval_bytes: int | None = None  # index.interval.bytes
    # The Kafka key a value above was given as, in its unit (log.retention.hours in Kafka's
    # server.properties): what DescribeConfigs' synonyms name, as Kafka's do
    retention_ms_key: str = "log.retention.ms"
    roll_ms_key: str = "log.roll.ms"
    flush_interval_ms_key: str = "log.flush.interval.ms"


@attrs.frozen
class ListenerNameSettings:
    """Kafka's per-listener overrides, `listener.name.<listener>.<key>` (TOML: `[security.listener_name.<listener>]`)."""

    sasl_enabled_mechanisms: str | None = None  # listener.name.<l>.sasl.enabled.mechanisms
    plain_sasl_jaas_config: str | None = None  # listener.name.<l>.plain.sasl.jaas.config (user_<name>="<password>")
    ssl_keystore_type: str | None = None
    ssl_keystore_location: str | None = None
    ssl_keystore_certificate_chain: str | None = None
    ssl_keystore_key: str | None = None
    ssl_key_password: str | None = None
    ssl_truststore_type: str | None = None
    ssl_truststore_location: str | None = None
    ssl_truststore_certificates: str | None = None
    ssl_client_auth: str | None = None


@attrs.frozen
class SecuritySettings:
    """Kafka's security keys with dots as underscores (`sasl.enabled.mechanisms` -> sasl_enabled_mechanisms)."""

    sasl_enabled_mechanisms: str = "GSSAPI"  # Kafka's default; trafka serves PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
    connection_failed_authentication_delay_ms: int = 100  # connection.failed.authentication.delay.ms
    connections_max_reauth_ms: int = 0  # connections.max.reauth.ms (KIP-368); 0: no re-authentication
    sasl_server_max_receive_size: int = 524288  # sasl.server.max.receive.size: a frame's bound until authenticated
    # TLS for SSL and SASL_SSL listeners: PEM only (ssl.keystore.type=PEM), as a file holding the private
    # key and the certificate chain (ssl.keystore.location) or inline (ssl.keystore.key and
    # ssl.keystore.certificate.chain); ssl.key.password decrypts an encrypted key.
    ssl_keystore_type: str = "JKS"  # Kafka's default; trafka reads PEM only
    ssl_keystore_location: str | None = None
    ssl_keystore_certificate_chain: str | None = None
    ssl_keystore_key: str | None = None
    ssl_key_password: str | None = None
    ssl_truststore_type: str = "JKS"
    ssl_truststore_location: str | None = None  # PEM CA certificates that sign client certificates
    ssl_truststore_certificates: str | None = None
    ssl_client_auth: str = "none"  # ssl.client.auth: required, requested or none
    ssl_handshake_timeout_ms: int = 10000  # trafka's own: a TLS handshake not done by then closes the connection
    ssl_principal_mapping_rules: str = "DEFAULT"  # ssl.principal.mapping.rules (Kafka's SslPrincipalMapper syntax)
    ssl_enabled_protocols: str = "TLSv1.2,TLSv1.3"  # ssl.enabled.protocols
    ssl_cipher_suites: str | None = None  # ssl.cipher.suites (TLS 1.2 suites; TLS 1.3: all or none)
    principal_builder_class: str = ""  # principal.builder.class: Kafka's DefaultKafkaPrincipalBuilder only
    # Authorization: StandardAuthorizer's semantics when authorizer.class.name is set.
    authorizer_class_name: str = ""  # authorizer.class.name (org.apache.kafka.metadata.authorizer.StandardAuthorizer)
    super_users: str = ""  # super.users: "User:admin;User:ops"
    allow_everyone_if_no_acl_found: bool = False  # allow.everyone.if.no.acl.found
    # Delegation tokens (KIP-48, ADR 139): on only with a secret key, as Kafka's
    delegation_token_secret_key: str | None = None  # delegation.token.secret.key
    delegation_token_max_lifetime_ms: int = 604_800_000  # delegation.token.max.lifetime.ms (7 days)
    delegation_token_expiry_time_ms: int = 86_400_000  # delegation.token.expiry.time.ms (1 day)
    delegation_token_expiry_check_interval_ms: int = 3_600_000  # delegation.token.expiry.check.interval.ms
    listener_name: dict[str, ListenerNameSettings] = attrs.Factory(dict)


@attrs.frozen
class LogCleanerSettings:
    """Kafka's log.cleaner.* broker configs, with Kafka's defaults."""

    enable: bool = True  # log.cleaner.enable
    threads: int = 1  # log.cleaner.threads
    dedupe_buffer_size: int = 134217728  # log.cleaner.dedupe.buffer.size, shared by the threads
    io_buffer_load_factor: float = 0.9  # log.cleaner.io.buffer.load.factor
    io_max_bytes_per_second: float = 1.7976931348623157e308  # log.cleaner.io.max.bytes.per.second
    backoff_ms: int = 15000  # log.cleaner.backoff.ms: the sleep when no log needs cleaning


@attrs.frozen
class Settings:
    server: ServerSettings = ServerSettings()
    broker: BrokerSettings = BrokerSettings()
    storage: StorageSettings = StorageSettings()
    groups: GroupCoordinatorSettings = GroupCoordinatorSettings()
    http: HttpSettings = HttpSettings()
    log: LogSettings = LogSettings()
    security: SecuritySettings = SecuritySettings()
    log_cleaner: LogCleanerSettings = LogCleanerSettings()
    log_level: str = "INFO"
