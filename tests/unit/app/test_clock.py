"""The broker's clocks: the manual one moves only by `advance` and wakes its listeners; the group
runtime acts on an advanced deadline at once."""

from __future__ import annotations

import math

import pytest
import trio
import trio.testing

from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.app.wiring.clock import ManualClock, WallClock, clock_from


def test_the_manual_clock_moves_only_when_advanced_and_tells_its_listeners():
    clock = ManualClock(start_ms=1_000)
    heard = []
    clock.listen(lambda: heard.append(clock.now_ms()))
    assert clock.now_ms() == 1_000 and clock.seconds_until(1_001) == math.inf and clock.seconds_until(1_000) == 0
    assert clock.advance(0.25) == 1_250 and heard == [1_250]
    with pytest.raises(ValueError, match="forwards"):
        clock.advance(-1)
    with pytest.raises(ValueError, match="forwards"):
        clock.advance(float("nan"))


def test_the_wall_clock_waits_the_real_difference():
    clock = WallClock()
    assert 9 < clock.seconds_until(clock.now_ms() + 10_000) <= 10
    assert isinstance(clock_from("wall"), WallClock) and isinstance(clock_from("manual"), ManualClock)
    with pytest.raises(ValueError):
        clock_from("sundial")


async def test_a_session_deadline_passes_at_once_when_the_manual_clock_is_advanced_past_it():
    settings = load_settings(overrides={"storage": {"kind": "memory"}, "broker": {"clock": "manual"}})
    adapters = default_adapters(settings)
    ctx = bootstrap(settings, adapters)
    clock = adapters.clock
    assert isinstance(clock, ManualClock)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(ctx.services.groups.run)
        coordinator = ctx.services.groups.coordinator
        deadlines = []
        real = coordinator.tick

        def tick(now_ms):
            deadlines.append(now_ms)
            return real(now_ms)

        coordinator.tick = tick
        await trio.testing.wait_all_tasks_blocked()
        seen = len(deadlines)
        clock.advance(46)
        await trio.testing.wait_all_tasks_blocked()
        assert len(deadlines) > seen and deadlines[-1] == clock.now_ms()
        nursery.cancel_scope.cancel()
