"""The simulated cluster's layer of the request pipeline, and the kinds of check a room declares.

Each room says in its `KafkaApi.cluster` what a node of `trafka.Cluster` does with its requests
(ADR 42); this module gives the kinds, and `layer` composes a room's check with its handler when the
broker starts, only on a cluster:

- `refuse_unless_leader(partitions)`: for APIs with effects, the whole request refused with
  NOT_LEADER_OR_FOLLOWER if this node leads any of its partitions not (nothing applied);
- `fail_partitions(topics_field, index_field)`: for reads, served, then the partitions this node does
  not lead answered NOT_LEADER_OR_FOLLOWER (no records; the current leader where the version has it);
- `refuse_unless_coordinator(keys)`: NOT_COORDINATOR unless this node coordinates every group or
  transactional id of the request (a read-only API is served, then failed, as an injected fault);
- a room's own function for an answer that names nodes (Metadata, FindCoordinator...), built on
  `then`, `live_brokers` and `place_leaders`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition

from ..api import ClusterCheck, Deferred, Handle, KafkaApi, Parked
from ..cluster import GROUP, TRANSACTION, ClusterMap
from .faults import error_response, serve_then_fail

if TYPE_CHECKING:
    from ..context import BrokerContext
    from ..request_context import ClientInfo

NOT_LEADER = int(ErrorCode.NOT_LEADER_OR_FOLLOWER)
NOT_COORDINATOR = int(ErrorCode.NOT_COORDINATOR)

Partitions = Callable[[Any, Any], Iterable[TopicPartition]]  # (request, what the room declares) -> partitions
Keys = Callable[[Any, int], Iterable[tuple[str, int]]]


def layer(cluster: ClusterMap, api: KafkaApi, serve: Handle) -> Handle:
    """`serve` behind the room's cluster check; `serve` itself for an API every node serves alike."""
    check = api.cluster
    if check is None:
        return serve

    def serve_in_cluster(ctx: BrokerContext, body: Any, version: int, client: ClientInfo) -> Any:
        node = cluster.node_of(client)
        if node is None:  # a listener outside the cluster's (none today)
            return serve(ctx, body, version, client)
        return check(cluster, node, api, serve, ctx, body, version, client)

    return serve_in_cluster


def then(outcome: Any, change: Callable[[Any], Any]) -> Any:
    """`change(response)` now, or once a deferred or parked response is ready."""
    if type(outcome) is Parked:
        return outcome.then(change)
    if isinstance(outcome, Deferred):
        wait = outcome.wait

        async def changed() -> Any:
            return change(await wait())

        return Deferred(changed)
    return change(outcome)


def as_kafka_python(response: Any, version: int) -> Any:
    convert = getattr(response, "as_kafka_python", None)  # a fast-path answer
    return convert(version) if convert is not None else response


# -- partitions -------------------------------------------------------------------------------------
def refuse_unless_leader(partitions: Partitions) -> ClusterCheck:
    """For the APIs with effects: the whole request refused if this node leads any partition of it not."""

    def check(
        cluster: ClusterMap,
        node: int,
        api: KafkaApi,
        serve: Handle,
        ctx: BrokerContext,
        body: Any,
        version: int,
        client: ClientInfo,
    ) -> Any:
        if all(cluster.leader(tp)[0] == node for tp in partitions(body, api.uses(ctx))):
            return serve(ctx, body, version, client)
        return error_response(api, serve, ctx, body, version, client, NOT_LEADER)

    return check


def topic_name(entry: Any, ctx: BrokerContext) -> str | None:
    """An answer's topic entry's name, by its name or its topic id."""
    name = getattr(entry, "topic", None) or getattr(entry, "name", None)
    if name:
        return str(name)
    topic_id = getattr(entry, "topic_id", None)
    found = ctx.services.catalog.by_id(topic_id) if topic_id is not None else None
    return found.name if found is not None else None


