"""Kafka's broker configuration, as Kafka writes it, mapped onto trafka's settings.

`map_kafka_configs` takes Kafka config names and values (from a `server.properties` file, `KAFKA_*`
environment variables, or an embedding program) and gives back the nested overrides that
`trafka.app.config.settings.load_settings` takes, plus the Kafka keys that were accepted but do nothing here.
One table, `_SIMPLE`, maps each Kafka key trafka implements to a setting and Kafka's type and lower
bound; the keys whose meaning spans several values are resolved after it, with Kafka's precedence:
`log.retention.ms` over `.minutes` over `.hours`, `log.roll.ms` over `.hours`, `log.dirs` over
`log.dir`, `log.flush.interval.ms` over `log.flush.scheduler.interval.ms`.

`listeners`, `advertised.listeners` and `listener.security.protocol.map` map onto trafka's listeners
(every listener is served, PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL: ADR 16); the ones named in
`controller.listener.names` are left out, as is the controller quorum: trafka runs none.

A name that is no Kafka broker config at all is an error (`kafka_names.py`, which also reads the
`KAFKA_*` variables as the `apache/kafka` image does); a bad value is an error naming the key and the
value (`kafka_values.py`, Kafka's types and bounds).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from trafka.domain.configs import MIN_SEGMENT_BYTES

from .kafka_names import is_kafka_key
from .kafka_values import (
    KafkaConfigError,
    config_def_int,
    kafka_boolean,
    kafka_double,
    kafka_int,
    kafka_integer,
    kafka_long,
    kafka_text,
)

# Kafka key -> (trafka setting path, parser with Kafka's type and bounds).
_SIMPLE: dict[str, tuple[tuple[str, str], Callable[[str, str], Any]]] = {
    "node.id": (("broker", "node_id"), kafka_int(0)),
    "num.partitions": (("broker", "num_partitions"), kafka_int(1)),
    "auto.create.topics.enable": (("broker", "auto_create_topics_enable"), kafka_boolean),
    "default.replication.factor": (("broker", "default_replication_factor"), kafka_integer(1, 1)),
    "message.max.bytes": (("broker", "message_max_bytes"), kafka_int(0)),
    "fetch.max.bytes": (("broker", "fetch_max_bytes"), kafka_int(1024)),
    "max.incremental.fetch.session.cache.slots": (
        ("broker", "max_incremental_fetch_session_cache_slots"),
        kafka_int(0),
    ),
    "quota.window.num": (("broker", "quota_window_num"), kafka_int(1)),
    "quota.window.size.seconds": (("broker", "quota_window_size_seconds"), kafka_int(1)),
    "controller.quota.window.num": (("broker", "controller_quota_window_num"), kafka_int(1)),
    "controller.quota.window.size.seconds": (("broker", "controller_quota_window_size_seconds"), kafka_int(1)),
    "socket.request.max.bytes": (("server", "max_request_bytes"), kafka_int(1)),
    "connections.max.idle.ms": (("server", "connections_max_idle_ms"), kafka_long()),
    "max.connections": (("server", "max_connections"), kafka_int(0)),
    "max.connections.per.ip": (("server", "max_connections_per_ip"), kafka_int(0)),
    "max.connections.per.ip.overrides": (("server", "max_connections_per_ip_overrides"), kafka_text),
    "transaction.max.timeout.ms": (("broker", "transaction_max_timeout_ms"), kafka_int(1)),
    "cordoned.log.dirs": (("broker", "cordoned_log_dirs"), kafka_text),
    "transaction.state.log.segment.bytes": (("broker", "transaction_state_log_segment_bytes"), kafka_int(1)),
    "log.retention.bytes": (("log", "retention_bytes"), kafka_long()),
    "log.segment.bytes": (("log", "segment_bytes"), config_def_int(MIN_SEGMENT_BYTES)),
    "log.index.interval.bytes": (("log", "index_interval_bytes"), kafka_int(0)),
    "log.flush.interval.messages": (("log", "flush_interval_messages"), kafka_long(1)),
    "log.retention.check.interval.ms": (("storage", "retention_check_interval_ms"), kafka_long(1)),
    "log.flush.offset.checkpoint.interval.ms": (("storage", "checkpoint_interval_ms"), kafka_int(0)),
    "group.initial.rebalance.delay.ms": (("groups", "initial_rebalance_delay_ms"), kafka_int()),
    "group.min.session.timeout.ms": (("groups", "min_session_timeout_ms"), kafka_int()),
    "group.max.session.timeout.ms": (("groups", "max_session_timeout_ms"), kafka_int()),
    "sasl.enabled.mechanisms": (("security", "sasl_enabled_mechanisms"), kafka_text),
    "connection.failed.authentication.delay.ms": (
        ("security", "connection_failed_authentication_delay_ms"),
        kafka_int(0),
    ),
    "connections.max.reauth.ms": (("security", "connections_max_reauth_ms"), kafka_long(0)),
    "delegation.token.secret.key": (("security", "delegation_token_secret_key"), kafka_text),
    "delegation.token.max.lifetime.ms": (("security", "delegation_token_max_lifetime_ms"), kafka_long(1)),
    "delegation.token.expiry.time.ms": (("security", "delegation_token_expiry_time_ms"), kafka_long(1)),
    "delegation.token.expiry.check.interval.ms": (
        ("security", "delegation_token_expiry_check_interval_ms"),
        kafka_long(1),
    ),
    "sasl.server.max.receive.size": (("security", "sasl_server_max_receive_size"), kafka_int(1)),
    "ssl.keystore.type": (("security", "ssl_keystore_type"), kafka_text),
    "ssl.keystore.location": (("security", "ssl_keystore_location"), kafka_text),
    "ssl.keystore.certificate.chain": (("security", "ssl_keystore_certificate_chain"), kafka_text),
    "ssl.keystore.key": (("security", "ssl_keystore_key"), kafka_text),
    "ssl.key.password": (("security", "ssl_key_password"), kafka_text),
    "ssl.truststore.type": (("security", "ssl_truststore_type"), kafka_text),
    "ssl.truststore.location": (("security", "ssl_truststore_location"), kafka_text),
    "ssl.truststore.certificates": (("security", "ssl_truststore_certificates"), kafka_text),
    "ssl.client.auth": (("security", "ssl_client_auth"), kafka_text),
    "ssl.principal.mapping.rules": (("security", "ssl_principal_mapping_rules"), kafka_text),
    "ssl.enabled.protocols": (("security", "ssl_enabled_protocols"), kafka_text),
    "ssl.cipher.suites": (("security", "ssl_cipher_suites"), kafka_text),
    "principal.builder.class": (("security", "principal_builder_class"), kafka_text),
    "authorizer.class.name": (("security", "authorizer_class_name"), kafka_text),
    "super.users": (("security", "super_users"), kafka_text),
    "allow.everyone.if.no.acl.found": (("security", "allow_everyone_if_no_acl_found"), kafka_boolean),
    "offsets.retention.minutes": (("groups", "offsets_retention_minutes"), kafka_int(1)),
    "offsets.retention.check.interval.ms": (("groups", "offsets_retention_check_interval_ms"), kafka_long(1)),
    "offsets.topic.segment.bytes": (("groups", "offsets_topic_segment_bytes"), kafka_int(1)),
    "group.consumer.session.timeout.ms": (("groups", "consumer_session_timeout_ms"), kafka_int(1)),
    "group.consumer.min.session.timeout.ms": (("groups", "consumer_min_session_timeout_ms"), kafka_int(1)),
    "group.consumer.max.session.timeout.ms": (("groups", "consumer_max_session_timeout_ms"), kafka_int(1)),
    "group.consumer.heartbeat.interval.ms": (("groups", "consumer_heartbeat_interval_ms"), kafka_int(1)),
    "group.consumer.min.heartbeat.interval.ms": (("groups", "consumer_min_heartbeat_interval_ms"), kafka_int(1)),
    "group.consumer.max.heartbeat.interval.ms": (("groups", "consumer_max_heartbeat_interval_ms"), kafka_int(1)),
    "group.consumer.max.size": (("groups", "consumer_max_size"), kafka_int(1)),
    "group.consumer.assignors": (("groups", "consumer_assignors"), kafka_text),
    "group.consumer.migration.policy": (("groups", "consumer_migration_policy"), kafka_text),
    "group.coordinator.rebalance.protocols": (("groups", "rebalance_protocols"), kafka_text),
    "group.streams.session.timeout.ms": (("groups", "streams_session_timeout_ms"), kafka_int(1)),
    "group.streams.heartbeat.interval.ms": (("groups", "streams_heartbeat_interval_ms"), kafka_int(1)),
    "group.streams.num.standby.replicas": (("groups", "streams_num_standby_replicas"), kafka_int(0)),
    "group.streams.max.standby.replicas": (("groups", "streams_max_standby_replicas"), kafka_int(0)),
    "group.streams.max.size": (("groups", "streams_max_size"), kafka_int(1)),
    "group.streams.min.session.timeout.ms": (("groups", "streams_min_session_timeout_ms"), kafka_int(1)),
    "group.streams.max.session.timeout.ms": (("groups", "streams_max_session_timeout_ms"), kafka_int(1)),
    "group.streams.min.heartbeat.interval.ms": (("groups", "streams_min_heartbeat_interval_ms"), kafka_int(1)),
    "group.streams.max.heartbeat.interval.ms": (("groups", "streams_max_heartbeat_interval_ms"), kafka_int(1)),
    "group.streams.initial.rebalance.delay.ms": (("groups", "streams_initial_rebalance_delay_ms"), kafka_int(0)),
    "group.streams.topology.description.plugin.class": (
        ("groups", "streams_topology_description_plugin_class"),
        kafka_text,
    ),
    "group.share.enable": (("groups", "share_enable"), kafka_boolean),
    "group.share.session.timeout.ms": (("groups", "share_session_timeout_ms"), kafka_int(1)),
    "group.share.heartbeat.interval.ms": (("groups", "share_heartbeat_interval_ms"), kafka_int(1)),
    "group.share.max.size": (("groups", "share_max_size"), kafka_int(1)),
    "group.share.record.lock.duration.ms": (("groups", "share_record_lock_duration_ms"), kafka_int(1)),
    # Kafka 4.2's ShareGroupConfig ranges
    "group.share.min.record.lock.duration.ms": (
        ("groups", "share_min_record_lock_duration_ms"),
        kafka_integer(1000, 30000),
    ),
    "group.share.max.record.lock.duration.ms": (
        ("groups", "share_max_record_lock_duration_ms"),
        kafka_integer(30000, 3600000),
    ),
    "group.share.delivery.count.limit": (("groups", "share_delivery_count_limit"), kafka_int(2)),
    "errors.deadletterqueue.topic.name.prefix": (("groups", "share_dead_letter_topic_prefix"), kafka_text),
    "errors.deadletterqueue.auto.create.topics.enable": (
        ("groups", "share_dead_letter_auto_create_topics_enable"),
        kafka_boolean,
    ),
    "group.share.partition.max.record.locks": (("groups", "share_partition_max_record_locks"), kafka_int(100)),
    "share.coordinator.snapshot.update.records.per.snapshot": (
        ("groups", "share_snapshot_update_records_per_snapshot"),
        kafka_integer(0, 500),  # Kafka's ShareCoordinatorConfig: between(0, 500)
    ),
    "producer.id.expiration.ms": (("broker", "producer_id_expiration_ms"), kafka_int(1)),
    "log.cleaner.enable": (("log_cleaner", "enable"), kafka_boolean),
    "log.cleaner.threads": (("log_cleaner", "threads"), kafka_int(0)),
    "log.cleaner.dedupe.buffer.size": (("log_cleaner", "dedupe_buffer_size"), kafka_long()),
    "log.cleaner.io.buffer.load.factor": (("log_cleaner", "io_buffer_load_factor"), kafka_double(0.0)),
    "log.cleaner.io.max.bytes.per.second": (("log_cleaner", "io_max_bytes_per_second"), kafka_double(0.0)),
    "log.cleaner.backoff.ms": (("log_cleaner", "backoff_ms"), kafka_long(0)),
    "producer.id.expiration.check.interval.ms": (("broker", "producer_id_expiration_check_interval_ms"), kafka_int(1)),
    "transactional.id.expiration.ms": (("broker", "transactional_id_expiration_ms"), kafka_int(1)),
    "transaction.remove.expired.transaction.cleanup.interval.ms": (
        ("broker", "transaction_remove_expired_transaction_cleanup_interval_ms"),
        kafka_int(1),
    ),
}
# Resolved together below, with Kafka's precedence among them.
_COMBINED = frozenset(
    {
        "broker.id",
        "log.dirs",
        "log.dir",
        "log.retention.ms",
        "log.retention.minutes",
        "log.retention.hours",
        "log.roll.ms",
        "log.roll.hours",
        "log.flush.interval.ms",
        "log.flush.scheduler.interval.ms",
        "listeners",
        "advertised.listeners",
        "controller.listener.names",
        "listener.security.protocol.map",
        "process.roles",
    }
)
IMPLEMENTED_KAFKA_KEYS = frozenset(_SIMPLE) | _COMBINED


@attrs.frozen
class KafkaSettings:
    """What a set of Kafka configs means to trafka."""

    overrides: dict[str, Any]  # nested, as load_settings takes them: {"broker": {"num_partitions": 3}}
    decided_by: dict[str, str]  # "broker.num_partitions" -> the Kafka key that set it
    ignored: tuple[str, ...]  # Kafka keys accepted that trafka does not implement


def map_kafka_configs(configs: Mapping[str, str]) -> KafkaSettings:
    """Kafka config names and string values -> trafka's settings; `KafkaConfigError` names a bad one."""
    for key in configs:
        if not is_kafka_key(key):
            raise KafkaConfigError(f"unknown Kafka config {key!r}: no Apache Kafka broker has it")
    overrides: dict[str, Any] = {}
    decided_by: dict[str, str] = {}

    def put(path: tuple[str, str], value: Any, key: str) -> None:
        overrides.setdefault(path[0], {})[path[1]] = value
        decided_by[".".join(path)] = key

    for key, (path, parse) in _SIMPLE.items():
        if key in configs:
            put(path, parse(key, configs[key]), key)
    _node_id(configs, put)
    _log_dirs(configs, put)
    _first_of(
        configs,
        put,
        ("log", "retention_ms"),
        [
            ("log.retention.ms", kafka_long(), 1),
            ("log.retention.minutes", kafka_int(), 60_000),
            ("log.retention.hours", kafka_int(), 3_600_000),
        ],
        negative_is_unlimited=True,
    )
    _first_of(
        configs,
        put,
        ("log", "roll_ms"),
        [("log.roll.ms", kafka_long(1), 1), ("log.roll.hours", kafka_int(1), 3_600_000)],
    )
    _first_of(
        configs,
        put,
        ("log", "flush_interval_ms"),
        [("log.flush.interval.ms", kafka_long(), 1), ("log.flush.scheduler.interval.ms", kafka_long(), 1)],
    )
    _listeners(configs, put)
    per_listener = _listener_name_keys(configs, overrides)
    ignored = tuple(sorted(key for key in configs if key not in IMPLEMENTED_KAFKA_KEYS and key not in per_listener))
    for key in ignored:
        if _is_unimplemented_security_key(key):
            raise KafkaConfigError(
                f"{key} is a security config trafka does not implement: remove it rather than have it ignored"
            )
    return KafkaSettings(overrides, decided_by, ignored)


