"""A broker running in the caller's Trio loop (`RunningBroker`): the helpers tests call on it (`records`,
`committed`, `create_topic`, the fault switches, the simulated cluster's moves, the manual clock), as
plain calls that see the broker's state exactly as a request would."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import attrs
import trio

from trafka.adapters.kafka.cluster import ClusterError, ClusterMap
from trafka.adapters.kafka.connection.faults import can_fail
from trafka.adapters.kafka.context import BrokerContext
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.records import decode_records, iter_batches

from ..config.settings import Settings
from ..wiring.bootstrap import Adapters
from ..wiring.clock import ManualClock
from . import intercepting

_FETCH_BYTES = 8 * 1024 * 1024


@attrs.frozen
class Record:
    """One record as a consumer sees it (read_uncommitted; control records left out)."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


class BrokerError(Exception):
    """The embedded broker could not start, or a helper was asked for something it cannot do."""


def _api_key(ctx: BrokerContext, api: str | int) -> int:
    for api_key, _, _ in ctx.registry.supported():
        handler = ctx.registry.get(api_key)
        assert handler is not None
        if api in (api_key, handler.name):
            if not can_fail(handler):
                raise BrokerError(f"fail_next cannot fail {handler.name}")
            return api_key
    raise BrokerError(f"unknown or unserved API {api!r}")


def _error_code(error: str | int | ErrorCode) -> int:
    if isinstance(error, str):
        try:
            return int(ErrorCode[error.upper()])
        except KeyError:
            raise BrokerError(f"unknown Kafka error {error!r}") from None
    return int(error)


