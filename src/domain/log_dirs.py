"""The broker's log dir as DescribeLogDirs and AlterReplicaLogDirs see it (Kafka's ReplicaManager
.describeLogDirs): one log dir holding every partition, its volume's size and free space as the store
measures them, and each partition's size in bytes (the sum of its segments').
"""

from __future__ import annotations

import uuid

import attrs

from .topics import ZERO_UUID, TopicPartition

UNKNOWN_VOLUME_BYTES = -1
"""Kafka's DescribeLogDirsResponse.UNKNOWN_VOLUME_BYTES: the volume's size or free space is not known."""

METADATA_PARTITION = TopicPartition("__cluster_metadata", 0)
"""The KRaft metadata log: kept by the filesystem store beside the partitions, but not one of them."""


@attrs.frozen
class LogDirUsage:
    """The log dir: its absolute path (or a name, for a store without one), its directory id, its
    volume's total and usable bytes (UNKNOWN_VOLUME_BYTES where the store cannot tell), and whether an
    I/O error took it offline (Kafka then answers KAFKA_STORAGE_ERROR for it)."""

    path: str
    directory_id: uuid.UUID = ZERO_UUID
    total_bytes: int = UNKNOWN_VOLUME_BYTES
    usable_bytes: int = UNKNOWN_VOLUME_BYTES
    offline: bool = False