# Security configs whose being ignored would change who may connect or how: refused at start. Those of a
# broker's client roles (inter-broker and controller connections: trafka has neither) and the passwords
# of JKS/PKCS12 stores (trafka reads PEM only, and refuses other store types) are not among them.
_SECURITY_PREFIXES = ("ssl.", "sasl.", "security.", "delegation.token.")
_SECURITY_KEYS = frozenset(
    {
        "principal.builder.class",
        "max.connection.creation.rate",
        "max.connections",  # listener.name.<l>.max.connections: only the broker-wide limit is implemented
        "max.connections.per.ip",
        "max.connections.per.ip.overrides",
        "connections.max.idle.ms",
        "connections.max.reauth.ms",
    }
)
_CLIENT_ROLE_KEYS = frozenset(
    {
        "security.inter.broker.protocol",
        "sasl.mechanism.inter.broker.protocol",
        "sasl.mechanism.controller.protocol",
        "ssl.endpoint.identification.algorithm",
        "sasl.client.callback.handler.class",
        "ssl.keystore.password",
        "ssl.truststore.password",
    }
)


def _is_unimplemented_security_key(key: str) -> bool:
    if key.startswith("listener.name."):
        key = key[len("listener.name.") :].partition(".")[2]
        if key.startswith(("plain.", "scram-sha-256.", "scram-sha-512.", "oauthbearer.", "gssapi.")):
            key = key.partition(".")[2]
    if key in _CLIENT_ROLE_KEYS or key.startswith("sasl.login."):
        return False
    return key in _SECURITY_KEYS or key.startswith(_SECURITY_PREFIXES)


