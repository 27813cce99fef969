"""Kafka's windowed rate (`Rate` over a `WindowedSum`) and the throttle time a violation costs.

A rate keeps `quota.window.num` samples (11) of `quota.window.size.seconds` (1 s) each, plus one
spare that overlaps the oldest window, as Kafka's `SampledStat` does: a value lands in the current
sample, or in the next one once the current sample is a window old; a sample with no event for
`samples * window` is reset. The rate is the samples' sum over the elapsed time since the oldest
sample started, where the elapsed time counts at least `samples - 1` full windows (so a new client's
first burst is spread over ten seconds, not one), and at least 1 ms.

When the rate is above the bound, Kafka throttles for the time that brings the rate back to the
bound if nothing more is recorded: `(rate - bound) / bound * window` (`QuotaUtils.throttleTime`),
rounded as Java's `Math.round`.
"""

from __future__ import annotations

import math

import attrs


@attrs.frozen
class QuotaWindow:
    """Kafka's `quota.window.num` and `quota.window.size.seconds`, the latter in milliseconds."""

    samples: int = 11
    size_ms: int = 1000

    def __attrs_post_init__(self) -> None:
        if self.samples < 1 or self.size_ms < 1:
            raise ValueError("a quota window needs at least one sample of at least 1 ms")


class _Sample:
    __slots__ = ("value", "events", "start_ms", "last_event_ms")

    def __init__(self, now_ms: int) -> None:
        self.reset(now_ms)

    def reset(self, now_ms: int) -> None:
        self.value = 0.0
        self.events = 0
        self.start_ms = now_ms
        self.last_event_ms = now_ms


class WindowedRate:
    """Kafka's `Rate` (per second) over a `WindowedSum`, with time passed in."""

    __slots__ = ("window", "_samples", "_current", "last_record_ms")

    def __init__(self, window: QuotaWindow) -> None:
        self.window = window
        self._samples: list[_Sample] = []
        self._current = 0
        self.last_record_ms = 0

    def record(self, value: float, now_ms: int) -> None:
        """Add `value` at `now_ms` (a negative value undoes one, as Kafka's `unrecordQuotaSensor`)."""
        sample = self._current_sample(now_ms)
        if now_ms - sample.start_ms >= self.window.size_ms:
            sample = self._advance(now_ms)
        sample.value += value
        sample.events += 1
        sample.last_event_ms = now_ms
        self.last_record_ms = now_ms

    def measure(self, now_ms: int) -> float:
        """The rate per second at `now_ms`."""
        window_ms = self.window_ms(now_ms)
        return self.total() * 1000.0 / window_ms

    def total(self) -> float:
        """The samples' sum as they are (`window_ms` purges the old ones first)."""
        return sum(sample.value for sample in self._samples)

    def window_ms(self, now_ms: int) -> int:
        """The elapsed time the rate divides by (Kafka's `Rate.windowSize`), old samples purged first."""
        self._purge(now_ms)
        oldest = min((sample.start_ms for sample in self._samples), default=None)
        if oldest is None:
            self._samples.append(_Sample(now_ms))
            oldest = now_ms
        elapsed = now_ms - oldest
        full_windows = elapsed // self.window.size_ms
        minimum = self.window.samples - 1
        if full_windows < minimum:
            elapsed += (minimum - full_windows) * self.window.size_ms
        return max(elapsed, 1)

    def _current_sample(self, now_ms: int) -> _Sample:
        if not self._samples:
            self._samples.append(_Sample(now_ms))
        return self._samples[self._current]

    def _advance(self, now_ms: int) -> _Sample:
        self._current = (self._current + 1) % (self.window.samples + 1)
        if self._current >= len(self._samples):
            sample = _Sample(now_ms)
            self._samples.append(sample)
            return sample
        sample = self._samples[self._current]
        sample.reset(now_ms)
        return sample

    def _purge(self, now_ms: int) -> None:
        expire_ms = self.window.samples * self.window.size_ms
        for sample in self._samples:
            if now_ms - sample.last_event_ms >= expire_ms:
                sample.reset(now_ms)


def java_round(value: float) -> int:
    """Java's `Math.round`: half rounds up."""
    return math.floor(value + 0.5)


MAX_THROTTLE_MS = 2**31 - 1  # ThrottleTimeMs is an int32 on the wire: a larger one could not be sent (issue 42)


def throttle_time_ms(rate: float, bound: float, window_ms: int) -> int:
    """How long a client whose rate is `rate` must wait for it to fall to `bound` (QuotaUtils.throttleTime),
    capped at what the response can carry."""
    return min(java_round((rate - bound) / bound * window_ms), MAX_THROTTLE_MS)


class TokenBucket:
    """Kafka's `TokenBucket` (KIP-599), with time passed in: `bound` tokens a second up to a burst of
    `samples * window` seconds' worth; recording takes tokens and may leave the bucket negative. It
    starts full (Kafka's first refill is from time 0)."""

    __slots__ = ("window", "tokens", "last_update_ms")

    def __init__(self, window: QuotaWindow) -> None:
        self.window = window
        self.tokens = 0.0
        self.last_update_ms = 0

    def measure(self, bound: float, now_ms: int) -> float:
        self._refill(bound, now_ms)
        return self.tokens

    def record(self, bound: float, value: float, now_ms: int) -> None:
        self._refill(bound, now_ms)
        self.tokens = min(self._burst(bound), self.tokens - value)

    def _refill(self, bound: float, now_ms: int) -> None:
        self.tokens = min(self._burst(bound), self.tokens + bound * (now_ms - self.last_update_ms) / 1000)
        self.last_update_ms = now_ms

    def _burst(self, bound: float) -> float:
        return self.window.samples * self.window.size_ms / 1000 * bound


def token_throttle_time_ms(tokens: float, bound: float) -> int:
    """How long until a bucket at `tokens` (negative) is back to zero (ControllerMutationQuotaManager)."""
    return min(java_round(-tokens / bound * 1000), MAX_THROTTLE_MS)
