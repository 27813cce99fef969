"""The purgatory (ADR 80): operations parked on keys are tried in the notifying task, stay parked while
they have no answer, expire on one timer that no answer or park wakes (nor moves, ADR 130), and are
never answered twice;
the unit of work commits after every round of completions."""

from __future__ import annotations

import gc
import math
import weakref

import pytest
import trio
import trio.testing

from trafka.adapters.kafka.api import Parked
from trafka.adapters.kafka.runtime.purgatory import Failed, Purgatory
from trafka.adapters.kafka.runtime.unit_of_work import UnitOfWork


@pytest.fixture
def autojump_clock():
    return trio.testing.MockClock(autojump_threshold=0)


class Ready:
    """A parked request's `complete`: no answer until `ready`, then its name (always at the deadline)."""

    def __init__(self, name: str) -> None:
        self.name, self.ready, self.tries = name, False, 0

    def __call__(self, expired: bool) -> str | None:
        self.tries += 1
        if expired:
            return f"{self.name} expired"
        return self.name if self.ready else None


async def test_a_notify_tries_only_the_operations_on_its_keys_and_answers_once():
    purgatory = Purgatory()
    a, b = Ready("a"), Ready("b")
    answers: list[str] = []
    purgatory.park(Parked(("p0", "p1"), None, a), answers.append)
    purgatory.park(Parked(("p1",), None, b), answers.append)
    purgatory.notify(["p0"])
    assert a.tries == 1 and b.tries == 0 and answers == []  # tried, no answer: still parked
    a.ready = b.ready = True
    purgatory.notify(["p0", "p1"])
    assert sorted(answers) == ["a", "b"]
    purgatory.notify(["p0", "p1"])
    assert sorted(answers) == ["a", "b"] and purgatory._waiters == {}


async def test_expiry_answers_at_the_deadline_and_an_answer_leaves_the_timer_alone(autojump_clock):
    """ADR 130: an answer does not move the timer (nor does a later park, when it is not sooner); the
    timer wakes at the answered operation's deadline, skips it, and sleeps until the next live one."""
    purgatory = Purgatory()
    answers: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(purgatory.run)
        await trio.testing.wait_all_tasks_blocked()
        first, second = Ready("first"), Ready("second")
        start = trio.current_time()
        purgatory.park(Parked(("k",), 100, first), answers.append)
        purgatory.park(Parked(("k",), 500, second), answers.append)
        assert purgatory._timer is not None and purgatory._timer.deadline == pytest.approx(start + 0.1)
        first.ready = True
        purgatory.notify(["k"])  # answered: the timer is not moved
        assert answers == ["first"] and first.tries == 1
        assert purgatory._timer.deadline == pytest.approx(start + 0.1)
        purgatory.park(Parked(("k",), 300, third := Ready("third")), answers.append)  # later: not moved
        assert purgatory._timer.deadline == pytest.approx(start + 0.1)
        await trio.sleep(0.15)  # woke at 0.1: the first skipped, not tried again
        assert answers == ["first"] and first.tries == 1
        assert purgatory._timer.deadline == pytest.approx(start + 0.3)
        await trio.sleep(0.2)
        assert answers == ["first", "third expired"] and third.tries == 1
        await trio.sleep(0.2)
        assert answers == ["first", "third expired", "second expired"]
        assert purgatory._timer.deadline == math.inf and purgatory._waiters == {}
        assert purgatory._deadlines == [] and purgatory._timed == 0
        nursery.cancel_scope.cancel()


async def test_finished_deadlines_are_compacted_so_fast_answers_hold_no_memory(autojump_clock):
    """Operations answered at once with a long `max_wait_ms` leave their deadlines in the heap until the
    timer would reach them: `park` compacts the heap whenever finished entries outnumber live ones, so
    it stays bounded by the live operations (rule 4), not by the answers' rate times the wait."""
    purgatory = Purgatory()
    answers: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(purgatory.run)
        await trio.testing.wait_all_tasks_blocked()
        waiting = Ready("waiting")
        purgatory.park(Parked(("w",), 1_000_000, waiting), answers.append)
        for i in range(10_000):
            ready = Ready(str(i))
            ready.ready = True
            purgatory.park(Parked(("k",), 2**31 - 1, ready), answers.append)
            purgatory.notify(["k"])
            assert len(purgatory._deadlines) <= 2 * 64 + 2
        assert len(answers) == 10_000 and purgatory._timed == 1
        assert not waiting.tries
        nursery.cancel_scope.cancel()


