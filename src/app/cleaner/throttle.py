"""Kafka's cleaner Throttler (`log.cleaner.io.max.bytes.per.second`), shared by the broker's cleaner
threads and the cleaner process: a leaf both import."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Throttler:
    """Kafka's Throttler: at most `rate` bytes per second over windows of `check_ms`, shared by the
    cleaner threads; it sleeps the calling (worker) thread."""

    def __init__(
        self,
        rate: float,
        check_ms: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.rate = rate
        self._check = check_ms / 1000
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._start = clock()
        self._observed = 0.0

    def maybe_throttle(self, observed: int) -> None:
        with self._lock:
            self._observed += observed
            elapsed = self._clock() - self._start
            if elapsed < self._check:
                return
            if self._observed / elapsed > self.rate:
                self._sleep(self._observed / self.rate - elapsed)
            self._start = self._clock()
            self._observed = 0.0
