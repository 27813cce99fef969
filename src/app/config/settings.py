"""trafka's configuration: the settings tree (`sections.py`) built by a cattrs converter (`structure.py`) that forbids
extra keys.

Sources, later ones winning: the defaults (`sections.py`), a config file (`--config`: TOML if it ends in `.toml`,
otherwise Kafka's `server.properties` format), `KAFKA_<NAME>` environment variables as the
`apache/kafka` image reads them, `TRAFKA_<SECTION>_<KEY>` environment variables
(`TRAFKA_BROKER_NUM_PARTITIONS=3`), then command-line flags. Kafka's names are mapped by
`kafka_keys`; a properties file and the `KAFKA_*` variables are merged first, as the image merges
them, so Kafka's own precedence (`log.retention.ms` over `.hours`) holds across the two. A key that does
not exist or a value of the wrong type is a `ConfigError` whose message names the key.
`load_configuration` also tells where each value came from (`trafka config show`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import attrs

from trafka.adapters.kafka.releases import UnknownRelease, release_name
from trafka.domain.configs import MIN_SEGMENT_BYTES

from .kafka_keys import KafkaConfigError, map_kafka_configs
from .kafka_names import kafka_environment
from .properties import PropertiesError, read_properties
from .sections import (
    BrokerSettings,
    ConfigError,
    GroupCoordinatorSettings,
    HttpSettings,
    ListenerNameSettings,
    LogCleanerSettings,
    LogSettings,
    SecuritySettings,
    ServerSettings,
    Settings,
    StorageSettings,
    host_patterns,
)
from .structure import structure

# The tree is re-exported: callers name the settings and their loading in one place.
__all__ = [
    "BrokerSettings",
    "ConfigError",
    "ENV_PREFIX",
    "GroupCoordinatorSettings",
    "HttpSettings",
    "ListenerNameSettings",
    "LoadedConfiguration",
    "LogCleanerSettings",
    "LogSettings",
    "SINGLE_NODE_DEFAULTS",
    "SINGLE_NODE_ORIGIN",
    "SecuritySettings",
    "ServerSettings",
    "Settings",
    "StorageSettings",
    "config_path",
    "from_environment",
    "host_patterns",
    "load_configuration",
    "load_settings",
    "log_ignored_kafka_keys",
    "read_toml",
]

ENV_PREFIX = "TRAFKA_"
log = logging.getLogger("trafka")


def _merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def read_toml(path: str) -> dict[str, Any]:
    import tomllib  # a TOML config file only

    try:
        with open(path, "rb") as file:
            return tomllib.load(file)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc


# trafka's variables that are no setting: the operator commands' broker, the attrs code cache's switch (ADR 128)
NOT_SETTINGS = frozenset({"TRAFKA_BOOTSTRAP", "TRAFKA_ATTRS_CODE_CACHE"})


def from_environment(environ: Mapping[str, str]) -> dict[str, Any]:
    """`TRAFKA_SECTION_KEY=value` as {section: {key: value}}; `TRAFKA_LOG_LEVEL` is top level."""
    sections = {"server", "broker", "storage", "groups", "http", "log", "security", "log_cleaner"}
    out: dict[str, Any] = {}
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX) or name in NOT_SETTINGS:
            continue
        key = name[len(ENV_PREFIX) :].lower()
        if key == "log_level":
            out["log_level"] = value
            continue
        # the longest section the name starts with: TRAFKA_LOG_CLEANER_THREADS is [log_cleaner] threads
        section = max((s for s in sections if key.startswith(s + "_")), key=len, default="")
        field = key[len(section) + 1 :]
        if not section or not field:
            raise ConfigError(f"unknown environment variable {name}")
        out.setdefault(section, {})[field] = value
    return out


@attrs.frozen
class LoadedConfiguration:
    settings: Settings
    sources: dict[str, str]  # "broker.num_partitions" -> "env KAFKA_NUM_PARTITIONS"; unlisted: default
    ignored_kafka_keys: tuple[str, ...]  # Kafka configs given that trafka does not implement


def _paths(tree: Mapping[str, Any], prefix: str = "") -> list[str]:
    out = []
    for key, value in tree.items():
        if isinstance(value, Mapping):
            out += _paths(value, f"{prefix}{key}.")
        else:
            out.append(prefix + key)
    return out


# With neither a properties file nor KAFKA_* variables, `trafka serve` starts as `docker run
# apache/kafka` does: from Kafka's shipped single-node config/server.properties rather than from bare
# code defaults. Only the keys trafka serves and whose shipped value differs from Kafka's code default
# are listed (docs/configuration.md lists them all, with the ones trafka has no use for).
SINGLE_NODE_DEFAULTS = {
    # Not in Kafka 4.x's KRaft file (it was 0 in the ZooKeeper-era file every quickstart used): a fake's
    # first consumer group should not wait 3 s for members that are not coming.
    "group.initial.rebalance.delay.ms": "0",
    # the same for streams groups (Kafka 4.2's group.streams.initial.rebalance.delay.ms, 3000 in its code)
    "group.streams.initial.rebalance.delay.ms": "0",
}
SINGLE_NODE_ORIGIN = "default (Kafka's single-node server.properties)"


def _kafka_layers(
    config_file: str | None, environ: Mapping[str, str] | None, single_node: bool = False
) -> tuple[dict[str, Any], dict[str, str], tuple[str, ...]]:
    """A properties file and the KAFKA_* variables, merged as the apache/kafka image merges them; with
    neither and `single_node` (`trafka serve`), the single-node defaults above (the image too uses its
    server.properties only then)."""
    configs: dict[str, str] = {}
    origin: dict[str, str] = {}
    given_file = config_file is not None and not config_file.endswith(".toml")
    if single_node and not given_file and not kafka_environment(environ or {}):
        for key, value in SINGLE_NODE_DEFAULTS.items():
            configs[key], origin[key] = value, SINGLE_NODE_ORIGIN
    if config_file is not None and not config_file.endswith(".toml"):
        try:
            for key, value in read_properties(config_file).items():
                configs[key], origin[key] = value, f"file {config_file}"
        except OSError as exc:
            raise ConfigError(f"cannot read config file {config_file}: {exc.strerror}") from exc
        except PropertiesError as exc:
            raise ConfigError(f"config file {config_file}: {exc}") from exc
    for key, (value, variable) in kafka_environment(environ or {}).items():
        configs[key], origin[key] = value, f"env {variable}"
    if not configs:
        return {}, {}, ()
    try:
        mapped = map_kafka_configs(configs)
    except KafkaConfigError as exc:
        where = sorted({origin[key] for key in configs if key in str(exc)}) or sorted(set(origin.values()))
        raise ConfigError(f"{', '.join(where)}: {exc}") from exc
    sources = {
        path: f"{origin[key]} ({key})" if origin[key].startswith(("file", "default")) else origin[key]
        for path, key in mapped.decided_by.items()
    }
    return mapped.overrides, sources, tuple(mapped.ignored)


def _listener_flags(server: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Flags win over the files, as the README says and as `kafka-server-start --override` does: with
    `listeners` set (by a file or KAFKA_LISTENERS), `--host`/`--port` rewrite the first listener's
    bind address, and `--advertised-host`/`--advertised-port` that listener's advertised entry. An
    advertised port that was the bind port moves with `--port` (port 0 advertises the bound one)."""
    flags: dict[str, Any] = dict(overrides.get("server") or {})
    listeners = flags.get("listeners", server.get("listeners"))
    if (
        not listeners
        or "listeners" in flags
        or not flags.keys() & {"host", "port", "advertised_host", "advertised_port"}
    ):
        return dict(overrides)
    entries = [entry.strip() for entry in listeners.split(",") if entry.strip()]
    name, bind_host, bind_port = _endpoint(entries[0])
    host, port = flags.get("host", bind_host), flags.get("port", bind_port)
    entries[0] = f"{name}://{_bracketed(host)}:{port}"
    advertised_text = flags.get("advertised_listeners", server.get("advertised_listeners"))
    advertised = [entry.strip() for entry in (advertised_text or "").split(",") if entry.strip()]
    shown = next((i for i, entry in enumerate(advertised) if _endpoint(entry)[0] == name), None)
    if shown is not None:
        _, shown_host, shown_port = _endpoint(advertised[shown])
        moved_port = port if shown_port == bind_port else shown_port
        shown_host = flags["advertised_host"] if "advertised_host" in flags else shown_host
        shown_port = flags["advertised_port"] if "advertised_port" in flags else moved_port
        advertised[shown] = f"{name}://{_bracketed(shown_host)}:{shown_port}"
    elif flags.keys() & {"advertised_host", "advertised_port"}:
        shown_host = flags["advertised_host"] if "advertised_host" in flags else host or "localhost"
        advertised.append(f"{name}://{_bracketed(shown_host)}:{flags.get('advertised_port', port)}")
    flags["listeners"] = ",".join(entries)
    if advertised:
        flags["advertised_listeners"] = ",".join(advertised)
    return {**overrides, "server": flags}


