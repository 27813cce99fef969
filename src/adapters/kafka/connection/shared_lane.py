"""The lane shared by every connection: one-partition Produce requests gathered per event-loop turn.

A connection's reader gathers the consecutive lane requests it holds (ADR 29). With several producers
connected, each reader holds only a few, and the partitions they write to are the same ones: answered
per connection, every request of every producer cost one log write (issue 43). Here the readers that
run in one Trio scheduler pass put their groups in one turn, and the turn is answered by one call of
the lane (`Lane.answer`, `ReplicaManager.produce_many`): one log write per partition for what every
connection had ready (ADR 105).

How a turn runs:
- the first reader to gather opens the turn and becomes its leader: it reserves its responses' outbox
  slots, yields once to the scheduler (`cancel_shielded_checkpoint`: the readers Trio woke with it run
  first, in the same pass), then answers the turn;
- a reader that gathers while a turn is open joins it: its slots are reserved in its own outbox and it
  goes on reading; before it serves anything that is not a lane request (or ends), it waits for the
  turn to be answered, so a connection's requests still take effect in the order they were sent;
- the leader answers every request of the turn in submission order (a connection's in its order),
  fills each slot, and writes each connection's responses in one `writev` (`Outbox.flush_nowait`;
  what the socket does not take now is written by a task of that connection). A group whose answer
  fails ends every connection of the turn, as it ended the one connection before.

When the previous turn's requests all came from the reader now gathering (one producer, or one at a
time), a turn would only cost a scheduler pass: the reader answers its group at once, as before.
`Lane.answer` gives for the concatenated requests what it gives for each connection's group one
after another (`produce_many`'s rule: the answers and log bytes of one `produce` after another), so
gathering changes which write the records share, never the offsets, the answers or the bytes stored
(`tests/unit/adapters/kafka/test_shared_lane.py`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from time import perf_counter
from typing import Any, Protocol

import trio

from ..api import KafkaApi, Services, declared_uses
from ..observing import observed
from .outbox import Slot

log = logging.getLogger("trafka.server")


class Gatherer(Protocol):
    """A connection taking part in turns: where its answers go and how they are written."""

    peer: str

    def answered_elsewhere(self) -> None:
        """Its slots were filled by another task (the turn's leader): write what is ready."""


class Turn:
    """The lane requests gathered in one scheduler pass, answered together by its leader."""

    __slots__ = ("requests", "slots", "gatherers", "answered", "_event")

    def __init__(self) -> None:
        self.requests: list[Any] = []
        self.slots: list[Slot] = []
        self.gatherers: list[Gatherer] = []  # each once, in the order they joined
        self.answered = False
        self._event: trio.Event | None = None  # made only when a reader has to wait

    async def wait_answered(self) -> None:
        if self.answered:
            return
        if self._event is None:
            self._event = trio.Event()
        await self._event.wait()

    def _done(self) -> None:
        self.answered = True
        if self._event is not None:
            self._event.set()


class SharedLane:
    """The broker's one lane for `api` (Produce), shared by its connections."""

    def __init__(self, ctx: Services, api: KafkaApi) -> None:
        lane = api.lane
        assert lane is not None
        self._ctx = ctx
        self._answer: Callable[[Services, Sequence[Any]], list[bytes]] = lane.answer
        # `answer_one` with what it declares, resolved here once (`inject`'s view per call, not taken)
        one = lane.answer_one
        uses = declared_uses(one) if one is not None else None
        self._one: Callable[[Any, Any], bytes] | None = one
        self._one_ctx: Any = ctx if uses is None else ctx.view(uses)
        self.api = api
        self._turn: Turn | None = None
        self._last: object = None  # the one connection the latest requests answered came from

    def gathers(self, gatherer: Gatherer) -> bool:
        """Whether a group from `gatherer` joins (or opens) a turn rather than being answered at once:
        always while a turn is open (its requests must follow the ones it already put there), else unless
        the last requests answered were this connection's alone."""
        return self._turn is not None or self._last is not gatherer

    def join(self, gatherer: Gatherer, group: Sequence[Any], slots: Sequence[Slot]) -> Turn | None:
        """Put a reader's group in the open turn; a new turn when none is open, returned to the reader
        that opened it, which must `lead` it."""
        turn = self._turn
        opened = turn is None
        if turn is None:
            turn = self._turn = Turn()
        turn.requests.extend(group)
        turn.slots.extend(slots)
        if gatherer not in turn.gatherers:
            turn.gatherers.append(gatherer)
        return turn if opened else None

    def open_turn(self, gatherer: Gatherer) -> Turn | None:
        """The open turn `gatherer` has requests in, which it must see answered before serving more."""
        turn = self._turn
        return turn if turn is not None and gatherer in turn.gatherers else None

    async def lead(self, turn: Turn) -> None:
        """Let the readers the scheduler runs in this pass join, then answer the turn."""
        await trio.lowlevel.cancel_shielded_checkpoint()
        self.answer(turn)

    def answer(self, turn: Turn) -> None:
        """Every request of the turn in one call of the lane; each slot filled; each connection's
        responses written."""
        if self._turn is turn:
            self._turn = None
        requests, slots, gatherers = turn.requests, turn.slots, turn.gatherers
        # One connection alone in the turn: its next group is answered at once unless another's comes
        # first. Several: the next group opens a turn whoever sends it.
        self._last = gatherers[0] if len(gatherers) == 1 else None
        started = perf_counter()
        try:
            responses: list[bytes] | None = self._answer(self._ctx, requests)
        except Exception:
            log.exception(
                "closing connections from %s: %s failed",
                ", ".join(g.peer for g in gatherers),
                self.api.name,
            )
            responses = None
        elapsed = perf_counter() - started  # each response was ready when the turn's were
        if responses is None:
            for slot in slots:
                slot.fill(None)
        else:
            observer = observed(self._ctx.services.observer)
            if observer is None:  # nothing collects metrics
                for slot, response in zip(slots, responses):
                    slot.fill([response])
            else:
                name = self.api.name
                for slot, request, response in zip(slots, requests, responses):
                    slot.fill([response])
                    observer.request_completed(name, request.version, elapsed)
        turn._done()
        for gatherer in gatherers:
            gatherer.answered_elsewhere()

    def answer_now(self, gatherer: Gatherer, group: Sequence[Any]) -> list[bytes]:
        """A group answered at once (no turn open, and the last requests were this reader's too)."""
        self._last = gatherer
        one = self._one
        if one is not None and len(group) == 1:  # a producer waiting for each answer (ADR 135)
            return [one(self._one_ctx, group[0])]
        return self._answer(self._ctx, group)

    def answer_alone(self, gatherer: Gatherer, request: Any) -> bytes:
        """`answer_now` for a group of one: its response (ADR 135)."""
        self._last = gatherer
        one = self._one
        if one is None:
            return self._answer(self._ctx, (request,))[0]
        return one(self._one_ctx, request)
