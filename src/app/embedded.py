"""The embeddable broker: a real Kafka broker inside the test process, for other projects' tests.

    with trafka.Broker(topics={"orders": 3}) as broker:
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers})

`Broker` runs the same broker as `trafka serve` (the same wiring and run loop, `runtime.run_broker`)
on 127.0.0.1 and an ephemeral port, in memory unless given a `data_dir`, in a background thread with a
Trio loop of its own, so sync, asyncio and Trio tests all use it. Its helpers (`records`, `committed`,
`create_topic`, the fault switches) run inside that loop through `trio.from_thread`, so they see the
broker's state exactly as a request would, without locks. From Trio code, `open_broker` runs the same
broker in the caller's loop and yields a `RunningBroker` whose helpers are plain calls.

Every broker has its own state: many can run in one process at once.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import Any, Self

import attrs
import trio

from trafka.adapters.kafka.cluster import ClusterError, ClusterMap
from trafka.adapters.kafka.connection.faults import can_fail
from trafka.adapters.kafka.context import BrokerContext
from trafka.adapters.kafka.request_context import Endpoint
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.records import decode_records, iter_batches

from . import intercepting
from .config.kafka_keys import is_kafka_key, overrides_from_config_names
from .config.settings import Settings, load_settings
from .wiring.bootstrap import Adapters, bootstrap, default_adapters
from .wiring.clock import ManualClock
from .wiring.runtime import close_broker, request_shutdown, run_broker

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


def _trafka_field(name: str) -> tuple[str, str] | None:
    """A trafka setting with no Kafka name (`shutdown_grace_seconds`...): (section, field)."""
    defaults = Settings()
    for section in attrs.fields(Settings):
        kind = type(getattr(defaults, section.name))
        if attrs.has(kind) and name in attrs.fields_dict(kind):
            return section.name, name
    return None


def embedded_settings(
    *,
    data_dir: str | None = None,
    auto_create_topics: bool = True,
    host: str = "127.0.0.1",
    port: int = 0,
    settings: Mapping[str, Any] | None = None,
) -> Settings:
    """Settings for a broker in a test: memory store, an ephemeral port, no group join delay."""
    overrides: dict[str, dict[str, Any]] = {
        "server": {"host": host, "port": port, "shutdown_grace_seconds": 1.0},
        "broker": {"auto_create_topics_enable": auto_create_topics},
        # Kafka's 3 s initial rebalance delay only slows tests down; testcontainers sets it to 0 too.
        "groups": {"initial_rebalance_delay_ms": 0, "streams_initial_rebalance_delay_ms": 0},
        "storage": {"kind": "memory"} if data_dir is None else {"kind": "filesystem", "data_dir": str(data_dir)},
    }
    kafka_names: dict[str, Any] = {}
    for name, value in (settings or {}).items():
        key = name.replace("_", ".")
        field = None if is_kafka_key(name) or is_kafka_key(key) else _trafka_field(name)
        if field is None:
            kafka_names[name] = value
        else:
            overrides.setdefault(field[0], {})[field[1]] = value
    try:
        for section, values in overrides_from_config_names(kafka_names).items():
            if isinstance(values, Mapping):
                overrides.setdefault(section, {}).update(values)
            else:
                overrides[section] = values
        return load_settings(None, None, overrides)
    except Exception as exc:
        raise BrokerError(str(exc)) from exc


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


def cluster_listeners(brokers: int, host: str) -> dict[str, str]:
    """The settings of a simulated cluster's listeners: one per node, each on an ephemeral port."""
    if not isinstance(brokers, int) or brokers < 1:
        raise BrokerError("a cluster needs brokers >= 1")
    names = [f"BROKER{n}" for n in range(1, brokers + 1)]
    return {
        "listeners": ",".join(f"{name}://{host}:0" for name in names),
        "listener_security_protocol_map": ",".join(f"{name}:PLAINTEXT" for name in names),
    }


def attach_cluster(ctx: BrokerContext, cluster: ClusterMap) -> None:
    """The cluster's nodes on the bound listeners (in order), and stopping one closes its connections."""
    bound = {listener.name: listener for listener in ctx.listening.listeners}
    names = {node: f"BROKER{index}" for index, node in enumerate(cluster.node_ids, start=1)}
    cluster.listener_nodes = {name: node for node, name in names.items()}
    cluster.endpoints = {
        node: Endpoint(bound[name].advertised_host, bound[name].advertised_port) for node, name in names.items()
    }

    def close_connections(node: int) -> None:
        ctx.faults.drop_connections(names[node])

    cluster.on_stop = close_connections


