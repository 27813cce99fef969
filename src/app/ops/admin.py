"""The admin calls the operator commands make, each one Kafka request (or one per broker) through
`wire.Client` (ADR 101), answering in the shapes the commands print from.

Names follow Kafka's Admin API (`OffsetSpec`, `ConfigResource` types, `AlterConfigOp`); requests that
name topics by id from some version on (OffsetFetch and OffsetCommit v10, Fetch v13) are capped below
it, so every answer names its topics.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any, NamedTuple

from trafka.schema_codec.messages import compiled

from .wire import Client, raise_for

EARLIEST = -2  # ListOffsets' timestamps for Kafka's OffsetSpec.earliest() and latest()
LATEST = -1
TOPIC_RESOURCE = 2  # ConfigResource.Type
GROUP_RESOURCE = 32
SET, DELETE = 0, 1  # AlterConfigOp.OpType
_BY_NAME = 9  # OffsetFetch and OffsetCommit v10 name topics by id
_CONFIG_SOURCES = {
    1: "DYNAMIC_TOPIC_CONFIG",
    2: "DYNAMIC_BROKER_CONFIG",
    3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
    4: "STATIC_BROKER_CONFIG",
    5: "DEFAULT_CONFIG",
    6: "DYNAMIC_BROKER_LOGGER_CONFIG",
    7: "CLIENT_METRICS_CONFIG",
    8: "DYNAMIC_GROUP_CONFIG",
}


class TopicPartition(NamedTuple):
    topic: str
    partition: int


class Offset(NamedTuple):
    """A committed offset, or one ListOffsets found (with its record's timestamp)."""

    offset: int
    metadata: str | None = ""
    timestamp: int = -1


class Admin:
    """The admin calls over one `Client`."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def close(self) -> None:
        self.client.close()

    # -- topics ------------------------------------------------------------------------------------

    def describe_topics(self, topics: list[str] | None = None) -> list[dict[str, Any]]:
        answer = self.client.metadata(topics)
        return [
            {
                "name": t.name,
                "error_code": t.error_code,
                "topic_id": str(t.topic_id or uuid.UUID(int=0)),
                "is_internal": t.is_internal,
                "partitions": [
                    {
                        "partition_index": p.partition_index,
                        "leader_id": p.leader_id,
                        "replica_nodes": list(p.replica_nodes),
                        "isr_nodes": list(p.isr_nodes),
                    }
                    for p in t.partitions
                ],
            }
            for t in answer.topics
        ]

    def list_topics(self) -> list[str]:
        return [t["name"] for t in self.describe_topics()]

    def leaders(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """Each partition's leader; an unknown topic or partition is UNKNOWN_TOPIC_OR_PARTITION."""
        wanted = sorted(set(tps))
        found: dict[TopicPartition, int] = {}
        for topic in self.client.metadata(sorted({tp.topic for tp in wanted})).topics:
            raise_for(topic.error_code, f"topic {topic.name}")
            for p in topic.partitions:
                found[TopicPartition(topic.name, p.partition_index)] = p.leader_id
        for tp in wanted:
            if tp not in found:
                raise_for(3, f"topic {tp.topic} has no partition {tp.partition}")
        return {tp: found[tp] for tp in wanted}

    def list_partition_offsets(self, specs: dict[TopicPartition, int]) -> dict[TopicPartition, Offset]:
        """ListOffsets to each partition's leader: EARLIEST, LATEST or a timestamp (the first offset at
        or after it; -1 when none is)."""
        ListOffsets = compiled("ListOffsetsRequest")
        Topic = ListOffsets.ListOffsetsTopic
        Partition = Topic.ListOffsetsPartition
        by_leader: dict[int, dict[str, list[Any]]] = {}
        for tp, leader in self.leaders(specs).items():
            partition = Partition(partition_index=tp.partition, timestamp=specs[tp], current_leader_epoch=-1)
            by_leader.setdefault(leader, {}).setdefault(tp.topic, []).append(partition)
        out: dict[TopicPartition, Offset] = {}
        for leader, topics in by_leader.items():
            answer = self.client.send(
                "ListOffsets",
                to=leader,
                replica_id=-1,
                isolation_level=0,
                topics=[Topic(name=t, partitions=ps) for t, ps in topics.items()],
                timeout_ms=int(self.client.timeout * 1000),
            )
            for topic in answer.topics:
                for p in topic.partitions:
                    raise_for(p.error_code, f"{topic.name}-{p.partition_index}")
                    out[TopicPartition(topic.name, p.partition_index)] = Offset(p.offset, None, p.timestamp)
        return out

    def create_topic(self, name: str, partitions: int, replication_factor: int, configs: dict[str, str]) -> None:
        Topic = compiled("CreateTopicsRequest").CreatableTopic
        answer = self.client.send(
            "CreateTopics",
            topics=[
                Topic(
                    name=name,
                    num_partitions=partitions,
                    replication_factor=replication_factor,
                    assignments=[],
                    configs=[Topic.CreatableTopicConfig(name=k, value=v) for k, v in configs.items()],
                )
            ],
            timeout_ms=int(self.client.timeout * 1000),
            validate_only=False,
        )
        for topic in answer.topics:
            raise_for(topic.error_code, topic.error_message)

    def delete_topics(self, names: list[str]) -> None:
        State = compiled("DeleteTopicsRequest").DeleteTopicState
        answer = self.client.send(
            "DeleteTopics",
            topics=[State(name=n, topic_id=None) for n in names],
            topic_names=names,
            timeout_ms=int(self.client.timeout * 1000),
        )
        for result in answer.responses:
            raise_for(result.error_code, getattr(result, "error_message", None))

    def create_partitions(self, topic: str, count: int) -> None:
        Topic = compiled("CreatePartitionsRequest").CreatePartitionsTopic
        answer = self.client.send(
            "CreatePartitions",
            topics=[Topic(name=topic, count=count, assignments=None)],
            timeout_ms=int(self.client.timeout * 1000),
            validate_only=False,
        )
        for result in answer.results:
            raise_for(result.error_code, result.error_message)

    # -- configs -----------------------------------------------------------------------------------

    def describe_configs(self, resource_type: int, names: list[str]) -> dict[str, dict[str, dict[str, Any]]]:
        """{resource name: {config: {"value", "config_source"}}} for every config of each resource."""
        Resource = compiled("DescribeConfigsRequest").DescribeConfigsResource
        answer = self.client.send(
            "DescribeConfigs",
            resources=[Resource(resource_type=resource_type, resource_name=n, configuration_keys=None) for n in names],
            include_synonyms=False,
            include_documentation=False,
        )
        out = {}
        for result in answer.results:
            raise_for(result.error_code, result.error_message or f"{result.resource_name}")
            out[result.resource_name] = {
                c.name: {"value": c.value, "config_source": _CONFIG_SOURCES.get(c.config_source, str(c.config_source))}
                for c in result.configs
            }
        return out

    def alter_configs(self, resource_type: int, name: str, changes: dict[str, tuple[int, str | None]]) -> None:
        """IncrementalAlterConfigs of one resource: {config: (SET or DELETE, value)}."""
        Resource = compiled("IncrementalAlterConfigsRequest").AlterConfigsResource
        Config = Resource.AlterableConfig
        answer = self.client.send(
            "IncrementalAlterConfigs",
            resources=[
                Resource(
                    resource_type=resource_type,
                    resource_name=name,
                    configs=[Config(name=k, config_operation=op, value=v) for k, (op, v) in changes.items()],
                )
            ],
            validate_only=False,
        )
        for result in answer.responses:
            raise_for(result.error_code, f"{result.resource_name}: {result.error_message or ''}".rstrip(": "))

    # -- the cluster -------------------------------------------------------------------------------

    def describe_cluster(self) -> dict[str, Any]:
        answer = self.client.send("DescribeCluster", include_cluster_authorized_operations=False, endpoint_type=1)
        raise_for(answer.error_code, answer.error_message)
        return {
            "cluster_id": answer.cluster_id,
            "controller_id": answer.controller_id,
            "brokers": [
                {"broker_id": b.broker_id, "host": b.host, "port": b.port, "rack": b.rack} for b in answer.brokers
            ],
        }

    # -- groups ------------------------------------------------------------------------------------

    def list_groups(self) -> list[dict[str, Any]]:
        """Every group of every broker (ListGroups is answered per broker, as Kafka's Admin asks each)."""
        self.client.metadata([])
        groups: dict[str, dict[str, Any]] = {}
        for node in sorted(self.client.brokers):
            answer = self.client.send("ListGroups", to=node, states_filter=[], types_filter=[])
            raise_for(answer.error_code)
            for g in answer.groups:
                groups[g.group_id] = {
                    "group_id": g.group_id,
                    "protocol_type": g.protocol_type,
                    "group_state": getattr(g, "group_state", None),
                    "group_type": getattr(g, "group_type", None),
                }
        return list(groups.values())

    def to_coordinator(self, coordinated: str, name: str, cap: int | None = None, **fields: Any) -> Any:
        """Request `name` to the coordinator of group `coordinated`."""
        return self.client.send(name, to=self.client.coordinator(coordinated), cap=cap, **fields)

    def describe_group(self, group_id: str) -> dict[str, Any]:
        """DescribeGroups of one classic group, members' assignments decoded when their protocol type is
        "consumer" (ConsumerProtocolAssignment)."""
        answer = self.to_coordinator(group_id, "DescribeGroups", groups=[group_id], include_authorized_operations=False)
        (group,) = answer.groups
        members = []
        for m in group.members:
            assigned: list[dict[str, Any]] = []
            if group.protocol_type == "consumer" and m.member_assignment:
                decoded = compiled("ConsumerProtocolAssignment").decode(m.member_assignment, header=True)
                assigned = [{"topic": t.topic, "partitions": list(t.partitions)} for t in decoded.assigned_partitions]
            members.append(
                {
                    "member_id": m.member_id,
                    "client_id": m.client_id,
                    "client_host": m.client_host,
                    "member_assignment": {"assigned_partitions": assigned},
                }
            )
        return {
            "error_code": group.error_code,
            "group_state": group.group_state,
            "protocol_type": group.protocol_type,
            "protocol": group.protocol_data,
            "members": members,
        }

    def list_group_offsets(self, group_id: str) -> dict[TopicPartition, Offset]:
        """The group's committed offsets (OffsetFetch of every partition, by topic name)."""
        request = compiled("OffsetFetchRequest")
        Group = request.OffsetFetchRequestGroup
        answer = self.to_coordinator(
            group_id,
            "OffsetFetch",
            cap=_BY_NAME,
            group_id=group_id,
            topics=None,
            groups=[Group(group_id=group_id, member_id=None, member_epoch=-1, topics=None)],
            require_stable=False,
        )
        out: dict[TopicPartition, Offset] = {}
        if answer.groups:
            (group,) = answer.groups
            raise_for(group.error_code, f"group {group_id}")
            topics = group.topics
        else:
            raise_for(answer.error_code, f"group {group_id}")
            topics = answer.topics
        for topic in topics:
            for p in topic.partitions:
                if not p.error_code and p.committed_offset >= 0:
                    out[TopicPartition(topic.name, p.partition_index)] = Offset(p.committed_offset, p.metadata)
        return out

    def commit_offsets(
        self,
        group_id: str,
        offsets: dict[TopicPartition, int],
        generation: int = -1,
        member_id: str = "",
        node: int | None = None,
    ) -> None:
        """OffsetCommit (as an admin's AlterConsumerGroupOffsets: generation -1, no member; or a member's)."""
        Topic = compiled("OffsetCommitRequest").OffsetCommitRequestTopic
        by_topic: dict[str, list[Any]] = {}
        for tp, offset in sorted(offsets.items()):
            by_topic.setdefault(tp.topic, []).append(
                Topic.OffsetCommitRequestPartition(
                    partition_index=tp.partition, committed_offset=offset, committed_leader_epoch=-1
                )
            )
        answer = self.client.send(
            "OffsetCommit",
            to=self.client.coordinator(group_id) if node is None else node,
            cap=_BY_NAME,
            group_id=group_id,
            generation_id_or_member_epoch=generation,
            member_id=member_id,
            group_instance_id=None,
            retention_time_ms=-1,
            topics=[Topic(name=t, partitions=ps) for t, ps in by_topic.items()],
        )
        for topic in answer.topics:
            for p in topic.partitions:
                raise_for(p.error_code, f"group {group_id} at {topic.name}-{p.partition_index}")

    def delete_groups(self, group_ids: list[str]) -> dict[str, str | None]:
        """{group: None, or the error's NAME: message}."""
        from .wire import BrokerError

        out: dict[str, str | None] = {}
        for group_id in group_ids:
            answer = self.to_coordinator(group_id, "DeleteGroups", groups_names=[group_id])
            for result in answer.results:
                out[result.group_id] = str(BrokerError(result.error_code)) if result.error_code else None
        return out
