"""log.cleaner.io.max.bytes.per.second: Kafka's Throttler, with a fake clock."""

from __future__ import annotations

from trafka.app.cleaner.throttle import Throttler


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_bytes_over_the_rate_sleep_the_worker_until_the_rate_holds():
    time = FakeTime()
    throttler = Throttler(1000.0, check_ms=300, clock=time.clock, sleep=time.sleep)
    time.now = 0.5
    throttler.maybe_throttle(2000)  # 2000 bytes in 0.5 s at 1000/s: 1.5 s more
    assert time.slept == [1.5]


def test_under_the_rate_or_within_a_window_nothing_sleeps():
    time = FakeTime()
    throttler = Throttler(1000.0, check_ms=300, clock=time.clock, sleep=time.sleep)
    time.now = 0.1
    throttler.maybe_throttle(10_000)  # inside the 300 ms window: counted, not checked yet
    time.now = 20.0
    throttler.maybe_throttle(1)  # 10,001 bytes over 20 s
    assert time.slept == []
