"""One way to wait (Kafka's `DelayedOperationPurgatory`, ADR 80): a request that cannot be answered yet
is parked on keys until a deadline, and this one runtime wakes, completes, forgets and expires it.

A room returns `Parked(keys, max_wait_ms, complete)` (api.py) instead of waiting itself: keys are the
partitions a Fetch or ShareFetch reads, or the token of a join or sync the group coordinator will
answer; a request an interceptor delays (`Held`) is parked with no key, for its deadline alone. The connection parks it here with the function that writes its answer into the connection's
outbox slot (`park`). Then:
- **waking**: `notify(keys)` (the replica manager after an append, the share groups after releasing
  records, the group runtime after deciding a join or sync) tries each operation parked on those keys
  right there, in the notifying task: `complete(False)` reads and gives the answer, which is written to
  the consumer at once, before the notifying request's own answer (ADR 58, now for every parked
  request), or None, and the operation stays parked on its keys for the next notify;
- **expiry**: one timer task (`run`) sleeps until the earliest deadline and completes what expired
  with `complete(True)`, which always answers;
- **forgetting**: an operation completed is removed from every key; one whose connection closed is
  dropped (`forget`). Its deadline stays in the timer's heap (lazily, as Kafka purges its watcher
  lists): the timer skips finished entries when it wakes, so neither an answer nor the next park moves
  the timer on the latency path (ADR 130), and the heap is compacted when finished entries outnumber
  the live ones, so a client answered at a high rate with a long `max_wait_ms` holds no memory;
- **early completion**: `notify_all` (transaction markers moving last stable offsets, shutdown)
  tries every parked operation.
After each round of completions the broker's unit of work commits (ADR 79): a ShareFetch that acquired
records in the appending task has its share state written before its answer is on the wire. Then, if
the round answered anything, the broker's thread hands its CPU over (`sched_yield`, ADR 135): the
`writev` of an answer wakes its client's thread on this CPU (the kernel's wake-affine placement), where
it would otherwise wait for everything the notifying request still does (its own answer, the next wait:
~50 µs at the latency bench's median); yielded to, it runs at once, and the broker goes on after it.

Trio events may still be registered on partitions (`waiter`): the embedded broker's record waits
use them; they are set before the operations are tried, and `woken` counts the notifies that set one.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
import os
from collections.abc import Callable, Hashable, Iterable
from typing import Any, Protocol

import trio

from ..api import Parked
from .unit_of_work import UnitOfWork

log = logging.getLogger(__name__)


class Waiter(Protocol):
    def set(self) -> None: ...


class Operation:
    """A parked request: tried at every notify of one of its keys until it answers, or expires."""

    __slots__ = ("parked", "deliver", "purgatory", "finished")

    def __init__(self, parked: Parked, deliver: Callable[[Any], None], purgatory: Purgatory) -> None:
        self.parked = parked
        self.deliver = deliver
        self.purgatory = purgatory
        self.finished = False

    def set(self) -> None:
        """One of its keys was notified: try it; still parked there if it has no answer yet."""
        if not self.finished:
            self.purgatory._try(self, False)  # not expired


_SCHED_YIELD: Callable[[], None] | None = getattr(os, "sched_yield", None)  # POSIX; None elsewhere


class Purgatory:
    def __init__(
        self, unit_of_work: UnitOfWork | None = None, hand_over: Callable[[], None] | None = _SCHED_YIELD
    ) -> None:
        self._waiters: dict[Hashable, set[Waiter]] = {}
        self._deadlines: list[tuple[float, int, Operation]] = []  # (trio time, order, operation)
        self._order = itertools.count()
        self._timer: trio.CancelScope | None = None  # the timer's sleep, its deadline the heap's earliest
        self._timed = 0  # live operations with a deadline: the heap holds these and finished ones
        self.unit_of_work = unit_of_work or UnitOfWork()
        self.woken = 0  # how many notifies set an event (the reader lets those tasks answer first)
        self._hand_over = hand_over  # after a round of notifies that answered: the CPU to the woken clients
        self._answers = 0  # `deliver` calls with an answer, ever: a round compares it with its start's

    # -- parking ------------------------------------------------------------------------------------

    def park(self, parked: Parked, deliver: Callable[[Any], None]) -> Operation:
        """Watch `parked`'s keys; `deliver(answer)` once it completes or expires (never twice). The room
        tried it once already (it returned `Parked` because it had no answer), so it is not tried here."""
        op = Operation(parked, deliver, self)
        waiters = self._waiters
        for key in parked.keys:
            waiting = waiters.get(key)
            if waiting is None:  # no empty set made per park when the key has one
                waiters[key] = {op}
            else:
                waiting.add(op)
        if parked.max_wait_ms is not None:
            deadline = trio.current_time() + parked.max_wait_ms / 1000
            deadlines = self._deadlines
            heapq.heappush(deadlines, (deadline, next(self._order), op))
            self._timed += 1
            timer = self._timer
            if timer is not None and deadline < timer.deadline:
                timer.deadline = deadline  # moved, not woken (rarely: the heap's earliest is usually sooner)
            elif len(deadlines) > _COMPACT_FROM and len(deadlines) > 2 * self._timed:
                deadlines[:] = [entry for entry in deadlines if not entry[2].finished]  # in place: `run` holds it
                heapq.heapify(deadlines)
        return op

    def forget(self, op: Operation) -> None:
        """Drop a parked operation unanswered (its connection closed)."""
        if not op.finished:
            self._finish(op)
            op.deliver = _delivered

    def _finish(self, op: Operation) -> None:
        """Answered or dropped: off its keys. Its deadline stays in the heap, finished: the timer skips it
        when it wakes (a Trio deadline moved per answer and again per park cost more than a spurious
        wake per `max_wait_ms`), and `park` compacts the heap when finished entries dominate."""
        op.finished = True
        parked = op.parked
        self._unwatch(op, parked.keys)
        if parked.max_wait_ms is not None:
            self._timed -= 1
        # The heap keeps the operation until the timer passes its deadline: without the request (its
        # completion's closure, the decoded request, the connection's `deliver`), which reference
        # counting frees now. Kept, ~27 objects per parked Fetch lived up to `max_wait_ms`, a young
        # collection every ~28 fetches of a consumer at the tail (ADR 132).
        op.parked = _DONE

    def _unwatch(self, waiter: Waiter, keys: Iterable[Hashable]) -> None:
        for key in keys:
            waiting = self._waiters.get(key)
            if waiting is not None:
                waiting.discard(waiter)
                if not waiting:
                    del self._waiters[key]

    # -- Trio events (the embedded broker's waits) --------------------------------------------------

    def waiter(self, partitions: Iterable[Hashable]) -> trio.Event:
        """An event set by the next notify of any of `partitions` (take it before reading the logs)."""
        event = trio.Event()
        self.add(event, partitions)
        return event

    def add(self, waiter: Waiter, keys: Iterable[Hashable]) -> None:
        """`waiter.set()` at the next notify of any of `keys` (once: it is then forgotten there)."""
        for key in keys:
            self._waiters.setdefault(key, set()).add(waiter)

    def forget_waiter(self, waiter: Waiter, keys: Iterable[Hashable]) -> None:
        self._unwatch(waiter, keys)

    # -- waking -------------------------------------------------------------------------------------

    def notify(self, keys: Iterable[Hashable]) -> None:
        """Something happened on `keys` (records appended or released, a group's answer decided): set
        their events, then try their operations, here in the notifying task."""
        waiters = self._waiters
        if not waiters:  # nothing parked: the common case while producers are busy
            return
        operations: dict[Waiter, None] = {}
        for key in keys:
            waiting = waiters.pop(key, None)
            if waiting:
                self._set(waiting, operations)
        if operations:
            self._run(operations)

    def notify_all(self) -> None:
        waiters, self._waiters = self._waiters, {}
        operations: dict[Waiter, None] = {}
        for waiting in waiters.values():
            self._set(waiting, operations)
        if operations:
            self._run(operations)

    def _set(self, waiting: set[Waiter], operations: dict[Waiter, None]) -> None:
        woke = False
        for waiter in waiting:
            if type(waiter) is trio.Event:
                waiter.set()
                woke = True
            else:
                operations[waiter] = None
        if woke:
            self.woken += 1

    def _run(self, operations: Iterable[Waiter]) -> None:
        answers = self._answers  # a count, not a flag: a round run within another's delivery keeps both right
        for op in operations:
            if type(op) is Operation:  # `Operation.set` without its frame (the latency path, ADR 135)
                if not op.finished:
                    self._try(op, False)
            else:
                op.set()
        self.unit_of_work.commit()
        if self._answers != answers:  # an answer was written: its client's thread runs now, not after this
            hand_over = self._hand_over
            if hand_over is not None:
                hand_over()

    def _try(self, op: Operation, expired: bool) -> None:
        parked = op.parked
        try:
            answer = parked.complete(expired)
            if answer is None and expired:
                raise AssertionError("a parked request gave no answer at its deadline")
        except Exception as exc:  # this request's connection ends, not the notifying one's (or the timer)
            self._finish(op)
            deliver, op.deliver = op.deliver, _delivered
            deliver(Failed(exc))
            return
        if answer is None:
            self.add(op, parked.keys)  # the keys notified dropped it: watched again for the next notify
            return
        # The answer leaves first (ADR 121): for a Fetch its `writev` wakes the consumer, the latency
        # path; taking the operation off its other keys and the timer follows. Marked finished before,
        # so nothing tries it again meanwhile. The connection's `deliver` refers to its operation (to
        # forget it): dropped here, that cycle is freed by reference counting, not left for the
        # collector (a collection every ~20 fetches).
        op.finished = True
        deliver, op.deliver = op.deliver, _delivered
        self._answers += 1
        try:
            deliver(answer)
        finally:
            self._finish(op)

    # -- expiry -------------------------------------------------------------------------------------

    async def run(self) -> None:
        """The purgatory's timer: complete each operation whose deadline passed (`complete(True)`). It
        sleeps in a cancel scope whose deadline is the heap's earliest: a park moves it earlier (when it
        is sooner), an answer does not move it; it wakes when that deadline passes, completes what
        expired, skips what was answered meanwhile and sleeps until the next."""
        deadlines = self._deadlines
        while True:
            while deadlines and deadlines[0][2].finished:
                heapq.heappop(deadlines)
            with trio.CancelScope(deadline=deadlines[0][0] if deadlines else math.inf) as timer:
                self._timer = timer
                await trio.sleep_forever()
            self._timer = None
            now = trio.current_time()
            while deadlines and deadlines[0][0] <= now:
                _, _, op = heapq.heappop(deadlines)
                if not op.finished:
                    self._try(op, expired=True)
            self.unit_of_work.commit()


def _never(expired: bool) -> None:
    raise AssertionError("a finished operation was tried")


_DONE = Parked((), None, _never)  # a finished operation's request: nothing is kept for the heap's sake

_COMPACT_FROM = 64  # heap entries below which finished ones are left for the timer to skip


def _delivered(answer: Any) -> None:
    """An operation's `deliver` once it was called (or can no longer be): never called twice."""
    raise AssertionError("a parked request answered twice")


class Failed:
    """What a parked operation's `complete` raised: its connection is closed after the answers before it."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error
