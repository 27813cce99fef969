"""GroupRuntime answers the request that completes a round together with the requests it released,
not ahead of them, as Kafka sends every member's JoinGroup answer at once: the commit after the call
answers the parked ones from the purgatory (ADR 80) before the call's own answer is queued."""

from __future__ import annotations

from trafka.adapters.kafka.api import Parked
from trafka.adapters.kafka.runtime.group_runtime import GroupAnswer, GroupRuntime
from trafka.adapters.kafka.runtime.purgatory import Purgatory
from trafka.adapters.kafka.runtime.unit_of_work import UnitOfWork, committed
from trafka.adapters.memory.offset_store import MemoryOffsetStore
from trafka.domain.errors import ErrorCode
from trafka.domain.groups import (
    GroupCoordinator,
    GroupSettings,
    JoinRequest,
    JoinResult,
    OffsetManager,
    Protocol,
    SyncRequest,
)


class _Served:
    """The runtime as a room reaches it: every call followed by the unit of work's commit (ADR 79)."""

    def __init__(self, runtime: GroupRuntime, uow: UnitOfWork, purgatory: Purgatory) -> None:
        self.runtime, self.uow, self.purgatory = runtime, uow, purgatory

    def __getattr__(self, name: str):
        found = getattr(self.runtime, name)
        return committed(self.uow, found) if callable(found) else found


def _runtime() -> _Served:
    ids = iter(range(1, 100))
    coordinator = GroupCoordinator(GroupSettings(initial_rebalance_delay_ms=0), lambda client: f"{client}-{next(ids)}")
    uow = UnitOfWork()
    purgatory = Purgatory(uow)
    offsets = OffsetManager(coordinator, MemoryOffsetStore(), catalog=None, now=0)
    return _Served(GroupRuntime(coordinator, offsets, lambda: 0, uow, purgatory), uow, purgatory)


def _join(member_id: str = "", client: str = "c") -> JoinRequest:
    return JoinRequest(
        "g", member_id, "consumer", (Protocol("cooperative-sticky", b"m"),), 10_000, 10_000, client_id=client
    )


def _parked(runtime: _Served, outcome, name: str, order: list[tuple[str, object]]) -> None:
    """As the JoinGroup room parks a waiting answer in the purgatory."""
    assert isinstance(outcome, GroupAnswer)
    parked = Parked((outcome,), None, lambda expired: outcome.result)
    runtime.purgatory.park(parked, lambda result: order.append((name, result)))


async def test_the_join_that_completes_a_round_is_answered_after_the_joins_it_released():
    runtime = _runtime()
    first = runtime.join(_join(client="a"))
    assert isinstance(first, JoinResult) and first.error is ErrorCode.MEMBER_ID_REQUIRED
    a = first.member_id
    alone = runtime.join(_join(a))
    assert isinstance(alone, JoinResult) and alone.generation_id == 1  # released no one: answered at once
    assert runtime.sync(SyncRequest("g", a, 1, ((a, b"p0,p1"),))).error is ErrorCode.NONE

    b = runtime.join(_join(client="b")).member_id
    order: list[tuple[str, object]] = []
    _parked(runtime, runtime.join(_join(b)), "b", order)  # waits for a
    assert order == []
    completing = runtime.join(_join(a))  # the commit after it answered b first, from this task
    order.append(("a", completing))
    assert [name for name, _ in order] == ["b", "a"]
    assert {result.generation_id for _, result in order} == {2}

    # The leader's SyncGroup releases b's waiting one: b's assignment leaves first too.
    order.clear()
    _parked(runtime, runtime.sync(SyncRequest("g", b, 2)), "b", order)
    leader = runtime.sync(SyncRequest("g", a, 2, ((a, b"p1"), (b, b""))))
    order.append(("a", leader))
    assert [(name, result.assignment) for name, result in order] == [("b", b""), ("a", b"p1")]


def test_shutdown_answers_every_waiting_join_with_not_coordinator():
    runtime = _runtime()
    a = runtime.join(_join(client="a")).member_id
    runtime.join(_join(a))
    b = runtime.join(_join(client="b")).member_id
    order: list[tuple[str, object]] = []
    _parked(runtime, runtime.join(_join(b)), "b", order)
    runtime.shutdown()
    assert [(name, result.error) for name, result in order] == [("b", ErrorCode.NOT_COORDINATOR)]
