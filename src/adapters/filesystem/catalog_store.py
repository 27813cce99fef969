"""The topic catalog as a KRaft metadata log (`__cluster_metadata-0`), Kafka's own record format.

Creating a topic writes a TopicRecord, one PartitionRecord per partition and a ConfigRecord per
override; deleting writes a RemoveTopicRecord; adding partitions writes PartitionRecords. On startup
the catalog is rebuilt by replaying the log, including one Kafka wrote. Dynamic broker configs are
ConfigRecords of the BROKER resource (resource name "" for the cluster default, else the node id), a
removal one with a null value, as Kafka's controller writes them.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from trafka.domain.configs import ConfigResourceType
from trafka.domain.features import LATEST_METADATA_VERSION, METADATA_VERSION
from trafka.domain.topics import Topic

from .internal_log import InternalLog
from .metadata_records import (
    ConfigRecord,
    FeatureLevelRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RemoveTopicRecord,
    TopicRecord,
    decode_metadata_record,
    encode_metadata_record,
)

METADATA_VERSION_LEVEL = LATEST_METADATA_VERSION  # what Kafka 4.2 bootstraps with (4.2-IV1)

# The internal topics trafka keeps in one partition each, outside the topic catalog; the metadata log
# records them as Kafka's controller does, or Kafka, opening the log dir, calls their partitions stray
# and sets them aside (ADR 64).
INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state", "__share_group_state")


class FileCatalogStore:
    def __init__(self, metadata_log: InternalLog, node_id: int, directory_id: uuid.UUID) -> None:
        self._log = metadata_log
        self._node_id = node_id
        self._directory_id = directory_id
        self._next_producer_id = 0
        self._broker_configs: dict[str, dict[str, str]] | None = None  # by resource name, once replayed
        self._feature_levels: dict[str, int] | None = None  # FeatureLevelRecords replayed, once replayed
        self.removed_topic_ids: set[uuid.UUID] = set()
        if metadata_log.log.log_end_offset == 0:
            feature = FeatureLevelRecord(version=0, name=METADATA_VERSION, feature_level=METADATA_VERSION_LEVEL)
            self._log.append([(None, encode_metadata_record(feature, 0))])

    def load(self) -> list[Topic]:
        names: dict[uuid.UUID, str] = {}
        partitions: dict[uuid.UUID, set[int]] = {}
        configs: dict[str, dict[str, str]] = {}
        broker: dict[str, dict[str, str]] = {}
        features: dict[str, int] = {}
        for _, _, value in self._log.records():
            if value is None:
                continue
            record = decode_metadata_record(value)
            if isinstance(record, TopicRecord) and record.name in INTERNAL_TOPICS:
                continue
            if isinstance(record, TopicRecord):
                names[record.topic_id] = record.name
                partitions[record.topic_id] = set()
                configs[record.name] = {}
            elif isinstance(record, PartitionRecord) and record.topic_id in partitions:
                partitions[record.topic_id].add(record.partition_id)
            elif isinstance(record, RemoveTopicRecord):
                self.removed_topic_ids.add(record.topic_id)
                if record.topic_id in names:
                    configs.pop(names.pop(record.topic_id), None)
                    partitions.pop(record.topic_id, None)
            elif isinstance(record, FeatureLevelRecord):
                features[record.name] = record.feature_level  # 0 too: not finalized, whatever the default
            elif isinstance(record, ProducerIdsRecord):
                self._next_producer_id = max(self._next_producer_id, record.next_producer_id)
            elif isinstance(record, ConfigRecord) and record.resource_type in (
                ConfigResourceType.TOPIC,
                ConfigResourceType.BROKER,
            ):
                by_name = configs if record.resource_type == ConfigResourceType.TOPIC else broker
                resource_configs = by_name.setdefault(record.resource_name, {})
                if record.value is None:
                    resource_configs.pop(record.name, None)
                else:
                    resource_configs[record.name] = record.value
        self._broker_configs = broker
        self._feature_levels = features
        return [
            Topic(name, topic_id, len(partitions[topic_id]), configs.get(name, {})) for topic_id, name in names.items()
        ]

    def internal_topic_ids(self) -> dict[str, uuid.UUID]:
        """The internal topics the metadata log records, by name (Kafka's or trafka's TopicRecords)."""
        ids: dict[str, uuid.UUID] = {}
        for _, _, value in self._log.records():
            record = decode_metadata_record(value) if value is not None else None
            if isinstance(record, TopicRecord) and record.name in INTERNAL_TOPICS:
                ids[record.name] = record.topic_id
            elif isinstance(record, RemoveTopicRecord):
                ids = {name: topic_id for name, topic_id in ids.items() if topic_id != record.topic_id}
        return ids

    def register_internal(self, topic: Topic) -> None:
        """Record an internal topic partition trafka keeps (one partition) unless the log has it."""
        if topic.name not in self.internal_topic_ids():
            self.topic_created(topic)

    def _partition_record(self, topic: Topic, partition: int) -> bytes:
        record = PartitionRecord(
            version=1,
            partition_id=partition,
            topic_id=topic.topic_id,
            replicas=[self._node_id],
            isr=[self._node_id],
            removing_replicas=[],
            adding_replicas=[],
            leader=self._node_id,
            leader_epoch=0,
            partition_epoch=0,
            directories=[self._directory_id],
        )
        return encode_metadata_record(record, 1)

    def topic_created(self, topic: Topic) -> None:
        values = [encode_metadata_record(TopicRecord(version=0, name=topic.name, topic_id=topic.topic_id), 0)]
        values += [self._partition_record(topic, p) for p in topic.partitions]
        values += [
            encode_metadata_record(
                ConfigRecord(
                    version=0, resource_type=ConfigResourceType.TOPIC, resource_name=topic.name, name=k, value=v
                ),
                0,
            )
            for k, v in sorted(topic.configs.items())
        ]
        self._log.append([(None, v) for v in values])

    def partitions_added(self, topic: Topic, first_new_partition: int) -> None:
        self._log.append(
            [(None, self._partition_record(topic, p)) for p in range(first_new_partition, topic.partition_count)]
        )

    def configs_changed(self, topic: Topic, changes: Mapping[str, str | None]) -> None:
        self._log.append(
            [
                (
                    None,
                    encode_metadata_record(
                        ConfigRecord(
                            version=0, resource_type=ConfigResourceType.TOPIC, resource_name=topic.name, name=k, value=v
                        ),
                        0,
                    ),
                )
                for k, v in sorted(changes.items())
            ]
        )

    def broker_configs(self) -> dict[str, dict[str, str]]:
        if self._broker_configs is None:  # replayed with the topics
            self.load()
        assert self._broker_configs is not None
        return {name: dict(configs) for name, configs in self._broker_configs.items() if configs}

    def broker_configs_changed(self, resource_name: str, changes: Mapping[str, str | None]) -> None:
        self._log.append(
            [
                (
                    None,
                    encode_metadata_record(
                        ConfigRecord(
                            version=0,
                            resource_type=ConfigResourceType.BROKER,
                            resource_name=resource_name,
                            name=k,
                            value=v,
                        ),
                        0,
                    ),
                )
                for k, v in sorted(changes.items())
            ]
        )
        if self._broker_configs is not None:
            configs = self._broker_configs.setdefault(resource_name, {})
            for name, value in changes.items():
                if value is None:
                    configs.pop(name, None)
                else:
                    configs[name] = value

    def feature_levels(self) -> dict[str, int]:
        if self._feature_levels is None:  # replayed with the topics
            self.load()
        assert self._feature_levels is not None
        return dict(self._feature_levels)

    def feature_levels_changed(self, levels: Mapping[str, int]) -> None:
        self._log.append(
            [
                (None, encode_metadata_record(FeatureLevelRecord(version=0, name=name, feature_level=level), 0))
                for name, level in sorted(levels.items())
            ]
        )
        if self._feature_levels is not None:
            self._feature_levels.update(levels)

    def next_producer_id(self) -> int:
        return self._next_producer_id

    def producer_ids_reserved(self, next_producer_id: int) -> None:
        record = ProducerIdsRecord(
            version=0, broker_id=self._node_id, broker_epoch=0, next_producer_id=next_producer_id
        )
        self._log.append([(None, encode_metadata_record(record, 0))])
        self._next_producer_id = next_producer_id

    def topic_deleted(self, topic: Topic) -> None:
        self._log.append([(None, encode_metadata_record(RemoveTopicRecord(version=0, topic_id=topic.topic_id), 0))])