async def test_a_failing_completion_is_that_requests_failure_only():
    purgatory = Purgatory()
    answers: list[object] = []

    def broken(expired: bool) -> str:
        raise ZeroDivisionError

    purgatory.park(Parked(("k",), None, broken), answers.append)
    healthy = Ready("healthy")
    healthy.ready = True
    purgatory.park(Parked(("k",), None, healthy), answers.append)
    purgatory.notify(["k"])  # the notifying task is not hurt
    assert "healthy" in answers and len(answers) == 2
    (failed,) = [a for a in answers if isinstance(a, Failed)]
    assert isinstance(failed.error, ZeroDivisionError)


async def test_the_unit_of_work_commits_after_a_round_of_completions():
    said: list[str] = []

    class Journal:
        def write(self) -> None:
            said.append("written")

        def wake(self) -> None:
            said.append("woken")

    uow = UnitOfWork()
    purgatory = Purgatory(uow)
    journal = Journal()

    def acquire(expired: bool) -> str:
        uow.seen(journal)  # a ShareFetch that acquired records in the appending task
        said.append("answered")
        return "records"

    purgatory.park(Parked(("k",), None, acquire), lambda answer: None)
    purgatory.notify(["k"])
    assert said == ["answered", "written", "woken"]


async def test_a_forgotten_operation_is_never_tried():
    purgatory = Purgatory()
    never = Ready("never")
    never.ready = True
    answers: list[str] = []
    purgatory.forget(purgatory.park(Parked(("k",), None, never), answers.append))
    purgatory.notify(["k"])
    purgatory.notify_all()
    assert never.tries == 0 and answers == []


async def test_events_are_set_before_operations_are_tried_and_counted_as_woken():
    purgatory = Purgatory()
    order: list[str] = []
    event = purgatory.waiter(["k"])

    def complete(expired: bool) -> str:
        order.append(f"tried, event set: {event.is_set()}")
        return "done"

    purgatory.park(Parked(("k",), None, complete), order.append)
    purgatory.notify(["k"])
    assert order == ["tried, event set: True", "done"] and purgatory.woken == 1


async def test_a_completion_without_an_answer_at_its_deadline_fails_that_request_and_the_timer_goes_on(autojump_clock):
    purgatory = Purgatory()
    answers: list[object] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(purgatory.run)
        await trio.testing.wait_all_tasks_blocked()
        purgatory.park(Parked(("k",), 100, lambda expired: None), answers.append)
        later = Ready("later")
        purgatory.park(Parked(("k",), 200, later), answers.append)
        await trio.sleep(0.3)
        assert type(answers[0]) is Failed and answers[1:] == ["later expired"]
        nursery.cancel_scope.cancel()


def _parked_as_the_server_parks(purgatory: Purgatory, keys: tuple[str, ...], answers: list) -> tuple:
    """A `deliver` that refers to its own operation, as the connection's does (it forgets it): the
    operation, and a weak reference to its `deliver`."""
    op = None

    def deliver(answer: object) -> None:
        assert op is not None
        answers.append(answer)

    op = purgatory.park(Parked(keys, None, lambda expired: "answer"), deliver)
    return op, weakref.ref(deliver)


def test_an_answered_or_forgotten_operation_is_freed_without_the_collector():
    """The operation and its connection's `deliver` refer to each other: the purgatory drops its end
    once delivered (or forgotten), so nothing waits for the cyclic collector (issue 43: on the latency
    path every parked Fetch left about 40 objects of cyclic garbage, a collection every ~20 records)."""
    gc.disable()
    try:
        purgatory = Purgatory()
        answers: list = []
        op, answered = _parked_as_the_server_parks(purgatory, ("p0",), answers)
        del op
        op, forgotten = _parked_as_the_server_parks(purgatory, ("p1",), answers)
        purgatory.notify(["p0"])
        assert answers == ["answer"]
        assert answered() is None
        purgatory.forget(op)
        del op
        assert forgotten() is None
    finally:
        gc.enable()


