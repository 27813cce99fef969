"""Charts' memory: consumer lag over the last hour and throughput over the last 15 minutes.

`History.sample(now_ms)` records each group's total lag and the broker's running totals (records in,
bytes in, bytes out); samples older than their window are dropped, so memory stays bounded.
`sample_forever` calls it every few seconds from the HTTP listener's nursery. Time is an argument, so
tests drive it with their own clock.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import attrs
import trio

from .lag import all_group_lag
from .metrics import BrokerMetrics

LAG_WINDOW_MS = 60 * 60 * 1000
THROUGHPUT_WINDOW_MS = 15 * 60 * 1000
SAMPLE_INTERVAL_MS = 5000


@attrs.frozen
class Rate:
    """Per-second rates between two samples, stamped with the later one."""

    at_ms: int
    records: float
    bytes_in: float
    bytes_out: float


class History:
    def __init__(self, metrics: BrokerMetrics, lag_of_groups: Callable[[], dict[str, int]]) -> None:
        self._metrics = metrics
        self._lag_of_groups = lag_of_groups
        self.lag: dict[str, deque[tuple[int, int]]] = {}
        self.totals: deque[tuple[int, tuple[float, float, float]]] = deque()

    def sample(self, now_ms: int) -> None:
        lags = self._lag_of_groups()
        for group_id, total in lags.items():
            self.lag.setdefault(group_id, deque()).append((now_ms, total))
        for group_id in list(self.lag):
            points = self.lag[group_id]
            while points and points[0][0] < now_ms - LAG_WINDOW_MS:
                points.popleft()
            if not points or group_id not in lags and points[-1][0] < now_ms - LAG_WINDOW_MS:
                del self.lag[group_id]
        self.totals.append((now_ms, self._metrics.totals()))
        while self.totals and self.totals[0][0] < now_ms - THROUGHPUT_WINDOW_MS:
            self.totals.popleft()

    def rates(self, now_ms: int | None = None) -> list[Rate]:
        """Rates between samples; with `now_ms`, one more from the last sample to the totals now."""
        out = []
        points = list(self.totals)
        if now_ms is not None and points and now_ms > points[-1][0]:
            points.append((now_ms, self._metrics.totals()))
        for (t0, a), (t1, b) in zip(points, points[1:]):
            seconds = max((t1 - t0) / 1000, 1e-3)
            out.append(Rate(t1, (b[0] - a[0]) / seconds, (b[1] - a[1]) / seconds, (b[2] - a[2]) / seconds))
        return out


def total_lag_by_group(view) -> dict[str, int]:
    """Each group's total lag: committed offsets' lag, and a share group's share-partitions' lag."""
    totals = {group_id: sum(row.lag for row in rows) for group_id, rows in all_group_lag(view).items()}
    share = getattr(view, "share", None)
    if share is not None:
        for group_id, tp in sorted(share.partitions):
            totals[group_id] = totals.get(group_id, 0) + max(share.start_and_lag(group_id, tp)[1], 0)
    return totals


async def sample_forever(history: History, clock_ms: Callable[[], int], stop: trio.Event) -> None:
    while not stop.is_set():
        history.sample(clock_ms())
        with trio.move_on_after(SAMPLE_INTERVAL_MS / 1000):
            await stop.wait()
