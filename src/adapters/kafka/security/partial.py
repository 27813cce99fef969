"""Requests authorized in part: the refused resources answered with their error, the others served.

Kafka's KafkaApis (and ControllerApis for the topic and config admin APIs) answers most requests that
name several topics, groups or config resources one resource at a time: the ones the principal may
not touch get TOPIC_/GROUP_/CLUSTER_AUTHORIZATION_FAILED in the response entry of their own, the rest
are served as if the refused ones had not been asked for. An API that answers so declares a
`PartialAnswer` beside its checks; the gate calls its `answer` with the names it refused. Each answer
splits the request, hands the authorized part to the handler, builds the refused part's entries from
the request (no side effect, nothing served for them) and merges both into one response of the shape
the client expects. What is here is what those answers share; each API's own is in its module.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import ResourceType as Res

from ..api import NO_RESPONSE, Deferred, Parked
from .checks import Answer as Answer  # re-exported: the rooms name them here
from .checks import PartialAnswer as PartialAnswer
from .checks import Refused as Refused

TOPIC_REFUSED = ErrorCode.TOPIC_AUTHORIZATION_FAILED


def shallow(body: Any, **fields: Any) -> Any:
    duplicate = copy.copy(body)
    for name, value in fields.items():
        setattr(duplicate, name, value)
    return duplicate


def merged(outcome: Any, add: Callable[[Any], None]) -> Any:
    """`outcome` (a response, or a Deferred one) with `add` applied to it once it is there."""
    if outcome is NO_RESPONSE:
        return outcome
    if type(outcome) is Parked:

        def added(response: Any) -> Any:
            add(response)
            return response

        return outcome.then(added)
    if isinstance(outcome, Deferred):
        wait = outcome.wait

        async def wait_and_add() -> Any:
            response = await wait()
            add(response)
            return response

        return Deferred(wait_and_add)
    add(outcome)
    return outcome


def as_message(response: Any, version: int) -> Any:
    """A fast-path answer (Produce, Fetch) as kafka-python's message, whose lists can be extended."""
    as_kafka_python = getattr(response, "as_kafka_python", None)
    return as_kafka_python(version) if as_kafka_python is not None else response


def served_and_refused(refused: Refused, field: str, kept: list, answered: str, extra: list) -> Any:
    """Serve `kept` (the request's `field` list), adding `extra` entries to the response's `answered`."""
    if not kept:
        return refused.response(**{answered: extra})
    return merged(refused.serve(**{field: kept}), lambda response: getattr(response, answered).extend(extra))


def extended(outcome: Any, answered: str, extra: list, version: int) -> Any:
    """The served response (as kafka-python's message, for a fast-path one) with `extra` added to `answered`."""

    def add(response: Any) -> Any:
        response = as_message(response, version)
        getattr(response, answered).extend(extra)
        return response

    if outcome is NO_RESPONSE:
        return outcome
    if type(outcome) is Parked:
        return outcome.then(add)
    if isinstance(outcome, Deferred):
        wait = outcome.wait

        async def wait_and_add() -> Any:
            return add(await wait())

        return Deferred(wait_and_add)
    return add(outcome)


TOPICS = frozenset({Res.TOPIC})


def entry_name(entry: Any, version: int, ctx: Any) -> str:
    """A request entry's topic name, for the APIs whose entries carry it as `name`."""
    return str(entry.name)


def topic_lists(
    field: str,
    answered: str,
    name_of: Callable[[Any, int, Any], str | None],
    refused_entry: Callable[[Any, Any, int], Any],
) -> Answer:
    """The answer of an API whose request lists topics in `field` and whose response lists them in
    `answered` (Fetch, ListOffsets, OffsetCommit...): each refused topic's entry is `refused_entry`
    (response class, request entry, version), built from the request; `name_of` finds an entry's name."""

    def answer(r: Refused) -> Any:
        denied = r.topics()
        entries = getattr(r.body, field)
        uses = r.handler.uses(r.ctx)
        extra = [
            refused_entry(r.handler.response, e, r.version) for e in entries if name_of(e, r.version, uses) in denied
        ]
        kept = [e for e in entries if name_of(e, r.version, uses) not in denied]
        if not kept:
            return r.response(**{answered: extra})
        return extended(r.serve(**{field: kept}), answered, extra, r.version)

    return answer
