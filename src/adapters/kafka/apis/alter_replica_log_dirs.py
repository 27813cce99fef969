"""AlterReplicaLogDirs (key 34): v1-2. A one-log-dir broker: moving a replica to the log dir it is
already in succeeds, any other path is LOG_DIR_NOT_FOUND and an offline log dir KAFKA_STORAGE_ERROR
(checked first, as Kafka's LogManager.isLogDirOnline), a partition the broker does not host
UNKNOWN_TOPIC_OR_PARTITION; a topic name too long for a future log's dir name INVALID_TOPIC_EXCEPTION
(Kafka's ReplicaManager.alterReplicaLogDirs, in its order).

Authorization: ALTER on the cluster; refused, every partition answers CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse

from ..api import KafkaApi
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, the_cluster

if TYPE_CHECKING:
    from trafka.domain.catalog import TopicCatalog
    from trafka.domain.replica_manager import ReplicaManager


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    replicas: ReplicaManager


TopicResult = AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult
PartitionResult = TopicResult.AlterReplicaLogDirPartitionResult


MAX_DIR_NAME_LENGTH = 255


def _future_dir_name(tp: TopicPartition) -> str:
    """The name Kafka would give the replica's future log dir (UnifiedLog.logFutureDirName): a topic
    name so long that it would not fit a file name cannot be moved (KAFKA-4893)."""
    return f"{tp.topic}-{tp.partition}.{'0' * 32}-future"


def _answer(version: int, errors: dict[TopicPartition, int]) -> AlterReplicaLogDirsResponse:
    by_topic: dict[str, list[Any]] = {}
    for tp, error in errors.items():
        by_topic.setdefault(tp.topic, []).append(PartitionResult(partition_index=tp.partition, error_code=error))
    return AlterReplicaLogDirsResponse(
        version=version,
        throttle_time_ms=0,
        results=[TopicResult(topic_name=name, partitions=partitions) for name, partitions in by_topic.items()],
    )


def handle_alter_replica_log_dirs(
    ctx: Uses, request: AlterReplicaLogDirsRequest, version: int, client: ClientInfo
) -> AlterReplicaLogDirsResponse:
    log_dir = ctx.replicas.log_dir()
    errors: dict[TopicPartition, int] = {}
    for moved in request.dirs:
        for topic in moved.topics:
            for partition in topic.partitions:
                tp = TopicPartition(topic.name, partition)
                if len(_future_dir_name(tp)) > MAX_DIR_NAME_LENGTH:
                    errors[tp] = ErrorCode.INVALID_TOPIC_EXCEPTION
                elif moved.path != log_dir.path:
                    errors[tp] = ErrorCode.LOG_DIR_NOT_FOUND
                elif log_dir.offline:
                    errors[tp] = ErrorCode.KAFKA_STORAGE_ERROR
                elif not ctx.catalog.has_partition(tp):
                    errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    errors[tp] = ErrorCode.NONE  # already there: nothing to move
    return _answer(version, errors)


def _refusal(
    api: KafkaApi, request: AlterReplicaLogDirsRequest, version: int, error: int
) -> AlterReplicaLogDirsResponse:
    """Every partition of the request answered with `error` (KafkaApis, when ALTER is refused)."""
    return _answer(
        version,
        {
            TopicPartition(topic.name, partition): error
            for moved in request.dirs
            for topic in moved.topics
            for partition in topic.partitions
        },
    )


API = KafkaApi(
    AlterReplicaLogDirsRequest,
    AlterReplicaLogDirsResponse,
    (1, 2),
    handle_alter_replica_log_dirs,
    authorization=Checks((Check(Res.CLUSTER, Op.ALTER, the_cluster),)),
    refusal=_refusal,
    read_only=False,
)
