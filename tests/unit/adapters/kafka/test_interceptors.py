"""Interceptors in the fault layer (ADR 42): order, counting, removal, and each verdict's outcome."""

from __future__ import annotations

import pytest
import trio

from trafka.adapters.kafka.api import NO_RESPONSE, CloseConnection, Held
from trafka.adapters.kafka.apis import build_registry
from trafka.adapters.kafka.connection.faults import Delay, Drop, Faults, Interceptor, Respond
from trafka.adapters.kafka.request_context import ClientInfo

REGISTRY = build_registry()
METADATA = REGISTRY.get(3)
CLIENT = ClientInfo("unit", "127.0.0.1", "BROKER2")


def _served(ctx, body, version, client):
    return ("served", body)


def test_interceptors_see_requests_in_the_order_installed_until_one_answers():
    faults = Faults()
    seen = []
    first = faults.intercept(Interceptor(3, lambda r: seen.append(("first", r.listener)), None))
    second = faults.intercept(Interceptor(3, lambda r: Respond(response="mine"), 2))
    third = faults.intercept(Interceptor(3, lambda r: seen.append("third"), None))
    layer = faults.layer(METADATA, _served)
    assert faults.active and faults.intercepted == {3}
    assert layer(None, "b", 9, CLIENT) == "mine"
    assert layer(None, "b", 9, CLIENT) == "mine"
    assert layer(None, "b", 9, CLIENT) == ("served", "b")  # the second ran out after 2
    assert seen == [("first", "BROKER2")] * 3 + ["third"]
    assert len(first.calls) == 3 and len(second.calls) == 2 and second.removed and len(third.calls) == 1
    assert first.calls[0].api == "Metadata" and first.calls[0].version == 9 and first.calls[0].request == "b"
    faults.remove(first)
    faults.remove(third)
    assert not faults.active and faults.intercepted == frozenset()


def test_drop_closes_and_a_raising_or_wrong_interceptor_closes_with_the_error_kept():
    faults = Faults()
    layer = faults.layer(METADATA, _served)
    faults.intercept(Interceptor(3, lambda r: Drop(), 1))
    with pytest.raises(CloseConnection, match="dropped"):
        layer(None, "b", 9, CLIENT)
    broken = faults.intercept(Interceptor(3, lambda r: 1 / 0, 1))
    with pytest.raises(CloseConnection, match="ZeroDivisionError"):
        layer(None, "b", 9, CLIENT)
    assert isinstance(broken.errors[0], ZeroDivisionError)
    wrong = faults.intercept(Interceptor(3, lambda r: "yes", 1))
    with pytest.raises(CloseConnection, match="not None, respond, delay or drop"):
        layer(None, "b", 9, CLIENT)
    assert isinstance(wrong.errors[0], TypeError)
    with pytest.raises(ValueError, match="times"):
        Interceptor(3, lambda r: None, 0)


async def test_a_delay_is_held_then_served_or_answered_as_it_says():
    faults = Faults()
    layer = faults.layer(METADATA, _served)
    faults.intercept(Interceptor(3, lambda r: Delay(0.01), 1))
    held = layer(None, "b", 9, CLIENT)
    assert isinstance(held, Held) and held.seconds == 0.01 and held.then() == ("served", "b")
    faults.intercept(Interceptor(3, lambda r: Delay(0.01, Drop()), 1))
    held = layer(None, "b", 9, CLIENT)
    with pytest.raises(CloseConnection):
        held.then()
    faults.intercept(Interceptor(3, lambda r: Delay(0.01, Respond(response=NO_RESPONSE)), 1))
    with trio.fail_after(5):
        assert await layer(None, "b", 9, CLIENT).wait() is NO_RESPONSE  # as any Deferred, too


def test_fail_next_is_an_interceptor_that_rearms_and_disarms():
    faults = Faults()
    faults.fail_next(3, 6, 2)
    faults.fail_next(3, 7, 1)  # re-armed: replaces the first
    assert faults.pending_failures(3) == 1
    faults.fail_next(3, 7, 0)
    assert faults.pending_failures(3) == 0 and not faults.active
