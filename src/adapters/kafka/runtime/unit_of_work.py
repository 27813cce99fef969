"""One way to persist (cosmicpython's unit of work, ADR 79): what a call decided is written, and what it
released is woken, before its answer leaves.

The domain's group services decide and queue: the classic coordinator its group metadata, the KIP-848
coordinator its records and the classic answers a migration released, share groups their records,
share-partition state, dead-letter copies and released records, the GROUP config resource its
overrides. A `Participant` is the adapter-side runtime of one such service: `write()` takes what the
service has pending and hands it to its stores, `wake()` answers the requests the call released and
re-arms its timer. A participant enlists itself (`UnitOfWork.seen`) whenever it is called or its
domain service is reached through it, the way cosmicpython's repository remembers the aggregates it
handed out.

`commit()` writes every enlisted participant, then wakes them (writes first, so no woken request is
answered with a decision that is not yet stored). It runs:
- after every handler of every room: `KafkaApi` composes it around the handler it is given
  (`api.committing`), and after a plain `Deferred`'s wait, so a room cannot forget it and a test that
  calls `API.handle` gets it;
- after each step of a background runtime (a group tick, resolved regexes, a share lock expiry, a
  closed connection's share sessions), and after a console action (`committed`).

A request that reaches no participant (Produce, Fetch, Metadata...) pays one call and one empty check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar


class Participant(Protocol):
    """A runtime whose domain service queues what a call decided."""

    def write(self) -> None:
        """Take the domain's pending records and write them (a failed write is the participant's to
        report: the groups' logs go on in memory, as Kafka's coordinators do)."""

    def wake(self) -> None:
        """Answer the requests the written decisions released; re-arm the runtime's timer."""


class UnitOfWork:
    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[Participant, None] = {}  # in the order first seen (an ordered set)

    def seen(self, participant: Participant) -> None:
        """`participant` was called: it writes and wakes at the next `commit`."""
        self._seen[participant] = None

    def commit(self) -> None:
        """Write what every participant seen since the last commit has pending, then wake them. A
        participant seen again while waking (a wake that called another) is committed in turn."""
        while self._seen:
            seen, self._seen = self._seen, {}
            try:
                for participant in seen:
                    participant.write()
            except BaseException:
                self._seen = {**seen, **self._seen}  # nothing is lost: the next commit writes it
                raise
            for participant in seen:
                participant.wake()


T = TypeVar("T")


def committed(uow: UnitOfWork, call: Callable[..., T]) -> Callable[..., T]:
    """`call` (a console action reaching the groups outside any room) followed by a commit."""

    def call_and_commit(*args: Any, **kwargs: Any) -> T:
        result = call(*args, **kwargs)
        uow.commit()
        return result

    return call_and_commit
