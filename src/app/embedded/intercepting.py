"""`broker.intercept(api, fn, times)`: what `trafka.testing` offers to answer any request its own way.

    handle = broker.intercept("Produce", lambda r: respond(error="NOT_LEADER_OR_FOLLOWER"), times=2)

`fn(request)` runs in the broker's loop for each request of the API (an `InterceptedRequest`: api,
api_key, version, client_id, host, principal and the decoded `request`) and returns `None` (serve it),
`respond(error=...)` (answered from the request with that Kafka error, nothing applied),
`respond(response)` (a response object of the API's, built by the test), `delay(seconds)` (served that
much later; that connection reads nothing meanwhile, other connections keep flowing) or `drop()` (the
connection is closed). The adapter's `Faults` does the work (ADR 42); this module turns names into
keys and codes and gives the test a handle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trafka.adapters.kafka.api import HandlerRegistry
from trafka.adapters.kafka.connection.faults import (
    Delay,
    Drop,
    Faults,
    InterceptedRequest,
    Interceptor,
    Respond,
    Verdict,
)
from trafka.domain.errors import ErrorCode

__all__ = ["InterceptedRequest", "Interception", "Verdict", "delay", "drop", "respond"]


class InterceptError(ValueError):
    """An unknown API or Kafka error name given to `intercept` or a verdict."""


def error_code(error: str | int | ErrorCode) -> int:
    """A Kafka error by name ("NOT_LEADER_OR_FOLLOWER", any case) or code."""
    if isinstance(error, str):
        try:
            return int(ErrorCode[error.upper()])
        except KeyError:
            raise InterceptError(f"unknown Kafka error {error!r}") from None
    return int(error)


def api_key(registry: HandlerRegistry, api: str | int) -> int:
    """A served API by name ("Produce", "produce") or key."""
    key = registry.key_of(api) if isinstance(api, str) else api if registry.versions(api) is not None else None
    if key is not None:
        return key
    raise InterceptError(f"unknown or unserved API {api!r}")


def respond(response: Any = None, *, error: str | int | ErrorCode | None = None) -> Respond:
    """Answer the request with Kafka `error` (built from the request; nothing is applied, as when Kafka
    refuses it) or with `response`, a response object of the request's API at its version."""
    if (response is None) == (error is None):
        raise InterceptError("respond takes a response or error=..., exactly one")
    if error is not None:
        return Respond(error=error_code(error))
    return Respond(response=response)


def delay(seconds: float, then: Respond | Drop | None = None) -> Delay:
    """Serve the request `seconds` later (or apply `then`, a `respond(...)` or `drop()`). Real seconds,
    also under the manual clock: it is the network that is slow."""
    if seconds < 0:
        raise InterceptError("delay takes seconds >= 0")
    return Delay(float(seconds), then)


def drop() -> Drop:
    """Close the connection instead of answering, as a broker that went away."""
    return Drop()


class Interception:
    """The handle `intercept` returns: `calls` (every request the function saw, oldest first),
    `remaining` (None: no limit), `errors` (what the function raised), `remove()`."""

    def __init__(self, interceptor: Interceptor, remove: Callable[[], None]) -> None:
        self._interceptor = interceptor
        self._remove = remove

    @property
    def calls(self) -> list[InterceptedRequest]:
        return list(self._interceptor.calls)

    @property
    def remaining(self) -> int | None:
        return 0 if self._interceptor.removed else self._interceptor.remaining

    @property
    def errors(self) -> list[BaseException]:
        return list(self._interceptor.errors)

    @property
    def active(self) -> bool:
        return not self._interceptor.removed

    def remove(self) -> None:
        """Uninstall it; the requests after this are served as if it never was."""
        if not self._interceptor.removed:
            self._remove()

    def __repr__(self) -> str:
        return f"<Interception of API {self._interceptor.api_key}: {len(self._interceptor.calls)} calls>"


def install(
    faults: Faults,
    registry: HandlerRegistry,
    api: str | int,
    fn: Callable[[InterceptedRequest], Verdict | None],
    times: int | None,
) -> Interceptor:
    if not callable(fn):
        raise InterceptError("intercept takes a function of the request")
    try:
        interceptor = Interceptor(api_key(registry, api), fn, times)
    except ValueError as exc:
        raise InterceptError(str(exc)) from None
    return faults.intercept(interceptor)
