"""DescribeLogDirs (key 35): v1-5. The broker's one log dir with the size of every partition asked
for (all of them when `topics` is null), offset lag 0 and no future replicas; v4 adds the volume's
total and usable bytes, v5 (Kafka 4.3, KIP-1066) whether the log dir is cordoned (`cordoned.log.dirs`:
it then takes no new partitions). Partitions the broker does not host are left out, as Kafka's
ReplicaManager.describeLogDirs does; a log dir an I/O error took offline answers KAFKA_STORAGE_ERROR.

Authorization: DESCRIBE on the cluster; refused, Kafka answers no log dirs, with
CLUSTER_AUTHORIZATION_FAILED as the top-level error from v3.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import DescribeLogDirsRequest, DescribeLogDirsResponse

from ..api import KafkaApi
from ..request_context import ClientInfo
from ..security.authorization import Check, Checks, the_cluster

if TYPE_CHECKING:
    from trafka.domain.configs import BrokerPolicy
    from trafka.domain.replica_manager import ReplicaManager


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    replicas: ReplicaManager
    policy: BrokerPolicy


Result = DescribeLogDirsResponse.DescribeLogDirsResult
Topic = Result.DescribeLogDirsTopic
Partition = Topic.DescribeLogDirsPartition


def handle_describe_log_dirs(
    ctx: Uses, request: DescribeLogDirsRequest, version: int, client: ClientInfo
) -> DescribeLogDirsResponse:
    log_dir = ctx.replicas.log_dir()
    if log_dir.offline:  # Kafka's ReplicaManager.describeLogDirs: the dir's error, nothing else
        failed = Result(error_code=ErrorCode.KAFKA_STORAGE_ERROR, log_dir=log_dir.path, topics=[])
        return DescribeLogDirsResponse(version=version, throttle_time_ms=0, error_code=ErrorCode.NONE, results=[failed])
    wanted = (
        None
        if request.topics is None
        else [TopicPartition(topic.topic, partition) for topic in request.topics for partition in topic.partitions]
    )
    by_topic: dict[str, list[Any]] = {}
    for tp, size in ctx.replicas.partition_sizes(wanted).items():
        by_topic.setdefault(tp.topic, []).append(
            Partition(partition_index=tp.partition, partition_size=size, offset_lag=0, is_future_key=False)
        )
    result = Result(
        error_code=ErrorCode.NONE,
        log_dir=log_dir.path,
        topics=[Topic(name=name, partitions=partitions) for name, partitions in by_topic.items()],
        total_bytes=log_dir.total_bytes,
        usable_bytes=log_dir.usable_bytes,
        is_cordoned=ctx.policy.is_log_dir_cordoned(),
    )
    return DescribeLogDirsResponse(version=version, throttle_time_ms=0, error_code=ErrorCode.NONE, results=[result])


def _refusal(api: KafkaApi, request: DescribeLogDirsRequest, version: int, error: int) -> DescribeLogDirsResponse:
    """As KafkaApis refuses: no log dirs, and the error at the top where the version has the field."""
    return DescribeLogDirsResponse(version=version, throttle_time_ms=0, error_code=error, results=[])


API = KafkaApi(
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    (1, 5),
    handle_describe_log_dirs,
    authorization=Checks((Check(Res.CLUSTER, Op.DESCRIBE, the_cluster),)),
    refusal=_refusal,
    read_only=True,
)