def _node_id(configs: Mapping[str, str], put: Callable[..., None]) -> None:
    roles = [r.strip() for r in configs.get("process.roles", "broker").split(",") if r.strip()]
    if "broker" not in roles:
        raise KafkaConfigError(f"invalid value {configs['process.roles']!r} for process.roles: trafka is a broker")
    if "broker.id" not in configs:
        return
    broker_id = kafka_int(0)("broker.id", configs["broker.id"])
    if "node.id" in configs and int(configs["node.id"].strip()) != broker_id:
        raise KafkaConfigError(f"broker.id {broker_id} must equal node.id {configs['node.id'].strip()}")
    if "node.id" not in configs:
        put(("broker", "node_id"), broker_id, "broker.id")


def _log_dirs(configs: Mapping[str, str], put: Callable[..., None]) -> None:
    key = "log.dirs" if "log.dirs" in configs else "log.dir" if "log.dir" in configs else None
    if key is None:
        return
    dirs = [d.strip() for d in configs[key].split(",") if d.strip()]
    if len(dirs) != 1:
        raise KafkaConfigError(f"invalid value {configs[key]!r} for {key}: trafka serves exactly one log dir")
    put(("storage", "data_dir"), dirs[0], key)
    put(("storage", "kind"), "filesystem", key)