def _initial_topics(topics: Mapping[str, int] | Iterable[str] | None) -> dict[str, int]:
    if topics is None:
        return {}
    if isinstance(topics, Mapping):
        return dict(topics)
    if isinstance(topics, str):
        return {topics: -1}
    return dict.fromkeys(topics, -1)


@contextlib.asynccontextmanager
async def open_broker(
    *,
    data_dir: str | None = None,
    topics: Mapping[str, int] | Iterable[str] | None = None,
    auto_create_topics: bool = True,
    host: str = "127.0.0.1",
    port: int = 0,
    brokers: int | None = None,
    **settings: Any,
) -> AsyncIterator[RunningBroker]:
    """Run a broker in the current Trio loop for the body of the `async with`.

    Options as `Broker`'s; `brokers=N` makes it a simulated cluster of N brokers (as
    `trafka.Cluster`). The broker accepts connections when the body starts and is stopped
    gracefully when it ends.
    """
    if brokers is not None:
        settings = {**settings, **cluster_listeners(brokers, host)}
    config = embedded_settings(
        data_dir=data_dir, auto_create_topics=auto_create_topics, host=host, port=port, settings=settings
    )
    adapters = default_adapters(config)
    ctx = bootstrap(config, adapters)
    if brokers is not None:
        ctx = attrs.evolve(
            ctx,
            services=attrs.evolve(
                ctx.services, cluster=ClusterMap(range(config.broker.node_id, config.broker.node_id + brokers))
            ),
        )
    try:
        async with trio.open_nursery() as nursery:
            bound = await nursery.start(run_broker, config, ctx, adapters)
            if ctx.services.cluster is not None:
                attach_cluster(ctx, ctx.services.cluster)
            running = RunningBroker(config, ctx, adapters, bound)
            try:
                for name, partitions in _initial_topics(topics).items():
                    if ctx.services.catalog.get(name) is None:
                        running.create_topic(name, partitions)
                yield running
            finally:
                request_shutdown(ctx)
    finally:
        close_broker(ctx, adapters)


