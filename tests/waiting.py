"""One way for a test to wait for something outside it: `eventually(predicate, timeout)`.

(`throughout(step, seconds)` is its mirror: a window in which something keeps holding.)

A test that waits on real clients, a subprocess or the broker's background work asks again until the
answer holds, and fails with what it waited for (and, optionally, the last state it saw) when the
timeout passes. The predicate may do a bounded step itself (a client's `poll(0.2)`) before it
answers; when it does, pass `interval=0` so that the step paces the loop. Time the broker owns (group
sessions, retention, `delete.retention.ms`, record locks, quota windows) is moved with the manual
clock instead (`trafka.Broker(clock="manual")`, `broker.advance`), never waited for.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


def eventually(
    predicate: Callable[[], T],
    timeout: float,
    *,
    what: str = "",
    interval: float = 0.05,
    state: Callable[[], object] | None = None,
) -> T:
    """Call `predicate` until it returns something true, and return that; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        answer = predicate()
        if answer:
            return answer
        if time.monotonic() > deadline:
            raise AssertionError(_timed_out(timeout, what or _name(predicate), state))
        if interval:
            time.sleep(interval)  # pacing the question, not synchronisation


def throughout(step: Callable[[], object], seconds: float, *, interval: float = 0.0) -> None:
    """Call `step` again and again for `seconds`: a window in which something must keep holding (its
    assertions inside `step`) or in which clients keep polling while nothing is expected to happen."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        step()
        if interval:
            time.sleep(interval)


async def eventually_async(
    predicate: Callable[[], Awaitable[T]],
    timeout: float,
    *,
    what: str = "",
    interval: float = 0.0,
    state: Callable[[], object] | None = None,
) -> T:
    """`eventually` for asyncio tests (aiokafka): the predicate is awaited, usually after a bounded step."""
    deadline = time.monotonic() + timeout
    while True:
        answer = await predicate()
        if answer:
            return answer
        if time.monotonic() > deadline:
            raise AssertionError(_timed_out(timeout, what or _name(predicate), state))
        if interval:
            await asyncio.sleep(interval)


async def throughout_async(step: Callable[[], Awaitable[object]], seconds: float) -> None:
    """`throughout` for asyncio tests: `step` is awaited again and again for `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        await step()


def _name(predicate: Callable[..., object]) -> str:
    return getattr(predicate, "__name__", repr(predicate))


def _timed_out(timeout: float, what: str, state: Callable[[], object] | None) -> str:
    detail = f"; last state: {state()!r}" if state is not None else ""
    return f"timed out after {timeout:g}s waiting for {what}{detail}"
