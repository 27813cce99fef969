"""Dynamic broker configs: AlterConfigs and IncrementalAlterConfigs on a BROKER resource, as Kafka
(KRaft) serves them (its ConfigAdminManager and DynamicBrokerConfig).

Two levels: this broker's own (resource name = the node id) and the cluster-wide default (resource
name ""); `BrokerPolicy` resolves a value by Kafka's precedence. trafka applies without a restart
only the broker configs that set topic config defaults (`TOPIC_CONFIG_SYNONYMS`: log.retention.ms,
message.max.bytes, ...): a topic without an override of its own uses the new value at once. The
configs Kafka updates dynamically that set machinery trafka does not have (thread pool sizes: it runs
one event loop; Kerberos; tiered storage: `INERT`) are recorded and described as Kafka does, with
nothing to apply; the other configs Kafka updates dynamically (SSL keystores, log.cleaner.*, limits on
connections...) are refused by name rather than stored and ignored; a config Kafka cannot update
dynamically (broker.id, log.dirs, num.partitions, log.retention.hours...) gets Kafka's own refusal.
Changes are recorded through the `CatalogStore` port (KRaft ConfigRecords of the BROKER resource)
before they take effect, and replayed when the catalog loads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from .configs import (
    CORDON_ALL,
    CORDONED_LOG_DIRS,
    TOPIC_CONFIG_DEFAULTS,
    TOPIC_CONFIG_SYNONYMS,
    BrokerPolicy,
    ConfigType,
)
from .errors import ErrorCode, KafkaError
from .ports import CatalogStore, LogStore
from .topic_config_checks import valid_config_value
from .topics import Topic

# Broker config -> the topic config whose default it sets: what trafka applies dynamically.
APPLIED: Mapping[str, str] = {broker: topic for topic, broker in TOPIC_CONFIG_SYNONYMS.items()}

# Kafka's SslConfigs.RECONFIGURABLE_CONFIGS: dynamic only per listener (listener.name.<l>.<config>).
_SECURITY = frozenset(
    {
        "ssl.keystore.type",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.key.password",
        "ssl.truststore.type",
        "ssl.truststore.location",
        "ssl.truststore.password",
        "ssl.keystore.certificate.chain",
        "ssl.keystore.key",
        "ssl.truststore.certificates",
    }
)

# Kafka's DynamicListenerConfig.ReconfigurableConfigs.
_LISTENER = frozenset(
    {
        "advertised.listeners",
        "listeners",
        "listener.security.protocol.map",
        "principal.builder.class",
        "ssl.protocol",
        "ssl.provider",
        "ssl.cipher.suites",
        "ssl.enabled.protocols",
        "ssl.keystore.type",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.key.password",
        "ssl.truststore.type",
        "ssl.truststore.location",
        "ssl.truststore.password",
        "ssl.keymanager.algorithm",
        "ssl.trustmanager.algorithm",
        "ssl.endpoint.identification.algorithm",
        "ssl.secure.random.implementation",
        "ssl.client.auth",
        "ssl.engine.factory.class",
        "sasl.mechanism.inter.broker.protocol",
        "sasl.jaas.config",
        "sasl.enabled.mechanisms",
        "sasl.kerberos.service.name",
        "sasl.kerberos.kinit.cmd",
        "sasl.kerberos.ticket.renew.window.factor",
        "sasl.kerberos.ticket.renew.jitter",
        "sasl.kerberos.min.time.before.relogin",
        "sasl.kerberos.principal.to.local.rules",
        "sasl.login.refresh.window.factor",
        "sasl.login.refresh.window.jitter",
        "sasl.login.refresh.min.period.seconds",
        "sasl.login.refresh.buffer.seconds",
        "connections.max.reauth.ms",
    }
)

_CLUSTER_LEVEL_LISTENER = frozenset({"max.connections", "max.connection.creation.rate", "num.network.threads"})

# Kafka's DynamicBrokerConfig.PerBrokerConfigs: not at the cluster-default level.
PER_BROKER = ((_SECURITY | _LISTENER) - _CLUSTER_LEVEL_LISTENER) | {CORDONED_LOG_DIRS}

# Broker configs trafka applies dynamically that set no topic default: (Kafka's default, type).
BROKER_APPLIED: Mapping[str, tuple[str, ConfigType]] = {CORDONED_LOG_DIRS: ("", ConfigType.LIST)}

CORDONING_METADATA_VERSION = 30  # IBP_4_3_IV0: MetadataVersion.isCordonedLogDirsSupported
_METADATA_VERSION_BEFORE_CORDONING = 29  # what a log dir that records no metadata.version runs (4.2-IV1)

# Kafka's DynamicBrokerConfig.AllDynamicConfigs (Kafka 4.0).
KAFKA_DYNAMIC = frozenset(
    _SECURITY
    | _LISTENER
    | {
        # LogCleaner.ReconfigurableConfigs
        "log.cleaner.threads",
        "log.cleaner.dedupe.buffer.size",
        "log.cleaner.io.buffer.load.factor",
        "log.cleaner.io.buffer.size",
        "message.max.bytes",
        "log.cleaner.io.max.bytes.per.second",
        "log.cleaner.backoff.ms",
        # DynamicLogConfig.ReconfigurableConfigs: every topic config's broker synonym but the message format
        "log.segment.bytes",
        "log.roll.ms",
        "log.roll.jitter.ms",
        "log.index.size.max.bytes",
        "log.flush.interval.messages",
        "log.flush.interval.ms",
        "log.retention.bytes",
        "log.retention.ms",
        "log.index.interval.bytes",
        "log.cleaner.delete.retention.ms",
        "log.cleaner.min.compaction.lag.ms",
        "log.cleaner.max.compaction.lag.ms",
        "log.segment.delete.delay.ms",
        "log.cleaner.min.cleanable.ratio",
        "log.cleanup.policy",
        "unclean.leader.election.enable",
        "min.insync.replicas",
        "compression.type",
        "compression.gzip.level",
        "compression.lz4.level",
        "compression.zstd.level",
        "log.preallocate",
        "log.message.timestamp.type",
        "log.message.timestamp.difference.max.ms",
        "log.message.timestamp.before.max.ms",
        "log.message.timestamp.after.max.ms",
        "log.message.downconversion.enable",
        "log.local.retention.ms",
        "log.local.retention.bytes",
        # DynamicThreadPool, metric reporters, SocketServer, producer state, remote log
        "num.io.threads",
        "num.replica.fetchers",
        "num.recovery.threads.per.data.dir",
        "background.threads",
        "metric.reporters",
        "max.connections.per.ip",
        "max.connections.per.ip.overrides",
        "max.connections",
        "max.connection.creation.rate",
        "num.network.threads",
        "producer.id.expiration.ms",
        "transaction.partition.verification.enable",
        "remote.log.index.file.cache.total.size.bytes",
        "remote.fetch.max.wait.ms",
        "remote.log.manager.copy.max.bytes.per.second",
        "remote.log.manager.fetch.max.bytes.per.second",
        "remote.list.offsets.request.timeout.ms",
        # DynamicLogConfig 4.3 (KIP-1066)
        CORDONED_LOG_DIRS,
    }
)

# Dynamic in Kafka, and about machinery trafka does not have (thread pools: it runs one event loop;
# Kerberos: it serves no GSSAPI; tiered storage; replicas to elect from): accepted, recorded and
# described as Kafka does, with nothing to apply.
INERT_INT = frozenset(
    {
        "background.threads",
        "num.io.threads",
        "num.network.threads",
        "num.replica.fetchers",
        "num.recovery.threads.per.data.dir",
    }
)
INERT = INERT_INT | frozenset(
    {
        "sasl.kerberos.service.name",
        "sasl.kerberos.kinit.cmd",
        "sasl.kerberos.ticket.renew.window.factor",
        "sasl.kerberos.ticket.renew.jitter",
        "sasl.kerberos.min.time.before.relogin",
        "sasl.kerberos.principal.to.local.rules",
        "unclean.leader.election.enable",
        "log.preallocate",
        "log.local.retention.ms",
        "log.local.retention.bytes",
        "remote.log.index.file.cache.total.size.bytes",
        "remote.fetch.max.wait.ms",
        "remote.log.manager.copy.max.bytes.per.second",
        "remote.log.manager.fetch.max.bytes.per.second",
        "remote.list.offsets.request.timeout.ms",
    }
)

_LISTENER_PREFIX = "listener.name."


def _listener_base(name: str) -> str | None:
    """`listener.name.<listener>.<config>` -> `<config>` (Kafka's ListenerConfigRegex)."""
    if not name.startswith(_LISTENER_PREFIX):
        return None
    _, dot, base = name[len(_LISTENER_PREFIX) :].partition(".")
    return base if dot else None


def _scala_set(names: Iterable[str]) -> str:
    return "Set(" + ", ".join(sorted(names)) + ")"


def _config_type(name: str) -> ConfigType:
    topic = APPLIED.get(name)
    if topic is None:
        return BROKER_APPLIED[name][1] if name in BROKER_APPLIED else ConfigType.STRING
    return TOPIC_CONFIG_DEFAULTS[topic][1]


def _default(name: str) -> str:
    return BROKER_APPLIED[name][0] if name in BROKER_APPLIED else TOPIC_CONFIG_DEFAULTS[APPLIED[name]][0]


def validate_broker_configs(configs: Mapping[str, str], per_broker: bool) -> None:
    """Kafka's DynamicBrokerConfig.validateConfigs, in its order, then trafka's own limit: the configs
    it cannot apply without a restart. Every refusal is INVALID_REQUEST (KAFKA-13609)."""

    def refuse(names: Iterable[str], message: str) -> None:
        names = set(names)
        if names:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"{message}: {_scala_set(names)}")

    # A config Kafka cannot update dynamically. An unknown name is a custom config to Kafka, kept for its
    # plugins; trafka has none to read it, so it is refused as a config that cannot be updated dynamically.
    refuse(
        (n for n in configs if n not in KAFKA_DYNAMIC and _listener_base(n) is None),
        "Cannot update these configs dynamically",
    )
    refuse(
        (n for n in configs if n in _SECURITY),
        "These security configs can be dynamically updated only per-listener using the listener prefix",
    )
    for name, value in configs.items():
        if name in INERT_INT and not (value.isdigit() and int(value) >= 1):
            raise KafkaError(
                ErrorCode.INVALID_REQUEST, f"Invalid value {value} for configuration {name}: Value must be at least 1"
            )
        if name in APPLIED and not valid_config_value(APPLIED[name], value):
            raise KafkaError(
                ErrorCode.INVALID_REQUEST,
                f"Invalid value {value} for configuration {name}: not a valid {_config_type(name).name} value",
            )
    if not per_broker:
        refuse(
            (
                n
                for n in configs
                if n in PER_BROKER or ((base := _listener_base(n)) is not None and base not in _CLUSTER_LEVEL_LISTENER)
            ),
            "Cannot update these configs at default cluster level, broker id must be specified",
        )
    refuse(
        (n for n in configs if n not in APPLIED and n not in BROKER_APPLIED and n not in INERT),
        "trafka applies only the topic config defaults dynamically "
        f"({', '.join(sorted(APPLIED))}); set these in its configuration and restart",
    )


