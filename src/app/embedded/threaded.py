"""The broker in a background thread (`Broker`, `Cluster`), so sync, asyncio and Trio tests all use it;
each helper runs inside the broker's loop through `trio.from_thread`.

Every broker of a process runs in one Trio loop on one daemon thread, started with the first broker
(ADR 126): a later `Broker()` is a task in that loop, not a thread and a loop of its own, so it starts
in the time its listener and services take (a thread and `trio.run` were about half of it). A broker
that fails is its own task's failure: the others keep running."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Self

import trio

from . import intercepting
from .opening import embedded_settings, open_broker
from .running import BrokerError, Record, RunningBroker


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
        self._done: threading.Event | None = None
        self._stop: trio.Event | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self, timeout: float = 30.0) -> Self:
        if self._done is not None:
            raise BrokerError("the broker is already started")
        ready, done = threading.Event(), threading.Event()
        failure: list[BaseException] = []
        scope, stop = trio.CancelScope(), trio.Event()

        async def serve() -> None:
            try:
                with scope:
                    async with open_broker(**self._options) as running:
                        self._running = running
                        ready.set()
                        await stop.wait()
            except Exception as exc:  # reported by start(), or lost after a stop
                failure.append(exc)
            finally:
                self._running = None
                ready.set()
                done.set()

        host = _Host.get()
        self._done, self._token, self._stop = done, host.token, stop
        try:
            host.token.run_sync_soon(host.spawn, serve)
        except trio.RunFinishedError:  # the host loop ended under us (interpreter shutdown): no task ran
            ready.set()
            done.set()
        if not ready.wait(timeout) or self._running is None:
            with contextlib.suppress(trio.RunFinishedError):
                host.token.run_sync_soon(scope.cancel)
            done.wait(timeout)
            self._done = self._token = None
            cause = failure[0] if failure else None
            raise BrokerError(f"the broker did not start: {_reason(cause)}") from cause
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop gracefully: in-flight requests answered, connections closed, its task ended."""
        done, self._done = self._done, None
        if done is None:
            return
        if self._token is not None and self._stop is not None:
            with contextlib.suppress(trio.RunFinishedError):
                self._token.run_sync_soon(self._stop.set)
        done.wait(timeout)
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


class _Host:
    """The Trio loop, on a daemon thread, that runs every broker of the process as a task."""

    _current: _Host | None = None
    _lock = threading.Lock()
    spawn: Callable[..., object]
    token: trio.lowlevel.TrioToken

    def __init__(self) -> None:
        ready = threading.Event()

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                self.spawn = nursery.start_soon
                self.token = trio.lowlevel.current_trio_token()
                ready.set()
                await trio.sleep_forever()

        self._thread = threading.Thread(target=trio.run, args=(main,), name="trafka-brokers", daemon=True)
        self._thread.start()
        ready.wait()

    @classmethod
    def get(cls) -> _Host:
        with cls._lock:
            if cls._current is None or not cls._current._thread.is_alive():
                cls._current = cls()
            return cls._current

    @classmethod
    def forget(cls) -> None:
        """In a forked child: the parent's host thread is not there."""
        cls._current = None
        cls._lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_Host.forget)


def _reason(exc: BaseException | None) -> str:
    if exc is None:
        return "timed out"
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return str(exc) or type(exc).__name__
