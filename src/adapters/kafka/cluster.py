"""Several brokers in one process, one store underneath: the simulated cluster of `trafka.Cluster`.

A test double, not a distributed broker (ADR 42): every node is a listener of the same server, with
its own node id and port, over the same catalog, logs, groups and transactions. Nothing is
replicated, so nothing can be lost; what clients see is what a cluster shows them:

- Metadata and DescribeCluster list the live nodes; each partition has one leader (in Metadata and
  DescribeTopicPartitions) (replicas and ISR:
  that leader) with a leader epoch; FindCoordinator answers each group's or transactional id's
  coordinator; partitions and coordinators are spread over the nodes.
- A node answers NOT_LEADER_OR_FOLLOWER for a partition it does not lead (Produce, DeleteRecords:
  the whole request refused, nothing applied; Fetch, ListOffsets: those partitions) and
  NOT_COORDINATOR for a group or transactional id it does not coordinate.
- `stop(node)`: its connections are closed and new ones closed at once; the partitions it led move
  to live nodes with their leader epoch bumped, as do its groups and transactional ids. `start`
  brings it back (leadership stays where it went, until moved). `move_leader`, `move_coordinator`.

This module is the topology only (a leaf: the domain and the request context). What a node checks
or rewrites is each API's `cluster` declaration in its room (`apis/`), built from the kinds in
`connection/cluster.py`, which also composes them as a layer of the request pipeline (between faults
and authorization), only on a cluster; the lanes are off there.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition

if TYPE_CHECKING:
    from .request_context import ClientInfo, Endpoint

NOT_LEADER = int(ErrorCode.NOT_LEADER_OR_FOLLOWER)
NOT_COORDINATOR = int(ErrorCode.NOT_COORDINATOR)
GROUP, TRANSACTION = 0, 1  # FindCoordinator's key types


class ClusterError(ValueError):
    """An unknown node, or a move that cannot be made (every node stopped)."""


class ClusterMap:
    """Who leads and coordinates what, which nodes are live, and their addresses."""

    def __init__(self, node_ids: Iterable[int]) -> None:
        self.node_ids = tuple(node_ids)
        if not self.node_ids:
            raise ClusterError("a cluster needs at least one node")
        self.listener_nodes: dict[str, int] = {f"BROKER{node}": node for node in self.node_ids}
        self.endpoints: dict[int, Endpoint] = {}
        self.stopped: set[int] = set()
        self._leaders: dict[TopicPartition, tuple[int, int]] = {}  # tp -> (leader, epoch)
        self._coordinators: dict[tuple[int, str], int] = {}
        self.on_stop: Callable[[int], None] = lambda node: None  # closes the node's connections

    # -- nodes ---------------------------------------------------------------------------------
    def listener_name(self, node: int) -> str:
        self._check(node)
        return f"BROKER{node}"

    def node_of(self, client: ClientInfo) -> int | None:
        return self.listener_nodes.get(client.listener)

    def live(self) -> list[int]:
        return [node for node in self.node_ids if node not in self.stopped]

    def accepts(self, listener: str) -> bool:
        node = self.listener_nodes.get(listener)
        return node is None or node not in self.stopped

    def _check(self, node: int) -> None:
        if node not in self.node_ids:
            raise ClusterError(f"no node {node}: the nodes are {', '.join(map(str, self.node_ids))}")

    def _spread(self, key: str, index: int = 0) -> int:
        live = self.live()
        if not live:
            raise ClusterError("every node is stopped")
        # A node by a stable hash; over all nodes first, so a stopped one's share goes elsewhere only.
        wanted = self.node_ids[(zlib.crc32(key.encode()) + index) % len(self.node_ids)]
        return wanted if wanted in live else live[(zlib.crc32(key.encode()) + index) % len(live)]

    # -- leaders -------------------------------------------------------------------------------
    def leader(self, tp: TopicPartition) -> tuple[int, int]:
        """(leader node, leader epoch) of the partition; a live node (unless every node is stopped)."""
        found = self._leaders.get(tp)
        if found is None or found[0] in self.stopped:
            epoch = -1 if found is None else found[1]
            try:
                found = (self._spread(tp.topic, tp.partition), epoch + 1)
            except ClusterError:
                return found if found is not None else (self.node_ids[0], 0)
            self._leaders[tp] = found
        return found

    def move_leader(self, tp: TopicPartition, to: int) -> int:
        """The partition led by `to` now, with a new leader epoch; returns the epoch."""
        self._check(to)
        if to in self.stopped:
            raise ClusterError(f"node {to} is stopped")
        leader, epoch = self.leader(tp)
        if leader != to:
            epoch += 1
            self._leaders[tp] = (to, epoch)
        return epoch

    # -- coordinators --------------------------------------------------------------------------
    def coordinator(self, key: str, key_type: int = GROUP) -> int:
        found = self._coordinators.get((key_type, key))
        if found is None or found in self.stopped:
            try:
                found = self._spread(f"{key_type}:{key}")
            except ClusterError:
                return found if found is not None else self.node_ids[0]
            self._coordinators[(key_type, key)] = found
        return found

    def move_coordinator(self, key: str, to: int, key_type: int = GROUP) -> None:
        self._check(to)
        if to in self.stopped:
            raise ClusterError(f"node {to} is stopped")
        self._coordinators[(key_type, key)] = to

    # -- stopping and starting -----------------------------------------------------------------
    def stop(self, node: int) -> None:
        """The node goes away: connections closed, leadership and coordination move to live nodes."""
        self._check(node)
        if node in self.stopped:
            return
        if len(self.live()) == 1:
            raise ClusterError("cannot stop the last live node")
        self.stopped.add(node)
        for tp, (leader, _) in list(self._leaders.items()):
            if leader == node:
                self.leader(tp)  # moves it, bumping the epoch
        for key, coordinator in list(self._coordinators.items()):
            if coordinator == node:
                self.coordinator(key[1], key[0])
        self.on_stop(node)

    def start(self, node: int) -> None:
        self._check(node)
        self.stopped.discard(node)