class RunningBroker:
    """A broker running in the current Trio loop; every method must be called from that loop."""

    def __init__(self, settings: Settings, ctx: BrokerContext, adapters: Adapters, port: int) -> None:
        self.settings = settings
        self.ctx = ctx
        self._adapters = adapters
        self.host = settings.server.host
        self.port = port

    @property
    def bootstrap_servers(self) -> str:
        if self.ctx.services.cluster is not None:  # every broker of the cluster
            return ",".join(f"{e.host}:{e.port}" for _, e in sorted(self.ctx.services.cluster.endpoints.items()))
        return f"{self.ctx.advertised.host}:{self.ctx.advertised.port}"

    # -- topics and records ---------------------------------------------------------------------
    def create_topic(self, name: str, partitions: int = -1, config: Mapping[str, str] | None = None) -> None:
        """Create a topic now; `partitions` defaults to the broker's num.partitions, as in CreateTopics."""
        try:
            self.ctx.services.catalog.create(name, partitions, -1, dict(config or {}))
        except KafkaError as exc:
            raise BrokerError(f"cannot create topic {name}: {exc.code.name} {exc.message or ''}".rstrip()) from exc

    def topics(self) -> dict[str, int]:
        """Topic name -> partition count, internal topics left out."""
        return {t.name: t.partition_count for t in self.ctx.services.catalog.topics() if not t.name.startswith("__")}

    def records(self, topic: str, partition: int | None = None) -> list[Record]:
        """Every record in the topic (or one partition), by partition then offset."""
        found = self.ctx.services.catalog.get(topic)
        if found is None:
            raise BrokerError(f"unknown topic {topic}")
        partitions = range(found.partition_count) if partition is None else [partition]
        out: list[Record] = []
        for index in partitions:
            out.extend(self._partition_records(TopicPartition(topic, index)))
        return out

    def _partition_records(self, tp: TopicPartition) -> Iterable[Record]:
        watermarks = self.ctx.services.replicas.watermarks(tp)
        if watermarks is None:
            raise BrokerError(f"unknown partition {tp.topic}-{tp.partition}")
        offset, end = watermarks
        while offset < end:
            fetched = self.ctx.services.replicas.fetch(tp, offset, _FETCH_BYTES, True)
            if fetched.error is not ErrorCode.NONE or not fetched.records:
                return
            last = offset
            for header, batch in iter_batches(fetched.records):
                last = header.next_offset
                if header.is_control:
                    continue
                for record in decode_records(batch, self.ctx.services.replicas.decompress):
                    if record.offset >= offset:
                        yield Record(
                            tp.topic,
                            tp.partition,
                            record.offset,
                            record.timestamp,
                            record.key,
                            record.value,
                            record.headers,
                        )
            if last <= offset:
                return
            offset = last

    def committed(self, group: str) -> dict[tuple[str, int], int]:
        """The group's committed offsets as {(topic, partition): offset}."""
        committed = self.ctx.services.groups.offsets.fetch(group, None)
        return dict(sorted(((tp.topic, tp.partition), c.offset) for tp, c in committed.items() if c is not None))

    def assignment(self, group: str) -> dict[str, set[tuple[str, int]]]:
        """A KIP-848 consumer group's members and the partitions each owns now, {member id: {(topic, p)}};
        a streams group's members and the active tasks each runs now, {member id: {(subtopology, p)}}."""
        streams = self.ctx.services.groups.streams
        if streams is not None and group in streams.groups:
            return {
                member_id: {(sid, p) for sid, ps in member.assigned.active.items() for p in ps}
                for member_id, member in streams.groups[group].members.items()
            }
        consumer = self.ctx.services.groups.consumer
        found = consumer.groups.get(group) if consumer is not None else None
        if found is None:
            raise BrokerError(f"no consumer or streams group {group}")
        return {
            member_id: {(topic, p) for topic, ps in member.assigned.items() for p in ps}
            for member_id, member in found.members.items()
        }

    def streams_tasks(self, group: str) -> dict[str, dict[str, set[tuple[str, int]]]]:
        """A streams group's members and the tasks each holds now, by role: {member id: {"active": ...,
        "standby": ..., "warmup": ...}} of (subtopology id, partition)."""
        streams = self.ctx.services.groups.streams
        if streams is None or group not in streams.groups:
            raise BrokerError(f"no streams group {group}")
        answer: dict[str, dict[str, set[tuple[str, int]]]] = {}
        for member_id, member in streams.groups[group].members.items():
            roles: dict[str, set[tuple[str, int]]] = {"active": set(), "standby": set(), "warmup": set()}
            for role, sid, p in member.assigned.roles():
                roles[role].add((sid, p))
            answer[member_id] = roles
        return answer

    def share_progress(self, group: str) -> dict[tuple[str, int], dict[str, int]]:
        """A share group's share-partitions: {(topic, p): start_offset, in_flight, acquired, archived}."""
        share = self.ctx.services.share
        if share is None or (group not in share.groups.coordinator.groups and not share.groups.group_partitions(group)):
            raise BrokerError(f"no share group {group}")
        return {
            (tp.topic, tp.partition): {
                "start_offset": sp.start_offset,
                "in_flight": sp.in_flight_count(),
                "acquired": sp.acquired_count(),
                "archived": sp.archived_total,
            }
            for tp, sp in sorted(share.groups.group_partitions(group).items())
        }

    async def compact(self, topic: str, timeout: float = 60.0) -> None:
        """`Broker.compact`: clean the topic now (in the cleaner's worker thread)."""
        cleaner = self._adapters.cleaning.cleaner
        if cleaner is None:
            raise BrokerError(f"cannot compact {topic}: the broker has no log cleaner")
        try:
            with trio.fail_after(timeout):
                await cleaner.compact(topic)
        except KeyError:
            raise BrokerError(f"cannot compact {topic}: unknown topic") from None

    async def wait_for(self, topic: str, count: int, timeout: float = 10.0) -> list[Record]:
        """The topic's records once there are at least `count` of them; TimeoutError after `timeout` s."""
        seen: list[Record] = []
        with trio.move_on_after(timeout):
            while True:
                found = self.ctx.services.catalog.get(topic)
                partitions = [] if found is None else list(found.topic_partitions())
                event = self.ctx.services.appends.waiter(partitions)
                try:
                    seen = self.records(topic) if found is not None else []
                    if len(seen) >= count:
                        return seen
                    with trio.move_on_after(0.05):  # also notices a topic created meanwhile
                        await event.wait()
                finally:
                    self.ctx.services.appends.forget_waiter(event, partitions)
        raise TimeoutError(f"{len(seen)} of {count} records in {topic} after {timeout} s")

    # -- faults ---------------------------------------------------------------------------------
    def pause(self) -> None:
        """Stop answering requests (they are read and held; connections stay open) until `resume`."""
        self.ctx.faults.pause()

    def resume(self) -> None:
        self.ctx.faults.resume()

    def drop_connections(self) -> int:
        """Close every client connection at once; returns how many were open."""
        return self.ctx.faults.drop_connections()

    def fail_next(
        self, api: str | int, error: str | int | ErrorCode = "NOT_LEADER_OR_FOLLOWER", times: int = 1
    ) -> None:
        """Answer the next `times` requests of `api` ("Produce", or its key) with `error` instead of
        serving them; a failed request has no effect, as when Kafka refuses one."""
        self.ctx.faults.fail_next(_api_key(self.ctx, api), _error_code(error), times)

    def pending_failures(self, api: str | int) -> int:
        return self.ctx.faults.pending_failures(_api_key(self.ctx, api))

    # -- a simulated cluster (`brokers=N`) ---------------------------------------------------------
    def _cluster(self) -> ClusterMap:
        if self.ctx.services.cluster is None:
            raise BrokerError("not a cluster: use trafka.Cluster (or open_broker(brokers=N))")
        return self.ctx.services.cluster

    def nodes(self) -> dict[int, str]:
        """Node id -> "host:port" of every broker of the cluster, stopped ones included."""
        cluster = self._cluster()
        return {node: f"{e.host}:{e.port}" for node, e in sorted(cluster.endpoints.items())}

    def live_nodes(self) -> list[int]:
        return self._cluster().live()

    def leader(self, topic: str, partition: int) -> int:
        """The node leading the partition now."""
        return self._cluster().leader(TopicPartition(topic, partition))[0]

    def leader_epoch(self, topic: str, partition: int) -> int:
        return self._cluster().leader(TopicPartition(topic, partition))[1]

    def coordinator(self, group: str) -> int:
        """The node coordinating the group now."""
        return self._cluster().coordinator(group)

    def stop_broker(self, node: int) -> None:
        """The broker goes away: its connections closed, new ones refused; what it led moves on."""
        try:
            self._cluster().stop(node)
        except ClusterError as exc:
            raise BrokerError(str(exc)) from None

    def start_broker(self, node: int) -> None:
        """The broker is back (leadership stays where it went, until moved)."""
        try:
            self._cluster().start(node)
        except ClusterError as exc:
            raise BrokerError(str(exc)) from None

    def move_leader(self, topic: str, partition: int, to: int) -> int:
        """The partition's leadership moves to node `to`, with a new leader epoch (returned)."""
        if self.ctx.services.catalog.get(topic) is None:
            raise BrokerError(f"unknown topic {topic}")
        try:
            return self._cluster().move_leader(TopicPartition(topic, partition), to)
        except ClusterError as exc:
            raise BrokerError(str(exc)) from None

    def move_coordinator(self, group: str, to: int) -> None:
        """The group's coordinator is node `to` now; its members find it again (NOT_COORDINATOR)."""
        try:
            self._cluster().move_coordinator(group, to)
        except ClusterError as exc:
            raise BrokerError(str(exc)) from None

    async def advance(self, seconds: float) -> int:
        """Move the broker's manual clock (`clock="manual"`) `seconds` on and return once what became
        due has been done (the loop's tasks are all waiting again); the broker's time in ms."""
        clock = self._adapters.clock
        if not isinstance(clock, ManualClock):
            raise BrokerError('advance needs a broker with clock="manual"')
        try:
            now = clock.advance(seconds)
        except ValueError as exc:
            raise BrokerError(str(exc)) from None
        import trio.testing  # not at import: trio.testing imports pytest

        await trio.testing.wait_all_tasks_blocked()
        return now

    def now_ms(self) -> int:
        """The broker's time (manual or wall clock), in ms since the epoch."""
        return self._adapters.clock_ms()

    def intercept(
        self,
        api: str | int,
        fn: Callable[[intercepting.InterceptedRequest], intercepting.Verdict | None],
        times: int | None = None,
    ) -> intercepting.Interception:
        """Show every request of `api` to `fn` first (at most `times` of them); see `trafka.testing`."""
        try:
            interceptor = intercepting.install(self.ctx.faults, self.ctx.registry, api, fn, times)
        except intercepting.InterceptError as exc:
            raise BrokerError(str(exc)) from None
        faults = self.ctx.faults
        return intercepting.Interception(interceptor, lambda: faults.remove(interceptor))