def _first_of(
    configs: Mapping[str, str],
    put: Callable[..., None],
    path: tuple[str, str],
    variants: list[tuple[str, Callable[[str, str], int], int]],
    negative_is_unlimited: bool = False,
) -> None:
    """The first variant set wins, in the unit it is given in (Kafka's ms > minutes > hours)."""
    for key, parse, to_ms in variants:
        if key in configs:
            millis = parse(key, configs[key]) * to_ms
            put(path, -1 if negative_is_unlimited and millis < 0 else millis, key)
            put((path[0], f"{path[1]}_key"), key, key)  # the name and unit DescribeConfigs' synonyms give
            return


def _parse_listeners(key: str, value: str) -> list[tuple[str, str, int]]:
    listeners = []
    for entry in (e.strip() for e in value.split(",")):
        if not entry:
            continue
        name, sep, address = entry.partition("://")
        host, colon, port = address.rpartition(":")
        if not sep or not colon or not name:
            raise KafkaConfigError(f"invalid value {value!r} for {key}: {entry!r} is not NAME://host:port")
        host = host.strip("[]")
        listeners.append((name.upper(), host, kafka_integer(0, 65535)(key, port)))
    return listeners


def _listeners(configs: Mapping[str, str], put: Callable[..., None]) -> None:
    """Kafka's listener keys onto trafka's (parsed and checked as Kafka does by `domain.listeners` when
    the broker starts); listeners named in `controller.listener.names` are left out: trafka serves no
    controller quorum."""
    controllers = {n.strip().upper() for n in configs.get("controller.listener.names", "").split(",") if n.strip()}
    for key, setting in (("listeners", "listeners"), ("advertised.listeners", "advertised_listeners")):
        if key not in configs:
            continue
        entries = _parse_listeners(key, configs[key])  # checks NAME://host:port
        kept = [e.strip() for e in configs[key].split(",") if e.strip()]
        served = [entry for entry, (name, _, _) in zip(kept, entries) if name not in controllers]
        if served:
            put(("server", setting), ",".join(served), key)
    if "listener.security.protocol.map" in configs:
        put(
            ("server", "listener_security_protocol_map"),
            configs["listener.security.protocol.map"],
            "listener.security.protocol.map",
        )


