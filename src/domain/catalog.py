"""The topic catalog: creating, auto-creating, growing and deleting topics.

The catalog holds the topics in memory and records every change through the `CatalogStore` port
before it takes effect, then creates or deletes the partition logs through the `LogStore` port. New
topic ids come from a function the composition root passes in (the domain does not read entropy).
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable, Mapping

import attrs

from .broker_configs import BrokerConfigs
from .configs import TOPIC_CONFIG_DEFAULTS, BrokerPolicy, ConfigType
from .errors import ErrorCode, KafkaError
from .leader_epochs import lead
from .ports import CatalogStore, LogStore
from .schema_validation import SchemaValidation
from .topic_config_checks import is_topic_config, validate_topic_configs
from .topics import Topic, TopicPartition, is_internal_topic, validate_topic_name

MAX_PARTITIONS = 100_000
# Kafka's QuorumController.MAX_RECORDS_PER_USER_OP: the metadata records one CreateTopics or CreatePartitions
# may write (a TopicRecord per topic, a PartitionRecord per partition, a ConfigRecord per config); beyond it
# the whole request fails with POLICY_VIOLATION and this message (EventHandlerExceptionInfo).
MAX_RECORDS_PER_USER_OP = 10_000
EXCESSIVELY_LARGE_BATCH = "Unable to perform excessively large batch operation."


class AlterOp(enum.IntEnum):
    """IncrementalAlterConfigs' operation types."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


