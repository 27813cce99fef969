"""trafka's configuration: frozen attrs classes built by a cattrs converter that forbids extra keys.

Sources, later ones winning: the defaults below, a TOML file (`--config`), `TRAFKA_<SECTION>_<KEY>`
environment variables (`TRAFKA_BROKER_NUM_PARTITIONS=3`), then command-line flags. A key that does not
exist or a value of the wrong type is a `ConfigError` whose message names the key's path.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from typing import Any, Literal

import attrs
import cattrs

from trafka.domain.listeners import DEFAULT_SECURITY_PROTOCOL_MAP

ENV_PREFIX = "TRAFKA_"


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
    max_request_bytes: int = 100 * 1024 * 1024
    max_inflight_requests: int = 32
    max_queued_response_bytes: int = 64 * 1024 * 1024
    shutdown_grace_seconds: float = 10.0


@attrs.frozen
class BrokerSettings:
    node_id: int = 1
    cluster_id: str = "trafka-cluster-0000000"
    auto_create_topics_enable: bool = True
    num_partitions: int = 1
    default_replication_factor: int = 1
    message_max_bytes: int = 1048588
    fetch_max_bytes: int = 57671680


@attrs.frozen
class GroupCoordinatorSettings:
    initial_rebalance_delay_ms: int = 3000
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1800000


@attrs.frozen
class StorageSettings:
    kind: Literal["memory", "filesystem"] = "filesystem"
    data_dir: str = "/tmp/trafka-logs"  # like Kafka's default log.dirs=/tmp/kafka-logs
    flush_messages: int | None = None  # overrides every topic's flush.messages; 1 = fsync each batch
    checkpoint_interval_ms: int = 60000  # flush and write recovery points (log.flush.offset.checkpoint.interval.ms)
    retention_check_interval_ms: int = 300000  # as Kafka's log.retention.check.interval.ms
    retention_initial_delay_ms: int = 30000  # Kafka's LogManager starts its retention task 30 s in


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
    # Authorization: StandardAuthorizer's semantics when authorizer.class.name is set.
    authorizer_class_name: str = ""  # authorizer.class.name (org.apache.kafka.metadata.authorizer.StandardAuthorizer)
    super_users: str = ""  # super.users: "User:admin;User:ops"
    allow_everyone_if_no_acl_found: bool = False  # allow.everyone.if.no.acl.found
    listener_name: dict[str, ListenerNameSettings] = attrs.Factory(dict)


@attrs.frozen
class Settings:
    server: ServerSettings = ServerSettings()
    broker: BrokerSettings = BrokerSettings()
    storage: StorageSettings = StorageSettings()
    groups: GroupCoordinatorSettings = GroupCoordinatorSettings()
    security: SecuritySettings = SecuritySettings()
    log_level: str = "INFO"


def _structure_bool(value: Any, _: type) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.lower() in ("true", "1", "yes")
    raise ValueError(f"not a boolean: {value!r}")


def _structure_int(value: Any, _: type) -> int:
    if isinstance(value, bool):
        raise ValueError(f"not an integer: {value!r}")
    return int(value)


def _converter() -> cattrs.Converter:
    converter = cattrs.Converter(forbid_extra_keys=True)
    converter.register_structure_hook(bool, _structure_bool)
    converter.register_structure_hook(int, _structure_int)
    return converter


CONVERTER = _converter()


def _merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def read_toml(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as file:
            return tomllib.load(file)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc


def from_environment(environ: Mapping[str, str]) -> dict[str, Any]:
    """`TRAFKA_SECTION_KEY=value` as {section: {key: value}}; `TRAFKA_LOG_LEVEL` is top level."""
    sections = {"server", "broker", "storage", "groups", "security"}
    out: dict[str, Any] = {}
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX):
            continue
        key = name[len(ENV_PREFIX) :].lower()
        if key == "log_level":
            out["log_level"] = value
            continue
        section, _, field = key.partition("_")
        if section not in sections or not field:
            raise ConfigError(f"unknown environment variable {name}")
        out.setdefault(section, {})[field] = value
    return out


def load_settings(
    config_file: str | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    raw: dict[str, Any] = {}
    if config_file is not None:
        raw = _merge(raw, read_toml(config_file))
    if environ is not None:
        raw = _merge(raw, from_environment(environ))
    if overrides:
        raw = _merge(raw, overrides)
    try:
        return CONVERTER.structure(raw, Settings)
    except Exception as exc:
        messages = cattrs.transform_error(exc, path="config") if isinstance(exc, cattrs.BaseValidationError) else [str(exc)]
        raise ConfigError("invalid configuration: " + "; ".join(messages)) from exc
