"""`trafka.Broker`'s start when the process's broker loop has ended under it (ADR 126): the start fails
at once with a clear message instead of waiting out its timeout for a task that never ran."""

from __future__ import annotations

import pytest
import trio

from trafka.app.embedded import threaded
from trafka.testing import BrokerError


class _EndedToken:
    def run_sync_soon(self, *_: object) -> None:
        raise trio.RunFinishedError("the loop has ended")


class _EndedHost:
    token = _EndedToken()

    def spawn(self, *_: object) -> None:
        raise AssertionError("nothing is spawned in an ended loop")


@pytest.mark.timeout(20)  # without the fix the start waits out its 600 s timeout
def test_a_start_on_an_ended_loop_fails_at_once(monkeypatch):
    monkeypatch.setattr(threaded._Host, "get", classmethod(lambda cls: _EndedHost()))
    broker = threaded.Broker()
    with pytest.raises(BrokerError, match="did not start"):
        broker.start(timeout=600)
    assert not broker.running
    broker.stop()  # nothing to stop