class TopicCatalog:
    def __init__(
        self,
        store: CatalogStore,
        logs: LogStore,
        policy: BrokerPolicy,
        new_topic_id: Callable[[], uuid.UUID],
    ) -> None:
        self._store = store
        self._logs = logs
        self._policy = policy
        self._new_topic_id = new_topic_id
        self._by_name: dict[str, Topic] = {}
        self._by_id: dict[uuid.UUID, Topic] = {}
        self.changes = 0  # counts every topic created, grown, altered or deleted (consumer groups' regexes)
        loaded = list(store.load())
        # Before any log opens, so the logs start with the dynamic topic defaults.
        self.broker_configs = BrokerConfigs(store, logs, policy, self.topics)
        for topic in loaded:
            self._remember(topic)
            for tp in topic.topic_partitions():
                lead(logs.open(tp, topic))

    def _remember(self, topic: Topic) -> None:
        self.changes += 1
        self._by_name[topic.name] = topic
        self._by_id[topic.topic_id] = topic

    def topics(self) -> list[Topic]:
        return sorted(self._by_name.values(), key=lambda t: t.name)

    def get(self, name: str) -> Topic | None:
        return self._by_name.get(name)

    def by_id(self, topic_id: uuid.UUID) -> Topic | None:
        return self._by_id.get(topic_id)

    def has_partition(self, tp: TopicPartition) -> bool:
        topic = self._by_name.get(tp.topic)
        return topic is not None and 0 <= tp.partition < topic.partition_count

    def create(
        self,
        name: str,
        num_partitions: int = -1,
        replication_factor: int = -1,
        configs: Mapping[str, str | None] | None = None,
        validate_only: bool = False,
    ) -> Topic:
        """Create a topic as CreateTopics does; -1 means the broker default for either count."""
        validate_topic_name(name)
        if is_internal_topic(name):
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Creation of internal topic {name} is prohibited.")
        if name in self._by_name:
            raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        collides = name.replace(".", "_")
        for existing in self._by_name:
            if existing.replace(".", "_") == collides:
                raise KafkaError(
                    ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic '{name}' collides with existing topic: {existing}"
                )
        if num_partitions == -1:
            num_partitions = self._policy.num_partitions
        if num_partitions <= 0:
            raise KafkaError(
                ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value."
            )
        if num_partitions > MAX_PARTITIONS:
            raise KafkaError(
                ErrorCode.INVALID_PARTITIONS, f"Number of partitions {num_partitions} is above {MAX_PARTITIONS}."
            )
        if replication_factor == -1:
            replication_factor = self._policy.default_replication_factor
        if replication_factor <= 0:
            raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0.")
        if replication_factor > 1:
            raise KafkaError(
                ErrorCode.INVALID_REPLICATION_FACTOR,
                f"Unable to replicate the partition {replication_factor} time(s): "
                "The target replication factor of "
                f"{replication_factor} cannot be reached because only 1 broker(s) are registered.",
            )
        self._refuse_if_cordoned()
        overrides = validate_topic_configs(configs or {})
        self._refuse_unavailable_schema_validation(name, overrides)
        topic = Topic(name, self._new_topic_id(), num_partitions, overrides)
        if validate_only:
            return topic
        self._create_logs(topic, range(topic.partition_count))
        try:
            self._store.topic_created(topic)
        except BaseException:
            self._delete_logs(topic, range(topic.partition_count))
            raise
        self._remember(topic)
        return topic

    def _refuse_unavailable_schema_validation(self, name: str, configs: Mapping[str, str]) -> None:
        """Configs that turn broker-side schema validation on, on a broker without its Schema Registry
        (trafka installed without the registry extra): refused now, with what to install, rather than
        every later produce refused."""
        if not self._policy.schema_validation_available and SchemaValidation.of(name, configs) is not None:
            raise KafkaError(
                ErrorCode.INVALID_CONFIG,
                "Broker-side schema validation needs the Schema Registry, which this broker was installed "
                "without: pip install 'trafka[registry]'",
            )

    def _refuse_if_cordoned(self) -> None:
        """A cordoned log dir takes no new partitions (Kafka 4.3, KIP-1066): with this broker's one log
        dir cordoned (statically or by a dynamic `cordoned.log.dirs`), no broker can host a replica, and
        Kafka 4.4's StripedReplicaPlacer answers so. Partitions that exist go on taking records."""
        if self._policy.is_log_dir_cordoned():
            raise KafkaError(
                ErrorCode.INVALID_REPLICATION_FACTOR,
                "All brokers are currently fenced, or have all their log directories cordoned.",
            )

    def _create_logs(self, topic: Topic, partitions: range) -> None:
        """Every new partition's log, or none: the topic (or its new partitions) is recorded only once
        they all exist, and a failure halfway (a full disk, no file descriptors left) deletes the ones
        made and answers KAFKA_STORAGE_ERROR, so no topic is recorded with partitions it lacks."""
        made = 0
        try:
            for partition in partitions:
                made += 1  # counted before: a log that failed halfway through its creation is removed too
                lead(self._logs.create(TopicPartition(topic.name, partition), topic))
        except Exception as exc:
            # Twice: a removal may fail for want of the descriptors that removing the others frees.
            made_range = range(partitions.start, partitions.start + made)
            self._delete_logs(topic, made_range)
            self._delete_logs(topic, made_range)
            raise KafkaError(
                ErrorCode.KAFKA_STORAGE_ERROR,
                f"Could not create the logs of {topic.name}'s partitions {partitions.start}-{partitions.stop - 1}: {exc}",
            ) from exc

    def _delete_logs(self, topic: Topic, partitions: range) -> None:
        for partition in partitions:
            try:
                self._logs.delete(TopicPartition(topic.name, partition))
            except Exception:  # the creation's error is the one to report
                continue

    def auto_create(self, name: str) -> Topic:
        """Create `name` with the broker defaults, as Metadata does when auto-creation is on."""
        if not self._policy.auto_create_topics_enable:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        return self.create(name)

    def create_partitions(self, name: str, count: int, validate_only: bool = False) -> Topic:
        topic = self._by_name.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)  # Kafka's CreatePartitions: no message
        if count < topic.partition_count:
            raise KafkaError(
                ErrorCode.INVALID_PARTITIONS,
                f"Topic currently has {topic.partition_count} partitions, which is higher than the requested {count}.",
            )
        if count == topic.partition_count:
            raise KafkaError(ErrorCode.INVALID_PARTITIONS, f"Topic already has {topic.partition_count} partitions.")
        if count > MAX_PARTITIONS:
            raise KafkaError(ErrorCode.INVALID_PARTITIONS, f"Too many partitions: {count}")
        self._refuse_if_cordoned()
        grown = topic.with_partition_count(count)
        if validate_only:
            return grown
        added = range(topic.partition_count, count)
        self._create_logs(grown, added)
        try:
            self._store.partitions_added(grown, topic.partition_count)
        except BaseException:
            self._delete_logs(grown, added)
            raise
        self._remember(grown)
        return grown

    def alter_configs(
        self, name: str, changes: Mapping[str, tuple[AlterOp, str | None]], validate_only: bool = False
    ) -> Topic:
        """IncrementalAlterConfigs on a topic: SET, DELETE, APPEND or SUBTRACT (list configs)."""
        topic = self._by_name.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
        configs = dict(topic.configs)
        recorded: dict[str, str | None] = {}
        for config, (op, value) in changes.items():
            if not is_topic_config(config):
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown topic config name: {config}")
            if op is AlterOp.DELETE:
                configs.pop(config, None)
                recorded[config] = None
                continue
            if value is None:
                raise KafkaError(ErrorCode.INVALID_REQUEST, f"Null value not supported for: {config}")
            if op in (AlterOp.APPEND, AlterOp.SUBTRACT):
                if config not in TOPIC_CONFIG_DEFAULTS or TOPIC_CONFIG_DEFAULTS[config][1] is not ConfigType.LIST:
                    raise KafkaError(
                        ErrorCode.INVALID_CONFIG, f"Config value append is not allowed for config key: {config}"
                    )
                items = [i for i in self._policy.topic_config(configs, config).split(",") if i]
                wanted = [i for i in value.split(",") if i]
                if op is AlterOp.APPEND:
                    items += [i for i in wanted if i not in items]
                else:
                    items = [i for i in items if i not in wanted]
                value = ",".join(items)
            configs[config] = value
            recorded[config] = value
        set_now = validate_topic_configs({k: v for k, v in recorded.items() if v is not None}, configs)
        self._refuse_unavailable_schema_validation(name, set_now)
        altered = attrs.evolve(topic, configs=configs)
        if validate_only:
            return altered
        self._store.configs_changed(altered, recorded)
        self._remember(altered)
        for tp in altered.topic_partitions():
            self._logs.reconfigure(tp, altered)
        return altered

    def replace_configs(self, name: str, configs: Mapping[str, str | None], validate_only: bool = False) -> Topic:
        """AlterConfigs (the legacy API): the given overrides replace every existing one."""
        topic = self._by_name.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
        changes: dict[str, tuple[AlterOp, str | None]] = dict.fromkeys(topic.configs, (AlterOp.DELETE, None))
        changes.update({k: (AlterOp.SET, v) if v is not None else (AlterOp.DELETE, None) for k, v in configs.items()})
        return self.alter_configs(name, changes, validate_only)

    def delete(self, name: str) -> Topic:
        topic = self._by_name.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)  # DeleteTopics answers the default message
        self._store.topic_deleted(topic)
        del self._by_name[name]
        del self._by_id[topic.topic_id]
        self.changes += 1
        for tp in topic.topic_partitions():
            self._logs.delete(tp)
        return topic

    def delete_by_id(self, topic_id: uuid.UUID) -> Topic:
        topic = self._by_id.get(topic_id)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_ID, f"Topic id {topic_id} does not exist.")
        return self.delete(topic.name)
