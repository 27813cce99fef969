"""Drives the domain's share groups (KIP-932) from Trio: the clock, lock expiry, waking parked fetches.

Every call takes the time from the broker's clock. `run` is the share groups' maintenance timer: it
sleeps until the next record-lock deadline or member session deadline (or until a call changes them),
then ticks the domain, which releases expired locks and fences silent members (releasing what they
held). Whenever records become available again, the long-polling ShareFetch requests parked on those
partitions are woken through the broker's `AppendNotifier`, as new records wake them.

The runtime is a participant of the broker's unit of work (ADR 79): reaching the share groups through
it (`groups`) enlists it, and the commit that follows the call writes what the groups queued (their
records to `__consumer_offsets`, the share-partitions' state, dead-letter copies) through the
`ShareWrites` the wiring gives, then wakes the fetches on released records and re-arms the timer.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable
from typing import Protocol

import attrs
import trio

from trafka.domain.groups.modern import HeartbeatAnswer
from trafka.domain.groups.share import Archived, ShareGroups, ShareHeartbeat
from trafka.domain.topics import TopicPartition

from .unit_of_work import UnitOfWork

log = logging.getLogger("trafka.groups")


class Wakes(Protocol):
    """What the runtime needs of the broker's `AppendNotifier`: to wake what waits on partitions."""

    def notify(self, partitions: Iterable[TopicPartition]) -> None: ...


@attrs.frozen
class ShareWrites:
    """Where what share groups decide is written (wired by the composition root)."""

    records: Callable[[ShareGroups], None]  # the groups' records to `__consumer_offsets`
    state: Callable[[ShareGroups], None]  # the changed share-partitions' snapshots (the ShareStateStore)
    dead_letters: Callable[[list[tuple[str, TopicPartition, Archived]]], int]  # KIP-1191's copies
    dead_letter_prefix: str = "dlq."  # KIP-1191's errors.deadletterqueue.topic.name.prefix


class ShareRuntime:
    def __init__(
        self,
        groups: ShareGroups,
        clock_ms: Callable[[], int],
        appends: Wakes,
        unit_of_work: UnitOfWork,
        writes: ShareWrites | None = None,
        seconds_until: Callable[[int], float] | None = None,
    ) -> None:
        """`writes`: None keeps the share groups in memory only. `seconds_until(deadline_ms)`: how long
        to sleep for a deadline (a manual clock says 0 or forever, and calls `touched` when it moves);
        by default the wall-clock difference."""
        self._groups = groups
        self.clock_ms = clock_ms
        self._appends = appends
        self._uow = unit_of_work
        self.writes = writes
        self._seconds_until = seconds_until or (lambda deadline: (deadline - clock_ms()) / 1000)
        self._deadlines_changed = trio.Event()
        self.dead_letter_prefix = writes.dead_letter_prefix if writes is not None else "dlq."
        # whether copies are written now: share.version 2 finalized (Kafka's supportsShareGroupDLQ), when wired
        self.dead_letters_enabled: Callable[[], bool] = lambda: True

    @property
    def groups(self) -> ShareGroups:
        """The domain's share groups; reaching them enlists the runtime in the unit of work."""
        self._uow.seen(self)
        return self._groups

    def lock_duration_ms(self, group_id: str) -> int:
        return self._groups.record_lock_duration_ms(group_id)

    def heartbeat(self, request: ShareHeartbeat) -> HeartbeatAnswer:
        answer = self.groups.coordinator.heartbeat(request, self.clock_ms())
        self._groups.settle_departures()
        return answer

    def write(self) -> None:
        """The unit of work's write: dead-letter copies of what was archived, the groups' records, the
        share-partitions' state."""
        groups = self._groups
        archived = groups.take_archived()
        if self.writes is None:
            return
        if archived and self.dead_letters_enabled():
            self.writes.dead_letters(archived)
        try:
            self.writes.records(groups)
        except OSError as exc:
            log.warning("share group records could not be written: %s", exc)
        if groups.unpersisted:
            self.writes.state(groups)

    def wake(self) -> None:
        """The unit of work's wake: fetches on partitions with released records, then the timer."""
        released = self._groups.take_released()
        if released:
            self._appends.notify(released)
        self._deadlines_changed.set()

    def settled(self) -> None:
        """After a change made to the share groups outside any room (the console): written and woken now."""
        self._uow.seen(self)
        self._uow.commit()

    def connection_closed(self, connection: object) -> None:
        """A client connection closed: its share sessions close and release what they held."""
        if self._groups.connection_closed(connection):
            self.settled()

    def touched(self) -> None:
        """The clock moved (a manual clock's `advance`): deadlines may have passed."""
        self._deadlines_changed.set()

    async def run(self) -> None:
        while True:
            self._deadlines_changed = trio.Event()
            deadline = self._groups.next_deadline()
            delay = math.inf if deadline is None else self._seconds_until(deadline)
            if delay > 0:
                with trio.move_on_after(delay):
                    await self._deadlines_changed.wait()
            else:
                await trio.lowlevel.checkpoint()
            released = self._groups.tick(self.clock_ms())
            if released:
                log.debug("share groups: %d records released after their lock expired", released)
            self.settled()
