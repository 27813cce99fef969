"""The registry of API handlers: what the broker serves, and so what ApiVersions advertises.

A handler module registers a function per API key with the kafka-python request and response classes
and the version range it honours. ApiVersions is computed from the registry, so the broker never
advertises an API or version it cannot serve.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import attrs


@attrs.frozen
class Deferred:
    """A response that needs waiting for (a long-poll Fetch); the connection awaits it in a task."""

    wait: Callable[[], Awaitable[Any]]


NO_RESPONSE = object()
"""Returned by a handler when Kafka sends nothing back (Produce with acks=0)."""


class CloseConnection(Exception):
    """Raised by a handler when Kafka would close the connection (an acks=0 produce that failed)."""


Handle = Callable[[Any, Any, int, Any], Any]


@attrs.frozen
class ApiHandler:
    api_key: int
    request: Any
    response: Any
    min_version: int
    max_version: int
    handle: Handle
    name: str = attrs.field(init=False)  # "Produce": what logs and metrics call the API, read per request

    @name.default
    def _name(self) -> str:
        return str(self.request.__name__).removesuffix("Request")


class HandlerRegistry:
    def __init__(self) -> None:
        self._handlers: dict[int, ApiHandler] = {}

    def register(self, request: Any, response: Any, versions: tuple[int, int], handle: Handle) -> None:
        low, high = versions
        schema_low = int(str(request.json["validVersions"]).split("-")[0])
        if not schema_low <= low <= high <= request.max_version:
            raise ValueError(f"{request.__name__} has no schema for versions {low}-{high}")
        api_key = request.API_KEY
        if api_key in self._handlers:
            raise ValueError(f"{request.__name__} registered twice")
        self._handlers[api_key] = ApiHandler(api_key, request, response, low, high, handle)

    def get(self, api_key: int) -> ApiHandler | None:
        return self._handlers.get(api_key)

    def supported(self) -> list[tuple[int, int, int]]:
        """(api_key, min_version, max_version) for every served API, by key."""
        return [(h.api_key, h.min_version, h.max_version) for _, h in sorted(self._handlers.items())]