_LISTENER_NAME_KEYS = {
    "sasl.enabled.mechanisms",
    "plain.sasl.jaas.config",
    "ssl.keystore.type",
    "ssl.keystore.location",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.key.password",
    "ssl.truststore.type",
    "ssl.truststore.location",
    "ssl.truststore.certificates",
    "ssl.client.auth",
}


def _listener_name_keys(configs: Mapping[str, str], overrides: dict[str, Any]) -> set[str]:
    """`listener.name.<listener>.<key>` into `[security.listener_name.<listener>]`; the keys used."""
    used = set()
    for key, value in configs.items():
        if not key.startswith("listener.name."):
            continue
        listener, _, rest = key[len("listener.name.") :].partition(".")
        if rest in _LISTENER_NAME_KEYS and listener:
            section = overrides.setdefault("security", {}).setdefault("listener_name", {})
            section.setdefault(listener.lower(), {})[rest.replace(".", "_")] = value
            used.add(key)
    return used


def overrides_from_config_names(
    configs: Mapping[str, Any], on_ignored: Callable[[tuple[str, ...]], None] | None = None
) -> dict[str, Any]:
    """`num_partitions=3`, `group.initial.rebalance.delay.ms=0`: Kafka config names, with underscores
    allowed in place of dots (for Python keyword arguments), as the overrides `load_settings` takes.

    Values may be Python values (`3`, `True`); they are checked as Kafka checks its configs' values. A
    name that is no Kafka config raises `KafkaConfigError`, and so does a Kafka config trafka does not
    implement, unless `on_ignored` is given: it is then called with those names (to log them)."""
    names = {}
    for name, value in configs.items():
        key = name if is_kafka_key(name) else name.replace("_", ".")
        if isinstance(value, bool):
            value = str(value).lower()
        names[key] = str(value)
    mapped = map_kafka_configs(names)
    if mapped.ignored:
        if on_ignored is None:
            raise KafkaConfigError(f"trafka does not implement {', '.join(mapped.ignored)}")
        on_ignored(mapped.ignored)
    return mapped.overrides
