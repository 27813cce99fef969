"""trafka's domain core: topics, partitions, offsets and the rules Kafka applies to them.

Pure and I/O-free: it imports the standard library and attrs only. Bytes, requests and the current
time come in as arguments; storage is reached through the ports in `trafka.domain.ports`.
"""

from .batch import (
    BatchHeader,
    Compression,
    ValidatedBatches,
    assign_offsets,
    iter_batches,
    validate_batches,
)
from .batch_header import TimestampType
from .catalog import TopicCatalog
from .configs import BrokerPolicy, ConfigEntry, ConfigSource, ConfigType
from .errors import ErrorCode, KafkaError
from .fetch_read import FetchResult
from .offset_lookup import OffsetResult
from .ports import CatalogStore, LogStore, PartitionLog
from .produce_admission import ProduceResult
from .replica_manager import ReplicaManager
from .topics import Topic, TopicPartition, validate_topic_name

__all__ = [
    "BatchHeader",
    "BrokerPolicy",
    "CatalogStore",
    "Compression",
    "ConfigEntry",
    "ConfigSource",
    "ConfigType",
    "ErrorCode",
    "FetchResult",
    "KafkaError",
    "LogStore",
    "OffsetResult",
    "PartitionLog",
    "ProduceResult",
    "ReplicaManager",
    "TimestampType",
    "Topic",
    "TopicCatalog",
    "TopicPartition",
    "ValidatedBatches",
    "assign_offsets",
    "iter_batches",
    "validate_batches",
    "validate_topic_name",
]
