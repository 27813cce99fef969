"""What a room declares about authorization: the vocabulary of `KafkaApi.authorization`.

A leaf (the domain and attrs only), so that `api.py` can name the type without importing the gate:
`Checks` (each `Check` a resource type, an operation and how to find the names in the request, with
an optional `PartialAnswer` for the APIs Kafka answers per resource) or a `Filter`. The gate that
applies them is `authorization.py`; what per-resource answers share is `partial.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res


@attrs.frozen
class Refused:
    """One request and what the table refused in it: resource type -> refused names."""

    handler: Any
    ctx: Any
    body: Any
    version: int
    client: Any
    denied: dict[Res, set[str]]
    allowed: Callable[[Op, Res, str], bool]

    def topics(self) -> set[str]:
        return self.denied.get(Res.TOPIC, set())

    @property
    def uses(self) -> Any:
        """The services the room's handler declares (ADR 103), for the partial answer's own lookups."""
        return self.handler.uses(self.ctx)

    def serve(self, **fields: Any) -> Any:
        """The handler's answer to the request with `fields` replaced by their authorized part."""
        for name, value in fields.items():
            setattr(self.body, name, value)
        return self.handler.handle(self.ctx, self.body, self.version, self.client)

    def response(self, **fields: Any) -> Any:
        response = self.handler.response(version=self.version, **fields)
        if "throttle_time_ms" in response.fields:
            response.throttle_time_ms = 0
        return response


Answer = Callable[[Refused], Any]


@attrs.frozen
class PartialAnswer:
    """The resource types an API answers one by one (from `min_version` on), and how."""

    resource_types: frozenset[Res]
    answer: Answer
    min_version: int = 0


Names = Callable[[Any, int, Any], Iterable[str]]  # (request, version, ctx) -> resource names


@attrs.frozen
class Check:
    resource_type: Res
    operation: Op
    names: Names
    cluster_grants: Op | None = None  # this operation on the cluster allows every name
    or_on_any: tuple[Op, Res] | None = None  # or this operation on any one resource of the type (Kafka's
    # authorizeByResourceType: an idempotent producer needs IDEMPOTENT_WRITE on the cluster or WRITE on a topic)
    internal_refused: bool = False  # an internal topic is refused whatever the ACLs say


@attrs.frozen
class Checks:
    """An API's checks, and how it answers refused resources one by one (None: it refuses as a whole)."""

    checks: tuple[Check, ...]
    partial: PartialAnswer | None = None


FilterAnswer = Callable[..., Any]  # (gate, api, ctx, request, version, client) -> the answer


@attrs.frozen
class Filter:
    """An API that serves what may be described and leaves the rest out: (gate, api, ctx, request,
    version, client) -> its answer."""

    answer: FilterAnswer


Authorization = Checks | Filter