def fail_partitions(topics_field: str, index_field: str) -> ClusterCheck:
    """For reads: served, then the partitions this node does not lead answered NOT_LEADER_OR_FOLLOWER
    (no records, and where the version has it the current leader, KIP-951)."""

    def check(
        cluster: ClusterMap,
        node: int,
        api: KafkaApi,
        serve: Handle,
        ctx: BrokerContext,
        body: Any,
        version: int,
        client: ClientInfo,
    ) -> Any:
        def fail_others(response: Any) -> Any:
            response = as_kafka_python(response, version)
            for topic in getattr(response, topics_field) or ():
                name = topic_name(topic, ctx)
                if name is None:
                    continue
                for partition in topic.partitions or ():
                    leader, epoch = cluster.leader(TopicPartition(name, getattr(partition, index_field)))
                    if leader == node:
                        continue
                    partition.error_code = NOT_LEADER
                    if hasattr(partition, "records"):
                        partition.records = b""
                        partition.high_watermark = partition.last_stable_offset = partition.log_start_offset = -1
                        partition.aborted_transactions = None
                        current = getattr(partition, "current_leader", None)
                        if current is not None:
                            current.leader_id, current.leader_epoch = leader, epoch
                    else:
                        partition.offset, partition.timestamp = -1, -1
            return response

        return then(serve(ctx, body, version, client), fail_others)

    return check


# -- coordinators -----------------------------------------------------------------------------------
def refuse_unless_coordinator(keys: Keys) -> ClusterCheck:
    def check(
        cluster: ClusterMap,
        node: int,
        api: KafkaApi,
        serve: Handle,
        ctx: BrokerContext,
        body: Any,
        version: int,
        client: ClientInfo,
    ) -> Any:
        if all(cluster.coordinator(key, key_type) == node for key, key_type in keys(body, version)):
            return serve(ctx, body, version, client)
        if api.read_only:
            return serve_then_fail(serve, ctx, body, version, client, NOT_COORDINATOR)
        return error_response(api, serve, ctx, body, version, client, NOT_COORDINATOR)

    return check


def one_group(body: Any, version: int) -> Iterable[tuple[str, int]]:
    """The request's `group_id`."""
    return [(body.group_id, GROUP)]


def groups_in(field: str) -> Keys:
    """The groups listed in `field` (ids, or entries with a `group_id`); a single `group_id` where the
    version has none (OffsetFetch before v8)."""

    def groups(body: Any, version: int) -> Iterable[tuple[str, int]]:
        found = getattr(body, field, None)
        if not found:
            group_id = getattr(body, "group_id", None)
            return [] if group_id is None else [(group_id, GROUP)]
        return [((g if isinstance(g, str) else g.group_id), GROUP) for g in found]

    return groups


def transactional_id(body: Any, version: int) -> Iterable[tuple[str, int]]:
    """The request's `transactional_id`, if it has one."""
    found = getattr(body, "transactional_id", None)
    return [] if found is None else [(found, TRANSACTION)]


# -- answers that name nodes ------------------------------------------------------------------------
def live_brokers(cluster: ClusterMap, broker_type: Any) -> list[Any]:
    """The live nodes as an answer's broker entries."""
    return [
        broker_type(node_id=node, host=cluster.endpoints[node].host, port=cluster.endpoints[node].port, rack=None)
        for node in cluster.live()
        if node in cluster.endpoints
    ]


def place_leaders(cluster: ClusterMap, topics: Iterable[Any]) -> None:
    """Each partition's leader and epoch; replicas and ISR: the leader (nothing is replicated)."""
    for topic in topics:
        if topic.name is None:
            continue
        for partition in topic.partitions or ():
            leader, epoch = cluster.leader(TopicPartition(topic.name, partition.partition_index))
            partition.leader_id, partition.leader_epoch = leader, epoch
            partition.replica_nodes = [leader]
            partition.isr_nodes = [leader]
