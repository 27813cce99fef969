"""Requests whose answer waits, answered into their slot of the connection's outbox: a deferred
handler's wait run in a task of its own, and a held request (ADR 106) parked in the purgatory until
its delay expires. Parked requests (ADR 80) are answered by whichever task completes them
(`reader.Reader._park`); their answers are encoded and observed here too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from time import perf_counter

import trio

from ..api import CloseConnection, Held, Parked
from ..context import BrokerContext
from ..runtime.purgatory import Failed, Operation
from ..wire.codec import DecodedRequest, encode_response_pieces
from .outbox import Outbox, Slot
from .quotas import Throttled

log = logging.getLogger("trafka.server")

CLOSE = object()  # a step's verdict: close the connection


async def wait_held(
    ctx: BrokerContext, parked: set[Operation], held: Held, request: DecodedRequest, peer: str
) -> object:
    """A held request's outcome once its delay expired, or CLOSE if serving it failed.

    The delay is parked in the purgatory like any waiting request (no keys: only its deadline
    completes it), whose timer calls `then()` when it expires; this waits for that answer. A
    connection that closes meanwhile forgets it (`parked`)."""
    then = held.then
    answered = trio.Event()
    answers: list[object] = []

    def complete(expired: bool) -> object | None:
        return _Served(then()) if expired else None  # a notify of every key (shutdown) does not serve it

    def deliver(answer: object) -> None:
        parked.discard(op)
        answers.append(answer)
        answered.set()

    op = ctx.services.appends.park(Parked((), held.seconds * 1000, complete), deliver)
    parked.add(op)
    await answered.wait()
    answer = answers[0]
    if type(answer) is Failed:
        error = answer.error
        if isinstance(error, CloseConnection):
            log.info("closing connection from %s: %s", peer, error)
        else:
            log.error(
                "closing connection from %s: %s v%d failed",
                peer,
                request.handler.name,
                request.api_version,
                exc_info=(type(error), error, error.__traceback__),
            )
        return CLOSE
    assert type(answer) is _Served
    return answer.outcome


class _Served:
    """What a held request's `then()` gave, once its delay expired (any outcome, `NO_RESPONSE` too)."""

    __slots__ = ("outcome",)

    def __init__(self, outcome: object) -> None:
        self.outcome = outcome


async def complete_deferred(
    outbox: Outbox,
    slot: Slot,
    wait: Callable,
    request: DecodedRequest,
    peer: str,
    ctx: BrokerContext,
    started: float,
    mute: Callable[[int], None],
) -> None:
    try:
        response = await wait()
        if type(response) is Throttled:
            mute(response.throttle_ms)
            response = response.response
    except Exception:
        log.exception("%s v%d from %s failed", request.handler.name, request.api_version, peer)
        slot.fill(None)
    else:
        slot.fill(encode(response, request, peer))
        observe(ctx, request, started)
    await outbox.flush()


def observe(ctx: BrokerContext, request: DecodedRequest, started: float) -> None:
    ctx.services.observer.request_completed(request.handler.name, request.api_version, perf_counter() - started)


def encode(response: object, request: DecodedRequest, peer: str) -> list[bytes] | None:
    try:
        return encode_response_pieces(response, request.api_version, request.correlation_id)
    except Exception:
        log.exception("cannot encode %s v%d response for %s", request.handler.name, request.api_version, peer)
        return None
