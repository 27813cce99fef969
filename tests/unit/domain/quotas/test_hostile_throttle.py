"""Issue 42 #13: a throttle time is capped at what ThrottleTimeMs (int32) can carry, so a response is
always encodable (before, a tiny quota and a large produce gave a throttle the codec could not write:
the connection closed after the append and a non-idempotent producer duplicated its records)."""

from __future__ import annotations

from trafka.domain.quotas.rate import MAX_THROTTLE_MS, throttle_time_ms, token_throttle_time_ms


def test_throttle_times_fit_an_int32():
    assert throttle_time_ms(1e12, 1.0, 11_000) == MAX_THROTTLE_MS == 2**31 - 1
    assert token_throttle_time_ms(-1e12, 0.001) == MAX_THROTTLE_MS
    assert throttle_time_ms(2.0, 1.0, 1_000) == 1_000
