"""A connection's responses, written strictly in request order, by whichever task has them ready.

Most responses are ready when their handler returns; a long-poll Fetch fills its slot later from a
task of its own. `Outbox.flush` writes every ready slot at the head of the queue in one `send` and
stops at the first that is still waiting; the reader flushes when it has handled every complete
frame it holds (so pipelined requests leave in one write), and a deferred response flushes when it
completes. There is no writer task: a small request costs no channel, no task switch and no event.

Only one flush writes at a time (a second caller returns: the running one loops until the head is
waiting). A slot that ends with no bytes (a handler or encoder failure) ends the connection after
the responses before it, as `ConnectionAborted`.

Backpressure: the reader waits in `wait_for_room` while `max_inflight` responses are queued or their
bytes exceed the budget, so a client that pipelines without reading its responses stops being read,
and one that never reads holds at most about one response over the budget.
"""

from __future__ import annotations

from collections import deque

import trio

from .transport import Transport


class ConnectionAborted(Exception):
    """A handler failed; the connection ends after the responses before it."""


class Slot:
    """One response position: filled at once, or later by a deferred handler's task."""

    __slots__ = ("data", "ready", "_outbox")

    def __init__(self, outbox: Outbox) -> None:
        self.data: list[bytes] | None = None
        self.ready = False
        self._outbox = outbox

    def fill(self, data: list[bytes] | None) -> None:
        """The response's buffers (one frame, possibly in pieces), or None: the connection ends here."""
        self.data = data
        self.ready = True
        if data is not None:
            self._outbox.queued_bytes += sum(map(len, data))
        self._outbox.slot_ready()


class Outbox:
    def __init__(self, transport: Transport, max_inflight: int, max_queued_bytes: int) -> None:
        self._transport = transport
        self._slots: deque[Slot] = deque()
        self._max_inflight = max_inflight
        self._max_queued_bytes = max_queued_bytes
        self.queued_bytes = 0
        self._writing = False
        self._changed = trio.Event()
        self._waiting = 0  # tasks in _wait_changed: only then must a change set the event

    def slot(self) -> Slot:
        slot = Slot(self)
        self._slots.append(slot)
        return slot

    def add(self, data: list[bytes] | None) -> None:
        """Queue a response that is ready now (the common case, so no Slot method is called)."""
        slot = Slot.__new__(Slot)
        slot.data = data
        slot.ready = True
        self._slots.append(slot)
        if data is not None:
            self.queued_bytes += len(data[0]) if len(data) == 1 else sum(map(len, data))
        if self._waiting:
            self._changed.set()

    def slot_ready(self) -> None:
        if self._waiting:
            self._changed.set()

    @property
    def room(self) -> int:
        """Responses that can still be queued before the reader must wait."""
        return self._max_inflight - len(self._slots)

    @property
    def pending(self) -> bool:
        """Whether a response is still to be written (or, deferred, to come)."""
        return bool(self._slots)

    @property
    def head_ready(self) -> bool:
        """Whether the response at the head is ready to be written (or failed) and no flush is writing."""
        return bool(self._slots) and self._slots[0].ready and not self._writing

    @property
    def full(self) -> bool:
        return len(self._slots) >= self._max_inflight or self.queued_bytes >= self._max_queued_bytes

    async def wait_for_room(self) -> None:
        while self.full:
            await self.flush()
            if self.full:
                await self._wait_changed()

    async def flush(self) -> None:
        """Write the ready responses at the head of the queue; ConnectionAborted at a failed one."""
        if self._writing:
            return
        self._writing = True
        try:
            slots = self._slots
            while slots and slots[0].ready:
                if len(slots) == 1:  # one response (a lone request's): its own buffers, no gathering
                    data = slots.popleft().data
                    if data is None:
                        raise ConnectionAborted
                    await self._transport.send(data)
                    self.queued_bytes -= len(data[0]) if len(data) == 1 else sum(map(len, data))
                    if self._waiting:
                        self._changed.set()
                    continue  # what was queued behind it while `send` waited
                buffers = []
                aborted = False
                while slots and slots[0].ready:
                    data = slots.popleft().data
                    if data is None:
                        aborted = True
                        break
                    buffers.extend(data)
                if buffers:
                    await self._transport.send(buffers)
                    self.queued_bytes -= sum(map(len, buffers))
                    if self._waiting:
                        self._changed.set()
                if aborted:
                    raise ConnectionAborted
        finally:
            self._writing = False

    def flush_nowait(self) -> None:
        """`flush` without waiting, for a response completed outside the connection's tasks: the ready
        responses at the head go out as far as the socket takes them now; what it does not take stays
        at the head for the next `flush` (a deferred response's task always flushes after)."""
        if self._writing:
            return  # the running flush picks the newly ready responses up
        slots = self._slots
        buffers: list[bytes] = []
        while slots and slots[0].ready and slots[0].data is not None:
            data = slots.popleft().data
            assert data is not None
            buffers.extend(data)
        if not buffers:
            return
        rest = self._transport.send_nowait(buffers)
        self.queued_bytes -= sum(map(len, buffers)) - sum(map(len, rest))
        if rest:
            slot = Slot(self)
            slot.data = list(rest)  # type: ignore[arg-type]
            slot.ready = True
            slots.appendleft(slot)
        if self._waiting:
            self._changed.set()

    def answer_nowait(self, slot: Slot, data: list[bytes] | None) -> None:
        """`slot.fill(data)` then `flush_nowait()`, for a response completed outside the connection's
        tasks (a parked answer, ADR 58 and 80). When it is the only response queued and no flush is
        writing (a consumer at the log end), its buffers go to the socket at once, past the queue's
        bookkeeping (ADR 130); what the socket does not take stays in the slot, at the head."""
        slots = self._slots
        if data is None or self._writing or len(slots) != 1 or slots[0] is not slot:
            slot.fill(data)
            self.flush_nowait()
            return
        rest = self._transport.send_nowait(data)
        if rest:
            slot.data = list(rest)  # type: ignore[arg-type]
            slot.ready = True
            self.queued_bytes += sum(map(len, rest))
        else:
            slots.popleft()
        if self._waiting:
            self._changed.set()

    async def drain(self) -> None:
        """Write everything queued, waiting for deferred responses (at the end of a connection)."""
        while self._slots:
            await self.flush()
            if self._slots and (not self._slots[0].ready or self._writing):
                await self._wait_changed()

    async def _wait_changed(self) -> None:
        if self._changed.is_set():
            self._changed = trio.Event()
        self._waiting += 1
        try:
            await self._changed.wait()
        finally:
            self._waiting -= 1
