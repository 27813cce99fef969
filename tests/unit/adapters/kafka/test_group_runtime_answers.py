"""GroupRuntime answers the request that completes a round together with the requests it released,
not ahead of them, as Kafka sends every member's JoinGroup answer at once."""

from __future__ import annotations

import trio
import trio.testing

from trafka.adapters.kafka.group_runtime import GroupRuntime
from trafka.adapters.kafka.unit_of_work import UnitOfWork, committed
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

    def __init__(self, runtime: GroupRuntime, uow: UnitOfWork) -> None:
        self.runtime, self.uow = runtime, uow

    def __getattr__(self, name: str):
        found = getattr(self.runtime, name)
        return committed(self.uow, found) if callable(found) else found


def _runtime() -> _Served:
    ids = iter(range(1, 100))
    coordinator = GroupCoordinator(GroupSettings(initial_rebalance_delay_ms=0), lambda client: f"{client}-{next(ids)}")
    uow = UnitOfWork()
    return _Served(
        GroupRuntime(coordinator, OffsetManager(coordinator, MemoryOffsetStore(), catalog=None, now=0), lambda: 0, uow),
        uow,
    )


def _join(member_id: str = "", client: str = "c") -> JoinRequest:
    return JoinRequest(
        "g", member_id, "consumer", (Protocol("cooperative-sticky", b"m"),), 10_000, 10_000, client_id=client
    )


async def _answer(outcome, name: str, order: list[tuple[str, object]]) -> None:
    result = await outcome() if callable(outcome) else outcome
    order.append((name, result))


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
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_answer, runtime.join(_join(b)), "b", order)  # waits for a
        await trio.testing.wait_all_tasks_blocked()
        assert order == []
        completing = runtime.join(_join(a))
        assert callable(completing), "a's answer must not go out ahead of b's"
        nursery.start_soon(_answer, completing, "a", order)
    assert [name for name, _ in order] == ["b", "a"]
    assert {result.generation_id for _, result in order} == {2}

    # The leader's SyncGroup releases b's waiting one: b's assignment leaves first too.
    order.clear()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_answer, runtime.sync(SyncRequest("g", b, 2)), "b", order)
        await trio.testing.wait_all_tasks_blocked()
        leader = runtime.sync(SyncRequest("g", a, 2, ((a, b"p1"), (b, b""))))
        assert callable(leader)
        nursery.start_soon(_answer, leader, "a", order)
    assert [(name, result.assignment) for name, result in order] == [("b", b""), ("a", b"p1")]
