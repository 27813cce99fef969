"""Drives the sans-I/O group coordinator from Trio: waiting requests and the coordinator's clock.

A JoinGroup or SyncGroup that the coordinator cannot answer at once carries a `GroupAnswer` as its
token, which the room parks in the broker's purgatory (ADR 80); when a later call (or a timeout in
`run`) decides its answer, the commit after that call sets it and notifies the purgatory, which
answers the parked request right there. `run` sleeps until the coordinator's next deadline, or until a call
changes the deadlines, and then feeds it the time. The runtime is a participant of the broker's unit of
work (ADR 79): each call enlists it and queues what it released; the commit that follows every call
(the room's, or the timer's own) writes the group metadata and KIP-848 records the coordinators queued
to `__consumer_offsets`, then delivers the released answers and re-arms the timer.

A call that releases other members' waiting requests (the JoinGroup that completes a round, the
leader's SyncGroup) is answered after them, not ahead: the commit that follows it writes their answers
first (from the purgatory, in the calling task), and its own answer is queued only after that. Kafka
sends every member's answer at once when a round completes. Answered first, the leader could sync,
revoke partitions and rejoin (KIP-429) before a follower even had its JoinGroup answer, whose SyncGroup
for that generation then finds the next rebalance under way (REBALANCE_IN_PROGRESS) and which never
sees the generation's assignment: librdkafka's 0113 cooperative test waits for it forever.

KIP-848 consumer groups (`consumer`, the domain's ConsumerGroupCoordinator) answer every
ConsumerGroupHeartbeat at once; this runtime gives them the time and ticks them with the classic
groups, so their session and rebalance timeouts are driven by the same loop. A classic request for a
consumer group (a classic member inside it, ADR 50) goes to the consumer coordinator and is answered at
once; an online upgrade or downgrade may answer other waiting classic requests and writes both
coordinators' records. Regex subscriptions are resolved by a task of `run`: when the coordinator
wants patterns resolved, RE2 matches them against the topic names in a worker thread and the
coordinator is fed the matches (ADR 68).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Protocol

import trio

from trafka.domain.errors import ErrorCode
from trafka.domain.groups import (
    CommitRequest,
    Completion,
    GroupCoordinator,
    JoinRequest,
    JoinResult,
    OffsetManager,
    SyncRequest,
    SyncResult,
)
from trafka.domain.topics import TopicPartition

from .topic_regexes import TopicRegexes
from .unit_of_work import UnitOfWork

if TYPE_CHECKING:
    from trafka.domain.groups.modern import ConsumerGroupCoordinator, ConsumerHeartbeat, HeartbeatAnswer
    from trafka.domain.groups.streams import StreamsAnswer, StreamsGroupCoordinator, StreamsHeartbeat

log = logging.getLogger("trafka.groups")


class GroupAnswer:
    """A join or sync the coordinator will answer later: the key it is parked on in the purgatory."""

    __slots__ = ("result", "answer_type")

    def __init__(self, answer_type: type[JoinResult] | type[SyncResult]) -> None:
        self.result: JoinResult | SyncResult | None = None
        self.answer_type = answer_type


class Wakes(Protocol):
    """What the runtime needs of the broker's purgatory: to wake the requests parked on keys."""

    def notify(self, keys: Iterable[Hashable]) -> None: ...