async def test_the_answer_leaves_before_the_operation_leaves_its_keys_and_the_timer(autojump_clock):
    """ADR 121: `deliver` (a Fetch answer's `writev`, which wakes the consumer) runs before the
    purgatory's bookkeeping; the operation is finished already, so nothing tries it meanwhile, and the
    bookkeeping still happens after."""
    purgatory = Purgatory()
    seen: list[tuple[float, bool, bool]] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(purgatory.run)
        await trio.testing.wait_all_tasks_blocked()
        answering = Ready("a")

        def deliver(answer: object) -> None:
            assert purgatory._timer is not None
            seen.append((purgatory._timer.deadline, "p1" in purgatory._waiters, op.finished))
            purgatory.notify(["p1"])  # a notify meanwhile does not try it again

        op = purgatory.park(Parked(("p0", "p1"), 100, answering), deliver)
        parked_until = purgatory._timer.deadline
        answering.ready = True
        purgatory.notify(["p0"])
        assert seen == [(parked_until, True, True)] and answering.tries == 1
        assert purgatory._waiters == {} and purgatory._timed == 0  # its deadline is skipped when reached
        nursery.cancel_scope.cancel()


async def test_an_answered_operation_in_the_timers_heap_keeps_nothing_of_its_request(autojump_clock):
    """ADR 132: the heap holds an answered operation until the timer passes its deadline (ADR 130); the
    request it answered (its completion's closure, the decoded request, the connection's `deliver`) is
    freed at the answer by reference counting, not kept for `max_wait_ms`. Kept, a consumer at the tail
    left ~27 objects per Fetch in the young generation: a collection every ~28 records on the latency path."""
    purgatory = Purgatory()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(purgatory.run)
        await trio.testing.wait_all_tasks_blocked()
        gc.disable()
        try:
            answering, answers = Ready("a"), []
            op = purgatory.park(Parked(("p0",), 60_000, answering), answers.append)
            completion = weakref.ref(answering)
            answering.ready = True
            del answering
            purgatory.notify(["p0"])
            assert answers == ["a"] and op.finished
            assert any(entry[2] is op for entry in purgatory._deadlines)  # still in the heap, until its deadline
            assert completion() is None  # ... without its request
        finally:
            gc.enable()
        nursery.cancel_scope.cancel()


async def test_a_round_of_notifies_that_answered_hands_the_cpu_over_once_and_only_then(autojump_clock):
    """ADR 135: after the answers a notify wrote, the broker's thread yields to the clients they woke
    (once per round, however many it answered); a round that answered nothing does not, nor does the
    timer's expiry (no client is waiting on the latency path there)."""
    handed: list[int] = []
    purgatory = Purgatory(hand_over=lambda: handed.append(len(answers)))
    a, b, c = Ready("a"), Ready("b"), Ready("c")
    answers: list[str] = []
    for name, ready in (("p0", a), ("p0", b), ("p1", c)):
        purgatory.park(Parked((name,), 100, ready), answers.append)
    purgatory.notify(["p0"])  # nothing ready: tried, still parked
    assert handed == [] and answers == []
    a.ready = b.ready = True
    purgatory.notify(["p0", "p1"])  # two answered in one round (c still waits)
    assert sorted(answers) == ["a", "b"]
    assert handed == [2]  # once, after both were written
    async with trio.open_nursery() as nursery:
        nursery.start_soon(purgatory.run)
        await trio.sleep(1)  # c expires on the timer
        nursery.cancel_scope.cancel()
    assert answers[-1] == "c expired"
    assert handed == [2]
    d = Ready("d")
    purgatory.park(Parked(("p2",), None, d), answers.append)
    purgatory.notify(["p2"])  # nothing answered: the timer's answer before it is not this round's
    assert handed == [2]
    d.ready = True
    purgatory.notify(["p2"])
    assert handed == [2, 4]


def test_the_purgatory_yields_with_the_os_by_default():
    import os

    assert Purgatory()._hand_over is getattr(os, "sched_yield", None)


def test_a_round_run_within_anothers_delivery_leaves_the_outer_rounds_yield():
    """A delivery that notifies (a round inside a round) which answers nothing: the outer round answered,
    so it still hands the CPU over, once."""
    handed: list[str] = []
    purgatory = Purgatory(hand_over=lambda: handed.append("yield"))
    a, b = Ready("a"), Ready("b")
    a.ready = True
    answers: list[str] = []

    def deliver_and_notify(answer: str) -> None:
        answers.append(answer)
        purgatory.notify(["p1"])  # b is not ready: this inner round answers nothing

    purgatory.park(Parked(("p0",), None, a), deliver_and_notify)
    purgatory.park(Parked(("p1",), None, b), answers.append)
    purgatory.notify(["p0"])
    assert answers == ["a"] and b.tries == 1
    assert handed == ["yield"]