def _cordoned_entries(value: str) -> list[str]:
    return [entry.strip() for entry in value.split(",") if entry.strip()]


MIN_ISR = "min.insync.replicas"


class BrokerConfigs:
    """The dynamic broker configs of this broker and the cluster default: altered, recorded, applied.

    While eligible leader replicas are on (`elr_enabled`, set by the wiring), `min.insync.replicas` is
    the cluster's (KIP-966): as Kafka's controller, this broker's own may not be altered and the cluster
    default may not be removed; turning them on sets the cluster default (`elr_safety`)."""

    def __init__(
        self, store: CatalogStore, logs: LogStore, policy: BrokerPolicy, topics: Callable[[], Iterable[Topic]]
    ) -> None:
        self._store = store
        self._logs = logs
        self._policy = policy
        self._topics = topics
        stored = store.broker_configs()
        policy.dynamic.per_broker = dict(stored.get(str(policy.node_id), {}))
        policy.dynamic.cluster_default = dict(stored.get("", {}))
        policy.dynamic.version += 1
        logs.set_topic_defaults(policy.effective_topic_defaults())
        self.elr_enabled: Callable[[], bool] = lambda: False

    def elr_safety(self) -> None:
        """What Kafka writes when eligible leader replicas are turned on (ConfigurationControlManager's
        maybeGenerateElrSafetyRecords; at a new log dir, ActivationRecordsGenerator): the cluster-level
        `min.insync.replicas` set to the static one (1 unless configured) if unset, and this broker's own
        removed."""
        cluster = self._policy.dynamic.cluster_default
        if MIN_ISR not in cluster:
            static = self._policy.topic_defaults.get(MIN_ISR, "1")
            self._apply("", False, {**cluster, MIN_ISR: static}, False, elr_checked=False)
        own = self._policy.dynamic.per_broker
        if MIN_ISR in own:
            rest = {k: v for k, v in own.items() if k != MIN_ISR}
            self._apply(str(self._policy.node_id), True, rest, False, elr_checked=False)

    def _per_broker(self, resource_name: str) -> bool:
        """True for this broker's resource, False for the cluster default; Kafka's refusals otherwise."""
        if resource_name == "":
            return False
        try:
            node_id = int(resource_name)
        except ValueError:
            raise KafkaError(
                ErrorCode.INVALID_REQUEST, f"Node id must be an integer, but it is: {resource_name}"
            ) from None
        if node_id != self._policy.node_id:
            raise KafkaError(
                ErrorCode.INVALID_REQUEST,
                f"Unexpected broker id, expected {self._policy.node_id}, but received {resource_name}",
            )
        return True

    def current(self, resource_name: str) -> dict[str, str]:
        per_broker = self._per_broker(resource_name)
        return dict(self._policy.dynamic.per_broker if per_broker else self._policy.dynamic.cluster_default)

    def alter(
        self, resource_name: str, changes: Mapping[str, tuple[int, str | None]], validate_only: bool = False
    ) -> None:
        """IncrementalAlterConfigs: SET (0), DELETE (1), APPEND (2), SUBTRACT (3), as Kafka's
        prepareIncrementalConfigs applies them to the resource's dynamic configs."""
        per_broker = self._per_broker(resource_name)
        configs = self.current(resource_name)
        for name, (op, value) in changes.items():
            if op == 1:
                configs.pop(name, None)
                continue
            if value is None:
                raise KafkaError(ErrorCode.INVALID_REQUEST, f"Null value not supported for : {name}")
            if op == 0:
                configs[name] = value
                continue
            if name not in APPLIED and name not in KAFKA_DYNAMIC:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown config name: {name}")
            if _config_type(name) is not ConfigType.LIST:
                verb = "append" if op == 2 else "subtract"
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Config value {verb} is not allowed for config key: {name}")
            current = configs.get(name, _default(name))
            items = [i for i in current.split(",") if i]
            given = value.split(",")
            if op == 2:
                items += [i for i in given if i not in items]
            else:
                items = [i for i in items if i not in given]
            configs[name] = ",".join(items)
        self._apply(resource_name, per_broker, configs, validate_only)

    def replace(self, resource_name: str, configs: Mapping[str, str | None], validate_only: bool = False) -> None:
        """AlterConfigs (the legacy API): the given configs replace the resource's whole dynamic set."""
        per_broker = self._per_broker(resource_name)
        nulls = [name for name, value in configs.items() if value is None]
        if nulls:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Null value not supported for : " + ", ".join(nulls))
        self._apply(resource_name, per_broker, {k: v for k, v in configs.items() if v is not None}, validate_only)

    def _apply(
        self,
        resource_name: str,
        per_broker: bool,
        configs: Mapping[str, str],
        validate_only: bool,
        elr_checked: bool = True,
    ) -> None:
        validate_broker_configs(configs, per_broker)
        if elr_checked and self.elr_enabled():
            before = self.current(resource_name)
            if per_broker and configs.get(MIN_ISR) != before.get(MIN_ISR):
                raise KafkaError(
                    ErrorCode.INVALID_CONFIG, "Broker-level min.insync.replicas cannot be altered while ELR is enabled."
                )
            if not per_broker and MIN_ISR in before and MIN_ISR not in configs:
                raise KafkaError(
                    ErrorCode.INVALID_CONFIG,
                    "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.",
                )
        if CORDONED_LOG_DIRS in configs:
            self._check_cordoned(configs[CORDONED_LOG_DIRS])
        if validate_only:
            return
        before = self.current(resource_name)
        changes: dict[str, str | None] = {k: v for k, v in configs.items() if before.get(k) != v}
        changes.update({k: None for k in before if k not in configs})
        if not changes:
            return
        self._store.broker_configs_changed(resource_name, changes)
        self._policy.dynamic.replace(per_broker, configs)
        self._logs.set_topic_defaults(self._policy.effective_topic_defaults())
        for topic in self._topics():
            for tp in topic.topic_partitions():
                self._logs.reconfigure(tp, topic)

    def _check_cordoned(self, value: str) -> None:
        """Kafka 4.3's rules for a dynamic `cordoned.log.dirs` (KIP-1066): the controller refuses it
        below metadata.version 4.3-IV0 (ConfigurationControlManager's DISABLED_CORDONED_LOG_DIRS_ERROR),
        and every entry is `*` or one of the broker's log dirs (DynamicLogConfig.validateReconfiguration)."""
        entries = _cordoned_entries(value)
        level = self._store.feature_levels().get("metadata.version", _METADATA_VERSION_BEFORE_CORDONING)
        if entries and level < CORDONING_METADATA_VERSION:
            raise KafkaError(
                ErrorCode.INVALID_CONFIG,
                "The cordoned.log.dirs configuration value cannot be set because it requires "
                "metadata.version >= 4.3-IV0",
            )
        for entry in entries:
            if entry != CORDON_ALL and entry not in self._policy.log_dir_names:
                raise KafkaError(
                    ErrorCode.INVALID_REQUEST,
                    f"Invalid entry in cordoned.log.dirs: {entry}. All cordoned log dirs must be entries of "
                    "log.dirs or log.dir.",
                )