class GroupRuntime:
    def __init__(
        self,
        coordinator: GroupCoordinator,
        offsets: OffsetManager,
        clock_ms: Callable[[], int],
        unit_of_work: UnitOfWork,
        parked: Wakes,
        seconds_until: Callable[[int], float] | None = None,
        consumer: ConsumerGroupCoordinator | None = None,
        streams: StreamsGroupCoordinator | None = None,
        build_streams: Callable[[], StreamsGroupCoordinator] | None = None,
        build_consumer: Callable[[], ConsumerGroupCoordinator] | None = None,
    ) -> None:
        """`seconds_until(deadline_ms)`: how long to sleep for a deadline (a manual clock says 0 or
        forever, and calls `touched` when it moves); by default the wall-clock difference. `consumer`:
        the KIP-848 coordinator, None when `group.coordinator.rebalance.protocols` leaves it out or when
        `build_consumer` builds it at its first use (ADR 118)."""
        self.coordinator = coordinator
        self.offsets = offsets
        self.clock_ms = clock_ms
        self._seconds_until = seconds_until or (lambda deadline: (deadline - clock_ms()) / 1000)
        self._consumer = consumer  # KIP-848 consumer groups, once built
        self._build_consumer = build_consumer  # builds them at their first use (ADR 118), when not given
        self._nursery: trio.Nursery | None = None  # where `run` starts the regex task of one built later
        self._streams = streams  # KIP-1071 streams groups, once built
        self._build_streams = build_streams  # builds them at their first use (ADR 110), when not given
        self._deadlines_changed = trio.Event()
        self._waiting: set[GroupAnswer] = set()
        self._parked = parked
        self.regexes = TopicRegexes()
        self._regex_work = trio.Event()
        self._uow = unit_of_work
        self._released: list[Completion] = []  # answers decided by a call, delivered by `wake`
        self._forgotten: list[str] = []  # deleted consumer groups whose offsets go after their tombstones
        self._regexes_asked = False

    @property
    def consumer(self) -> ConsumerGroupCoordinator | None:
        """The KIP-848 coordinator (None when `group.coordinator.rebalance.protocols` leaves it out), built at
        its first use (ADR 118): a consumer group heartbeat, ListGroups, a GROUP config. The runtime's own
        steps read `_consumer`: before it is built there is no consumer group to tend."""
        if self._consumer is None and self._build_consumer is not None:
            self._consumer, self._build_consumer = self._build_consumer(), None
            if self._nursery is not None:
                self._nursery.start_soon(self._resolve_regexes, self._consumer)
            self._deadlines_changed.set()  # its deadlines join the timer's
        return self._consumer

    def has_consumer_members(self, group_id: str) -> bool:
        """Does a consumer group `group_id` have members (its offsets then stay)? False before it is built."""
        return self._consumer is not None and self._consumer.has_members(group_id)

    @property
    def streams(self) -> StreamsGroupCoordinator | None:
        """The KIP-1071 coordinator, built at its first use (ADR 110): a broker never sent a streams group
        request imports none of it. The runtime's own steps read `_streams`: nothing to do before it."""
        if self._streams is None and self._build_streams is not None:
            self._streams, self._build_streams = self._build_streams(), None
        return self._streams

    def _deliver(self, completions: Iterable[Completion]) -> None:
        """Queue answers a call decided: delivered by `wake`, once the commit has written the records."""
        self._uow.seen(self)
        self._released.extend(completions)

    def write(self) -> None:
        """The unit of work's write: the classic coordinator's group metadata, then the KIP-848
        coordinator's records, the streams coordinator's (and the offsets of the consumer and streams
        groups deleted, after their tombstones)."""
        records = self.coordinator.take_metadata_records()
        if records:
            try:
                self.offsets.store_group_metadata(records)
            except OSError as exc:
                # As Kafka when it cannot write an empty group's metadata: the group goes on in memory, and
                # a restart before its next generation brings back the previous one, whose members rejoin.
                log.warning(
                    "group metadata of %s could not be written: %s", ", ".join(r.group_id for r in records), exc
                )
        consumer_records = self._consumer.take_records() if self._consumer is not None else None
        if consumer_records:
            try:
                self.offsets.store_consumer_group_records(consumer_records)
            except OSError as exc:
                log.warning("consumer group records could not be written: %s", exc)
        streams_records = self._streams.take_records() if self._streams is not None else None
        if streams_records:
            try:
                self.offsets.store_streams_group_records(streams_records)
            except OSError as exc:
                log.warning("streams group records could not be written: %s", exc)
        forgotten, self._forgotten = self._forgotten, []
        for group_id in forgotten:
            self.offsets.forget_group(group_id)

    def wake(self) -> None:
        """The unit of work's wake: the answers the call released, then the timer (and the regex task)."""
        completions, self._released = self._released, []
        if self._consumer is not None:
            completions += self._consumer.take_completions()  # an upgrade answers the classic group's waiters
        answered = []
        for completion in completions:
            waiter = completion.token
            assert isinstance(waiter, GroupAnswer)
            waiter.result = completion.result
            self._waiting.discard(waiter)
            answered.append(waiter)
        if answered:
            self._parked.notify(answered)
        self._deadlines_changed.set()
        if self._regexes_asked:
            self._regexes_asked = False
            self._regex_work.set()

    def _call(self, answer_type, call: Callable[[GroupAnswer], list[Completion]]):
        """Run a coordinator call: its result if the coordinator decided it (the other answers it
        released are written by the commit that follows, before this one), else the `GroupAnswer` to
        park on."""
        waiter = GroupAnswer(answer_type)
        completions = call(waiter)
        own = [c for c in completions if c.token is waiter]
        self._deliver([c for c in completions if c.token is not waiter])
        if own:
            return own[0].result
        self._waiting.add(waiter)
        return waiter

    def join(self, request: JoinRequest) -> JoinResult | GroupAnswer:
        if self._consumer is not None:
            if self._consumer.hosts_classic_join(request.group_id):
                return self._classic_in_consumer(lambda c, now: c.classic_members.join(request, now))
            self._consumer.give_way_to_classic(request.group_id)
        return self._call(JoinResult, lambda waiter: self.coordinator.join(request, self.clock_ms(), waiter))

    def sync(self, request: SyncRequest) -> SyncResult | GroupAnswer:
        if self.is_consumer_group(request.group_id):
            return self._classic_in_consumer(lambda c, now: c.classic_members.sync(request, now))
        return self._call(SyncResult, lambda waiter: self.coordinator.sync(request, self.clock_ms(), waiter))

    def heartbeat(self, group_id: str, member_id: str, generation_id: int, instance_id: str | None):
        if self.is_consumer_group(group_id):
            return self._classic_in_consumer(
                lambda c, now: c.classic_members.heartbeat(group_id, member_id, generation_id, now, instance_id)
            )
        error = self.coordinator.heartbeat(group_id, member_id, generation_id, self.clock_ms(), instance_id)
        self._uow.seen(self)
        return error

    def leave(self, group_id: str, members: list[tuple[str, str | None]]):
        if self.is_consumer_group(group_id):
            return self._classic_in_consumer(lambda c, now: c.classic_members.leave(group_id, members, now))
        errors, completions = self.coordinator.leave(group_id, members, self.clock_ms())
        self._deliver(completions)
        return errors

    def _classic_in_consumer(self, call):
        """A classic member's request to a consumer group (ADR 50): answered at once, its records
        (and a downgrade's classic group) written first."""
        assert self._consumer is not None
        result = call(self._consumer, self.clock_ms())
        self._uow.seen(self)
        return result

    def consumer_heartbeat(self, request: ConsumerHeartbeat) -> HeartbeatAnswer:
        consumer = self.consumer  # built at the first consumer group heartbeat
        assert consumer is not None
        answer = consumer.heartbeat(request, self.clock_ms())
        self._regexes_asked = True
        self._uow.seen(self)
        return answer

    def streams_heartbeat(self, request: StreamsHeartbeat) -> StreamsAnswer:
        streams = self.streams  # built at the first streams group heartbeat
        assert streams is not None
        answer = streams.heartbeat(request, self.clock_ms())
        self._uow.seen(self)
        return answer

    def has_streams_members(self, group_id: str) -> bool:
        """Does a streams group `group_id` have members (its offsets then stay)? False before any is built."""
        return self._streams is not None and self._streams.has_members(group_id)

    def is_streams_group(self, group_id: str) -> bool:
        return self._streams is not None and group_id in self._streams.groups

    def is_consumer_group(self, group_id: str) -> bool:
        return self._consumer is not None and group_id in self._consumer.groups

    def commit(self, request: CommitRequest, version: int) -> dict[TopicPartition, ErrorCode]:
        """OffsetCommit: a consumer group's commits are checked against member epochs (v9+), as Kafka."""
        self._uow.seen(self)  # a commit heartbeats: member deadlines move
        if self._streams is not None and request.group_id in self._streams.groups:
            error = self._streams.validate_offset_commit(
                request.group_id, request.member_id, request.generation_id, version
            )
            return self.offsets.commit(request, self.clock_ms(), fenced=error)
        if self._consumer is not None and request.group_id in self._consumer.groups:
            error = self._consumer.validate_offset_commit(
                request.group_id, request.member_id, request.generation_id, version
            )
            return self.offsets.commit(request, self.clock_ms(), fenced=error)
        return self.offsets.commit(request, self.clock_ms())

    def txn_commit_fencing(
        self, group_id: str, member_id: str, generation_id: int, instance_id: str | None, now: int
    ) -> ErrorCode:
        """TxnOffsetCommit: a consumer or streams group's commit is checked against its member's epoch, a
        classic group's against its generation when it names a member (Kafka's validateOffsetCommit of each)."""
        if self._consumer is not None and group_id in self._consumer.groups:
            return self._consumer.validate_offset_commit(
                group_id, member_id, generation_id, version=-1, transactional=True, instance_id=instance_id
            )
        if self._streams is not None and group_id in self._streams.groups:  # Kafka Streams' exactly_once_v2
            return self._streams.validate_offset_commit(
                group_id, member_id, generation_id, version=-1, transactional=True, instance_id=instance_id
            )
        return self.coordinator.validate_offset_commit(
            group_id, member_id, generation_id, now, instance_id, transactional=True
        )

    def offset_fetch_error(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode:
        """OffsetFetch v9+: a member of a consumer or streams group must fetch with its current epoch."""
        if self._streams is not None and group_id in self._streams.groups:
            return self._streams.validate_offset_fetch(group_id, member_id, member_epoch)
        if self._consumer is None or group_id not in self._consumer.groups:
            return ErrorCode.NONE
        return self._consumer.validate_offset_fetch(group_id, member_id, member_epoch)

    def delete_group(self, group_id: str) -> ErrorCode:
        """DeleteGroups: an empty group of any protocol, and its committed offsets."""
        if self._streams is not None and group_id in self._streams.groups:
            error = self._streams.delete(group_id)
            if error is ErrorCode.NONE:
                self._forgotten.append(group_id)
                self._uow.seen(self)
            return error
        if self._consumer is not None and group_id in self._consumer.groups:
            error = self._consumer.delete(group_id)
            if error is ErrorCode.NONE:
                self._forgotten.append(group_id)
                self._uow.seen(self)
            return error
        return self.offsets.delete_group(group_id)

    def shutdown(self) -> None:
        """Answer every waiting join and sync with NOT_COORDINATOR, as Kafka does when it unloads a group."""
        waiting, self._waiting = list(self._waiting), set()
        for waiter in waiting:
            waiter.result = waiter.answer_type(ErrorCode.NOT_COORDINATOR)
        self._parked.notify(waiting)

    def touched(self) -> None:
        """A call outside this class changed member deadlines (an offset commit heartbeats)."""
        self._deadlines_changed.set()

    async def run(self) -> None:
        """Feed the coordinator the time whenever one of its deadlines passes; resolve regexes."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                if self._consumer is not None:
                    nursery.start_soon(self._resolve_regexes, self._consumer)
                await self._tick_forever()
        finally:
            self._nursery = None  # a coordinator built once the broker stopped has no task to start

    async def _resolve_regexes(self, consumer: ConsumerGroupCoordinator) -> None:
        while True:
            await self._regex_work.wait()
            self._regex_work = trio.Event()
            work = consumer.take_regex_work()
            if work is None:
                continue
            matches = await self.regexes.resolve(*work)
            consumer.regexes_resolved(matches, self.clock_ms())
            self._uow.seen(self)
            self._uow.commit()
            self._regex_work.set()  # anything asked for meanwhile

    async def _tick_forever(self) -> None:
        while True:
            self._deadlines_changed = trio.Event()
            deadlines = [self.coordinator.next_deadline()]
            if self._consumer is not None:
                deadlines.append(self._consumer.next_deadline())
            if self._streams is not None:
                deadlines.append(self._streams.next_deadline())
            deadline = min((d for d in deadlines if d is not None), default=None)
            delay = math.inf if deadline is None else self._seconds_until(deadline)
            if delay > 0:
                with trio.move_on_after(delay):
                    await self._deadlines_changed.wait()
            else:
                await trio.lowlevel.checkpoint()
            now = self.clock_ms()
            self._deliver(self.coordinator.tick(now))
            for group_id, member_id, why in self.coordinator.take_failed():
                log.info("group %s: member %s removed (%s)", group_id, member_id, why)
            if self._consumer is not None:
                for group_id, member_id in self._consumer.tick(now):
                    log.info("consumer group %s: member %s fenced (session or rebalance timeout)", group_id, member_id)
                self._regexes_asked = True
            if self._streams is not None:
                for group_id, member_id in self._streams.tick(now):
                    log.info("streams group %s: member %s fenced (session or rebalance timeout)", group_id, member_id)
            self._uow.commit()
