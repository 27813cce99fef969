"""One way to persist (ADR 79): a room's handler is always followed by the unit of work's commit, which
writes every participant the call reached before waking any, and again after a plain Deferred's wait."""

from __future__ import annotations

import types

import attrs
import pytest
import trio
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from trafka.adapters.kafka.api import Deferred, KafkaApi, Parked, top_level_error
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.adapters.kafka.runtime.unit_of_work import UnitOfWork, committed

CLIENT = ClientInfo("c", "127.0.0.1")


class Journal:
    """A participant that says what happened to it, in order."""

    def __init__(self, name: str, said: list[str], fail: bool = False) -> None:
        self.name, self.said, self.fail = name, said, fail

    def write(self) -> None:
        if self.fail:
            raise OSError("disk full")
        self.said.append(f"{self.name} written")

    def wake(self) -> None:
        self.said.append(f"{self.name} woken")


def _api(handle) -> KafkaApi:
    return KafkaApi(
        MetadataRequest, MetadataResponse, (0, 12), handle, authorization=None, refusal=top_level_error, read_only=True
    )


def test_every_participant_a_call_reached_is_written_before_any_is_woken():
    said: list[str] = []
    uow = UnitOfWork()
    groups, share = Journal("groups", said), Journal("share", said)

    def handle(ctx, request, version, client):
        uow.seen(groups)
        uow.seen(share)
        uow.seen(groups)  # once per commit however often it is reached
        said.append("handled")
        return "answer"

    answer = _api(handle).handle(
        types.SimpleNamespace(services=types.SimpleNamespace(unit_of_work=uow)), None, 0, CLIENT
    )
    assert answer == "answer"
    assert said == ["handled", "groups written", "share written", "groups woken", "share woken"]
    said.clear()
    uow.commit()  # nothing seen since: nothing written again
    assert said == []


def test_a_room_cannot_leave_a_deferred_answer_unwritten():
    said: list[str] = []
    uow = UnitOfWork()
    journal = Journal("share", said)

    def handle(ctx, request, version, client):
        async def later():
            uow.seen(journal)  # the long poll's own decisions
            said.append("acquired")
            return "records"

        return Deferred(later)

    outcome = _api(handle).handle(
        types.SimpleNamespace(services=types.SimpleNamespace(unit_of_work=uow)), None, 0, CLIENT
    )
    assert isinstance(outcome, Deferred) and said == []
    assert trio.run(outcome.wait) == "records"
    assert said == ["acquired", "share written", "share woken"]


def test_a_parked_answer_is_left_to_the_purgatory():
    parked = Parked((), 10, lambda expired: "answer")
    api = _api(lambda ctx, request, version, client: parked)
    assert (
        api.handle(types.SimpleNamespace(services=types.SimpleNamespace(unit_of_work=UnitOfWork())), None, 0, CLIENT)
        is parked
    )


def test_a_failed_write_wakes_nobody_and_is_tried_again_at_the_next_commit():
    said: list[str] = []
    uow = UnitOfWork()
    failing = Journal("groups", said, fail=True)
    uow.seen(failing)
    with pytest.raises(OSError):
        uow.commit()
    assert said == []
    failing.fail = False
    uow.commit()
    assert said == ["groups written", "groups woken"]


def test_a_console_action_is_committed_too():
    said: list[str] = []
    uow = UnitOfWork()
    journal = Journal("groups", said)

    def delete(group_id: str) -> str:
        uow.seen(journal)
        return f"deleted {group_id}"

    assert committed(uow, delete)("g") == "deleted g"
    assert said == ["groups written", "groups woken"]


def test_an_evolved_api_commits_once():
    calls: list[int] = []

    class Counting(UnitOfWork):
        def commit(self) -> None:
            calls.append(1)

    api = attrs.evolve(_api(lambda ctx, request, version, client: "x"), read_only=False)
    api.handle(types.SimpleNamespace(services=types.SimpleNamespace(unit_of_work=Counting())), None, 0, CLIENT)
    assert calls == [1]