def _endpoint(entry: str) -> tuple[str, str, int]:
    """NAME://host:port's three parts (the format is checked where the listeners are resolved)."""
    name, _, address = entry.partition("://")
    host, _, port = address.rpartition(":")
    try:
        return name.upper(), host.strip("[]"), int(port)
    except ValueError:
        raise ConfigError(f"invalid configuration: listener {entry!r} is not NAME://host:port") from None


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def load_configuration(
    config_file: str | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    single_node: bool = False,
) -> LoadedConfiguration:
    """The settings from their sources; `single_node` (the CLI's `serve`, `config show`, `check`) starts
    from Kafka's single-node server.properties when no Kafka configuration is given, as the image does."""
    raw: dict[str, Any] = {}
    sources: dict[str, str] = {}
    if config_file is not None and config_file.endswith(".toml"):
        toml = read_toml(config_file)
        raw = _merge(raw, toml)
        sources.update(dict.fromkeys(_paths(toml), f"file {config_file}"))
    kafka, kafka_sources, ignored = _kafka_layers(config_file, environ, single_node)
    raw = _merge(raw, kafka)
    sources.update(kafka_sources)
    if environ is not None:
        trafka_env = from_environment(environ)
        raw = _merge(raw, trafka_env)
        sources.update({path: f"env {ENV_PREFIX}{path.replace('.', '_').upper()}" for path in _paths(trafka_env)})
    if overrides:
        flags = _listener_flags(raw.get("server", {}), overrides)
        raw = _merge(raw, flags)
        sources.update(dict.fromkeys(_paths(flags), "flag"))
    http = raw.get("http")
    if isinstance(http, dict) and isinstance(http.get("allowed_hosts"), str):
        try:
            host_patterns(http["allowed_hosts"])  # checked here so the message names the key and the value
        except ValueError as exc:
            raise ConfigError(f"invalid configuration: {exc}") from None
    try:
        settings = structure(raw, Settings)
    except Exception as exc:  # cattrs names each key refused; a section's own check (a validator) says why
        from cattrs import BaseValidationError, transform_error  # loaded by the refusal's structuring already

        messages = transform_error(exc, path="config") if isinstance(exc, BaseValidationError) else [str(exc)]
        raise ConfigError("invalid configuration: " + "; ".join(messages)) from exc
    segment_bytes = settings.log.segment_bytes
    if segment_bytes is not None and segment_bytes < MIN_SEGMENT_BYTES:  # Kafka 4.1+'s words (ADR 99)
        raise ConfigError(
            f"invalid configuration: Invalid value {segment_bytes} for configuration log.segment.bytes: "
            f"Value must be at least {MIN_SEGMENT_BYTES}"
        )
    if settings.broker.kafka_version is not None:
        try:
            release_name(settings.broker.kafka_version)
        except UnknownRelease as exc:
            raise ConfigError(f"invalid configuration: broker.kafka_version: {exc}") from None
    return LoadedConfiguration(settings, sources, ignored)


def load_settings(
    config_file: str | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    single_node: bool = False,
) -> Settings:
    return load_configuration(config_file, environ, overrides, single_node=single_node).settings


def config_path(args: Any) -> str | None:
    """`trafka serve FILE` or `--config FILE` (not both)."""
    positional, option = getattr(args, "config_file", None), getattr(args, "config", None)
    if positional and option and positional != option:
        raise ConfigError(f"two config files given: {positional} and --config {option}")
    return positional or option


def log_ignored_kafka_keys(loaded: LoadedConfiguration) -> None:
    if loaded.ignored_kafka_keys:
        log.info("Kafka configs trafka does not implement, ignored: %s", ", ".join(loaded.ignored_kafka_keys))