class Broker:
    """A broker in a background thread: `with trafka.Broker() as broker:` or `start()`/`stop()`.

    Options: `data_dir` (the filesystem store in Kafka's log dir format; default: memory),
    `topics` ({"orders": 3} or ["orders"]: created before `start` returns), `auto_create_topics`,
    `host`/`port` (default 127.0.0.1 and an ephemeral port), and any broker setting by its Kafka
    config name, dots as underscores (`num_partitions=3`, `group_initial_rebalance_delay_ms=100`,
    `message_max_bytes=...`). The group join delay is 0 unless set.
    """

    def __init__(
        self,
        *,
        data_dir: str | None = None,
        topics: Mapping[str, int] | Iterable[str] | None = None,
        auto_create_topics: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
        **settings: Any,
    ) -> None:
        # Settings are checked now, so a typo fails where the broker is declared.
        embedded_settings(
            data_dir=data_dir, auto_create_topics=auto_create_topics, host=host, port=port, settings=settings
        )
        self._options = dict(
            data_dir=data_dir, topics=topics, auto_create_topics=auto_create_topics, host=host, port=port, **settings
        )
        self._running: RunningBroker | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._thread: threading.Thread | None = None
        self._stop: trio.Event | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self, timeout: float = 30.0) -> Self:
        if self._thread is not None:
            raise BrokerError("the broker is already started")
        ready = threading.Event()
        failure: list[BaseException] = []

        async def main() -> None:
            self._stop = trio.Event()
            async with open_broker(**self._options) as running:
                self._running = running
                self._token = trio.lowlevel.current_trio_token()
                ready.set()
                await self._stop.wait()

        def thread() -> None:
            try:
                trio.run(main)
            except BaseException as exc:  # reported by start(), or lost after a stop
                failure.append(exc)
            finally:
                self._running = None
                ready.set()

        self._thread = threading.Thread(target=thread, name="trafka-broker", daemon=True)
        self._thread.start()
        if not ready.wait(timeout) or self._running is None:
            self._thread.join(timeout)
            self._thread = None
            cause = failure[0] if failure else None
            raise BrokerError(f"the broker did not start: {_reason(cause)}") from cause
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop gracefully: in-flight requests answered, connections closed, the thread joined."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        if self._token is not None and self._stop is not None:
            with contextlib.suppress(trio.RunFinishedError):
                trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
        thread.join(timeout)
        self._token = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._running is not None

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        running, token = self._running, self._token
        if running is None or token is None:
            raise BrokerError("the broker is not running")
        return trio.from_thread.run_sync(lambda: getattr(running, name)(*args, **kwargs), trio_token=token)

    # -- what tests use -------------------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        """The `bootstrap.servers` string for every client, e.g. "127.0.0.1:40123"."""
        return self._require().bootstrap_servers

    @property
    def host(self) -> str:
        return self._require().host

    @property
    def port(self) -> int:
        return self._require().port

    def _require(self) -> RunningBroker:
        if self._running is None:
            raise BrokerError("the broker is not running")
        return self._running

    def create_topic(self, name: str, partitions: int = -1, config: Mapping[str, str] | None = None) -> None:
        """Create a topic now; `partitions` defaults to the broker's num.partitions, as in CreateTopics."""
        self._call("create_topic", name, partitions, config)

    def topics(self) -> dict[str, int]:
        """Topic name -> partition count, internal topics left out."""
        return self._call("topics")

    def records(self, topic: str, partition: int | None = None) -> list[Record]:
        """Everything in the topic, decoded (key, value, headers, partition, offset, timestamp)."""
        return self._call("records", topic, partition)

    def committed(self, group: str) -> dict[tuple[str, int], int]:
        """The group's committed offsets as {(topic, partition): offset}."""
        return self._call("committed", group)

    def assignment(self, group: str) -> dict[str, set[tuple[str, int]]]:
        """A KIP-848 consumer group's members and the partitions each owns, {member id: {(topic, p)}}; a
        streams group's (KIP-1071) members and the active tasks each runs, {member id: {(subtopology id,
        partition)}} (`broker.streams_tasks(group)` has the standby and warm-up tasks too)."""
        return self._call("assignment", group)

    def streams_tasks(self, group: str) -> dict[str, dict[str, set[tuple[str, int]]]]:
        """A streams group's members and the tasks each holds now by role, {member id: {"active": {(subtopology
        id, partition)}, "standby": {...}, "warmup": {...}}}."""
        return self._call("streams_tasks", group)

    def share_progress(self, group: str) -> dict[tuple[str, int], dict[str, int]]:
        """A share group's progress per partition: its start offset (every record below it accepted or
        archived) and its records in flight, acquired and archived, {(topic, p): {...}}."""
        return self._call("share_progress", group)

    def compact(self, topic: str, timeout: float = 60.0) -> None:
        """Run the log cleaner on the topic now, whatever its dirty ratio and compaction lags: each
        partition's active segment is rolled and everything up to the last stable offset cleaned by
        Kafka's rules (tombstones stay `delete.retention.ms` after their first cleaning)."""
        running, token = self._require(), self._token
        trio.from_thread.run(running.compact, topic, timeout, trio_token=token)

    def wait_for(self, topic: str, count: int, timeout: float = 10.0) -> list[Record]:
        """Block until the topic holds at least `count` records; return them. TimeoutError if not."""
        running, token = self._require(), self._token
        return trio.from_thread.run(running.wait_for, topic, count, timeout, trio_token=token)

    def pause(self) -> None:
        """Stop answering (requests are held, connections kept) until `resume()`."""
        self._call("pause")

    def resume(self) -> None:
        """Answer the held requests and the ones after them again."""
        self._call("resume")

    def drop_connections(self) -> int:
        """Close every client connection now, as a broker restart would; returns how many."""
        return self._call("drop_connections")

    def fail_next(self, api: str | int, error: str | int = "NOT_LEADER_OR_FOLLOWER", times: int = 1) -> None:
        """Answer the next `times` requests of `api` ("Produce", "Fetch", "OffsetCommit", ... or the
        API key) with Kafka error `error` (a name such as "NOT_LEADER_OR_FOLLOWER", or a code)."""
        self._call("fail_next", api, error, times)

    def pending_failures(self, api: str | int) -> int:
        """How many of the failures armed by `fail_next` are still to come."""
        return self._call("pending_failures", api)

    def intercept(
        self,
        api: str | int,
        fn: Callable[[intercepting.InterceptedRequest], intercepting.Verdict | None],
        times: int | None = None,
    ) -> intercepting.Interception:
        """Show every request of `api` ("Produce", or its key) to `fn(request)` before serving it, the
        next `times` of them or (None) until `handle.remove()`. `fn` runs in the broker's thread and
        returns None (serve it) or `trafka.testing.respond(...)`, `delay(...)`, `drop()`."""
        local: intercepting.Interception = self._call("intercept", api, fn, times)
        token = self._token
        interceptor = local._interceptor

        def remove() -> None:
            running = self._running
            if running is None or token is None:
                interceptor.removed = True  # the broker is gone: nothing left to intercept
                return
            try:
                in_loop = trio.lowlevel.current_trio_token() is token
            except RuntimeError:
                in_loop = False
            if in_loop:  # called from an interceptor
                running.ctx.faults.remove(interceptor)
            else:
                trio.from_thread.run_sync(running.ctx.faults.remove, interceptor, trio_token=token)

        return intercepting.Interception(interceptor, remove)

    def advance(self, seconds: float) -> int:
        """With `clock="manual"`: move the broker's clock `seconds` on; what became due (an expired
        group member, a timed-out transaction, retention) is done before this returns. Clients and
        the network stay on real time. Returns the broker's time in ms."""
        running, token = self._require(), self._token
        return trio.from_thread.run(running.advance, seconds, trio_token=token)

    def now_ms(self) -> int:
        """The broker's time in ms since the epoch (the manual clock's, with `clock="manual"`)."""
        return self._call("now_ms")


