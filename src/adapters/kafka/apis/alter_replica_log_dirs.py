"""AlterReplicaLogDirs (key 34): v1-2. A one-log-dir broker: moving a replica to the log dir it is
already in succeeds, any other path is LOG_DIR_NOT_FOUND (checked first, as Kafka's
LogManager.isLogDirOnline), a partition the broker does not host UNKNOWN_TOPIC_OR_PARTITION.

Authorization: ALTER on the cluster; refused, every partition answers CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition

from ..api import KafkaApi
from ..context import BrokerContext, ClientInfo
from ..security.authorization import Check, Checks, the_cluster

TopicResult = AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult
PartitionResult = TopicResult.AlterReplicaLogDirPartitionResult


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
    ctx: BrokerContext, request: AlterReplicaLogDirsRequest, version: int, client: ClientInfo
) -> AlterReplicaLogDirsResponse:
    log_dir = ctx.replicas.log_dir().path
    errors: dict[TopicPartition, int] = {}
    for moved in request.dirs:
        for topic in moved.topics:
            for partition in topic.partitions:
                tp = TopicPartition(topic.name, partition)
                if moved.path != log_dir:
                    errors[tp] = ErrorCode.LOG_DIR_NOT_FOUND
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
