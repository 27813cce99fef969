"""Drives the domain's share groups (KIP-932) from Trio: the clock, lock expiry, waking parked fetches.

Every call takes the time from the broker's clock. `run` is the share groups' maintenance timer: it
sleeps until the next record-lock deadline or member session deadline (or until a call changes them),
then ticks the domain, which releases expired locks and fences silent members (releasing what they
held). Whenever records become available again, the long-polling ShareFetch requests parked on those
partitions are woken through the broker's `AppendNotifier`, as new records wake them.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable
from typing import Protocol

import trio

from trafka.domain.groups.modern import HeartbeatAnswer
from trafka.domain.groups.share import Archived, ShareGroups, ShareHeartbeat
from trafka.domain.topics import TopicPartition

log = logging.getLogger("trafka.groups")


class Wakes(Protocol):
    """What the runtime needs of the broker's `AppendNotifier`: to wake what waits on partitions."""

    def notify(self, partitions: Iterable[TopicPartition]) -> None: ...


class ShareRuntime:
    def __init__(
        self,
        groups: ShareGroups,
        clock_ms: Callable[[], int],
        appends: Wakes,
        seconds_until: Callable[[int], float] | None = None,
    ) -> None:
        """`seconds_until(deadline_ms)`: how long to sleep for a deadline (a manual clock says 0 or
        forever, and calls `touched` when it moves); by default the wall-clock difference."""
        self.groups = groups
        self.clock_ms = clock_ms
        self._appends = appends
        self._seconds_until = seconds_until or (lambda deadline: (deadline - clock_ms()) / 1000)
        self._deadlines_changed = trio.Event()
        self.persist: Callable[[ShareGroups], None] | None = None  # durability, when wired
        # the groups' records to `__consumer_offsets` (membership, epochs, assignments), when wired
        self.write_records: Callable[[ShareGroups], None] | None = None
        # KIP-1191: archived records to the groups' dead-letter topics, when wired
        self.dead_letters: Callable[[list[tuple[str, TopicPartition, Archived]]], int] | None = None
        self.dead_letter_prefix = "dlq."  # KIP-1191's errors.deadletterqueue.topic.name.prefix
        # whether copies are written now: share.version 2 finalized (Kafka's supportsShareGroupDLQ), when wired
        self.dead_letters_enabled: Callable[[], bool] = lambda: True

    def lock_duration_ms(self, group_id: str) -> int:
        return self.groups.record_lock_duration_ms(group_id)

    def heartbeat(self, request: ShareHeartbeat) -> HeartbeatAnswer:
        answer = self.groups.coordinator.heartbeat(request, self.clock_ms())
        self.groups.settle_departures()
        self.settled()
        return answer

    def settled(self) -> None:
        """After any change: wake fetches on partitions with released records, write the groups'
        records and the share-partitions' state, re-arm the timer."""
        released = self.groups.take_released()
        if released:
            self._appends.notify(released)
        archived = self.groups.take_archived()
        if archived and self.dead_letters is not None and self.dead_letters_enabled():
            self.dead_letters(archived)
        if self.write_records is not None:
            try:
                self.write_records(self.groups)
            except OSError as exc:
                log.warning("share group records could not be written: %s", exc)
        if self.persist is not None and self.groups.unpersisted:
            self.persist(self.groups)
        self._deadlines_changed.set()

    def connection_closed(self, connection: object) -> None:
        """A client connection closed: its share sessions close and release what they held."""
        if self.groups.connection_closed(connection):
            self.settled()

    def touched(self) -> None:
        """The clock moved (a manual clock's `advance`): deadlines may have passed."""
        self._deadlines_changed.set()

    async def run(self) -> None:
        while True:
            self._deadlines_changed = trio.Event()
            deadline = self.groups.next_deadline()
            delay = math.inf if deadline is None else self._seconds_until(deadline)
            if delay > 0:
                with trio.move_on_after(delay):
                    await self._deadlines_changed.wait()
            else:
                await trio.lowlevel.checkpoint()
            released = self.groups.tick(self.clock_ms())
            if released:
                log.debug("share groups: %d records released after their lock expired", released)
            self.settled()
