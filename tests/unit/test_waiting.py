"""`tests.waiting`: the one way tests wait, checked on its own (tiny timeouts, no broker)."""

from __future__ import annotations

import itertools

import pytest

from tests.waiting import eventually, eventually_async, throughout, throughout_async


def test_eventually_returns_the_first_true_answer():
    answers = iter([0, None, [], "ready", "later"])
    assert eventually(lambda: next(answers), 5, interval=0) == "ready"


def test_eventually_fails_with_what_it_waited_for_and_the_last_state():
    calls = itertools.count()
    with pytest.raises(AssertionError, match=r"timed out after 0.05s waiting for the answer; last state: 'seen'"):
        eventually(lambda: next(calls) < 0, 0.05, what="the answer", interval=0.01, state=lambda: "seen")


def test_eventually_lets_the_predicates_own_errors_through():
    def broken() -> bool:
        raise KeyError("inside")

    with pytest.raises(KeyError):
        eventually(broken, 5)


def test_throughout_keeps_calling_for_the_window_and_stops_at_a_failure():
    calls: list[int] = []
    throughout(lambda: calls.append(1), 0.05, interval=0.01)
    assert 2 <= len(calls)

    def holds_twice() -> None:
        calls.append(2)
        assert calls.count(2) < 3

    with pytest.raises(AssertionError):
        throughout(holds_twice, 5)


async def test_eventually_async_awaits_the_predicate():
    answers = iter([False, False, True])

    async def ready() -> bool:
        return next(answers)

    assert await eventually_async(ready, 5) is True
    with pytest.raises(AssertionError, match="waiting for _never"):
        await eventually_async(_never, 0.02)


async def _never() -> bool:
    return False


async def test_throughout_async_awaits_the_step_for_the_window_and_stops_at_a_failure():
    calls: list[int] = []

    async def step() -> None:
        calls.append(1)
        assert len(calls) < 4

    with pytest.raises(AssertionError):
        await throughout_async(step, 5)
    assert len(calls) == 4
    calls.clear()

    async def holds() -> None:
        calls.append(1)

    await throughout_async(holds, 0.02)
    assert calls