class Cluster(Broker):
    """Several brokers in one process over one store (a test double: nothing is replicated, nothing can
    be lost): `with trafka.Cluster(brokers=3, topics={"orders": 6}) as cluster:`.

    Each broker has its own listener and node id (1..N); Metadata spreads partition leaders and group
    coordinators over them, and a broker answers NOT_LEADER_OR_FOLLOWER / NOT_COORDINATOR for what it
    does not lead, as Kafka. `stop_broker(node)` / `start_broker(node)`, `move_leader(topic,
    partition, to)`, `move_coordinator(group, to)`, `leader(topic, partition)`, `coordinator(group)`;
    every helper of `Broker` works on the cluster. Options as `Broker`'s.
    """

    def __init__(self, brokers: int = 3, **options: Any) -> None:
        if not isinstance(brokers, int) or brokers < 1:
            raise BrokerError("a cluster needs brokers >= 1")
        if options.get("port", 0) != 0:
            raise BrokerError("a cluster's brokers listen on ephemeral ports: leave port out")
        super().__init__(**options)
        self._options["brokers"] = brokers

    def nodes(self) -> dict[int, str]:
        """Node id -> "host:port" of every broker, stopped ones included."""
        return self._call("nodes")

    def live_nodes(self) -> list[int]:
        """The node ids of the brokers not stopped."""
        return self._call("live_nodes")

    def leader(self, topic: str, partition: int) -> int:
        """The node leading the partition now."""
        return self._call("leader", topic, partition)

    def leader_epoch(self, topic: str, partition: int) -> int:
        """The partition's leader epoch (bumped by every move)."""
        return self._call("leader_epoch", topic, partition)

    def coordinator(self, group: str) -> int:
        """The node coordinating the group now."""
        return self._call("coordinator", group)

    def stop_broker(self, node: int) -> None:
        """Node `node` goes away: its connections are closed and new ones refused; the partitions it
        led move to live brokers (leader epoch bumped), its groups to other coordinators."""
        self._call("stop_broker", node)

    def start_broker(self, node: int) -> None:
        """Node `node` is back; leadership stays where it went until moved."""
        self._call("start_broker", node)

    def move_leader(self, topic: str, partition: int, to: int) -> int:
        """The partition's leadership moves to node `to`; returns the new leader epoch."""
        return self._call("move_leader", topic, partition, to)

    def move_coordinator(self, group: str, to: int) -> None:
        """The group's coordinator moves to node `to`; its members find it again."""
        self._call("move_coordinator", group, to)


def _reason(exc: BaseException | None) -> str:
    if exc is None:
        return "timed out"
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return str(exc) or type(exc).__name__
