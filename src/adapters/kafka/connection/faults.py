"""Fault injection for test suites: what a real broker cannot easily be made to do on cue.

`trafka.Broker` exposes these so that users can test their clients' retry and reconnect logic:

- `pause()` / `resume()`: requests are read but not answered until resumed (connections stay open);
- `drop_connections()`: every client connection is closed at once, as when a broker restarts;
- `intercept(api_key, fn, times)`: every request of one API is first shown to `fn`, which lets it be
  served, answers it itself (an error, or a response of its own), serves it late or closes the
  connection (ADR 42);
- `fail_next(api_key, error_code, times)`: an interceptor answering the next `times` requests of one
  API with that error instead of serving them.

A failed request has no side effect, as when Kafka refuses it: a failed Produce appends nothing, a
failed OffsetCommit commits nothing. APIs without side effects (Metadata, Fetch, ListOffsets, ...) are
served and then every error code in the response is set, the way a broker answers while it is not the
leader; APIs with side effects get a response built from the request. Nothing here costs the normal
request path more than one attribute check (`active`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, NamedTuple

import attrs
import trio

from trafka.schema_codec.messages import Message

from ..api import CloseConnection, Deferred, Handle, Held, KafkaApi, Parked, top_level_error

log = logging.getLogger("trafka.faults")


@attrs.frozen
class Respond:
    """An interceptor's verdict: answer with `error` (from the request, nothing applied, as `fail_next`)
    or with `response`, a response object of the request's API built by the test."""

    error: int | None = None
    response: Any = None


@attrs.frozen
class Drop:
    """An interceptor's verdict: close the connection instead of answering."""


@attrs.frozen
class Delay:
    """An interceptor's verdict: `seconds` later, serve the request (or apply `then`). Meanwhile the
    connection reads nothing more, as Kafka mutes a connection while a request is in flight; other
    connections keep flowing."""

    seconds: float
    then: Respond | Drop | None = None


Verdict = Respond | Drop | Delay


class InterceptedRequest(NamedTuple):
    """What an interceptor sees: the API's name and key, the version, who sent it (the principal is a
    `KafkaPrincipal`: `str()` gives "User:alice"), and the decoded request (kafka-python's object;
    Produce's is a view with the same `topic_data` fields). A tuple: made per request, cheaply."""

    api: str
    api_key: int
    version: int
    client_id: str
    host: str
    principal: Any
    request: Any
    listener: str = "PLAINTEXT"  # the listener it came in on: "BROKER2" is node 2 of a trafka.Cluster


class Interceptor:
    """One installed interceptor: `fn` sees each request of `api_key` until `remaining` runs out (None:
    forever) or it is removed; `calls` holds every request it saw, `errors` what `fn` raised."""

    __slots__ = ("api_key", "fn", "remaining", "calls", "errors", "removed")

    def __init__(self, api_key: int, fn: Callable[[InterceptedRequest], Verdict | None], times: int | None) -> None:
        if times is not None and times < 1:
            raise ValueError("times must be None or >= 1")
        self.api_key = api_key
        self.fn = fn
        self.remaining = times
        self.calls: list[InterceptedRequest] = []
        self.errors: list[BaseException] = []
        self.removed = False


def _set_error_codes(message: Message, error: int) -> None:
    """Every `error_code` in the message tree set to `error`; a fetched partition loses its records (empty,
    never null: Kafka answers an errored partition with `MemoryRecords.EMPTY`)."""
    for name in message.fields:
        value = getattr(message, name, None)
        if name == "error_code":
            setattr(message, name, error)
        elif name == "records" and hasattr(message, "error_code"):
            setattr(message, name, b"")
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, Message):
                    _set_error_codes(item, error)
        elif isinstance(value, Message):
            _set_error_codes(value, error)


def can_fail(api: KafkaApi) -> bool:
    """Whether `fail_next` can answer this API with an error: read-only APIs, and those with a refusal
    built from the request (its own, or a top-level error code at every served version); not those
    whose room says no (`fault_injectable`: ApiVersions opens every connection, its errors mean
    something else)."""
    if not api.fault_injectable:
        return False
    if api.read_only or api.refusal is not top_level_error:
        return True
    error_code = api.response.fields.get("error_code")
    return error_code is not None and all(
        error_code.for_version_q(v) for v in range(api.min_version, api.max_version + 1)
    )


class Faults:
    """The faults armed on one broker. Methods are called from the broker's Trio thread."""

    def __init__(self) -> None:
        self._resumed = trio.Event()
        self._resumed.set()
        self._interceptors: dict[int, list[Interceptor]] = {}  # api key -> in the order installed
        self._fail_next: dict[int, Interceptor] = {}  # api key -> the interceptor `fail_next` armed
        self.intercepted: frozenset[int] = frozenset()  # the api keys with an interceptor
        self._connections: dict[trio.CancelScope, str | None] = {}  # -> the listener it came in on
        self.active = False  # the one check on the normal request path

    # -- pause / resume --------------------------------------------------------------------------
    @property
    def paused(self) -> bool:
        return not self._resumed.is_set()

    def pause(self) -> None:
        if not self.paused:
            self._resumed = trio.Event()
        self._update()

    def resume(self) -> None:
        self._resumed.set()
        self._update()

    async def wait_resumed(self) -> None:
        await self._resumed.wait()

    # -- connections -----------------------------------------------------------------------------
    def connection_opened(self, scope: trio.CancelScope, listener: str | None = None) -> None:
        self._connections[scope] = listener

    def connection_closed(self, scope: trio.CancelScope, listener: str | None = None) -> None:
        self._connections.pop(scope, None)

    def drop_connections(self, listener: str | None = None) -> int:
        """Close every client connection now (or those of one listener); returns how many there were."""
        scopes = [scope for scope, name in self._connections.items() if listener is None or name == listener]
        for scope in scopes:
            del self._connections[scope]
            scope.cancel()
        return len(scopes)

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    # -- interceptors ----------------------------------------------------------------------------
    def intercept(self, interceptor: Interceptor) -> Interceptor:
        self._interceptors.setdefault(interceptor.api_key, []).append(interceptor)
        self._update()
        return interceptor

    def remove(self, interceptor: Interceptor) -> None:
        interceptor.removed = True
        installed = self._interceptors.get(interceptor.api_key, [])
        if interceptor in installed:
            installed.remove(interceptor)
            if not installed:
                del self._interceptors[interceptor.api_key]
            self._update()

    def fail_next(self, api_key: int, error_code: int, times: int) -> None:
        """The next `times` requests of the API answered with `error_code` (0 disarms)."""
        if times < 0:
            raise ValueError("times must be >= 0")
        armed = self._fail_next.pop(api_key, None)
        if armed is not None:
            self.remove(armed)
        if times:
            verdict = Respond(error=error_code)
            self._fail_next[api_key] = self.intercept(Interceptor(api_key, lambda _: verdict, times))

    def pending_failures(self, api_key: int) -> int:
        armed = self._fail_next.get(api_key)
        return 0 if armed is None or armed.removed or armed.remaining is None else armed.remaining

    def _verdict(
        self, interceptors: list[Interceptor], api: KafkaApi, body: Any, version: int, client: Any
    ) -> Verdict | None:
        """The first verdict of the API's interceptors, each counting the request it saw."""
        seen = InterceptedRequest(
            api.name, api.api_key, version, client.client_id, client.host, client.principal, body, client.listener
        )
        for interceptor in list(interceptors):
            if interceptor.removed:
                continue
            interceptor.calls.append(seen)
            if interceptor.remaining is not None:
                interceptor.remaining -= 1
                if interceptor.remaining == 0:
                    self.remove(interceptor)
            try:
                verdict = interceptor.fn(seen)
            except Exception as exc:
                interceptor.errors.append(exc)
                log.exception("interceptor of %s failed: the connection is closed", api.name)
                raise CloseConnection(f"an interceptor of {api.name} raised {exc!r}") from exc
            if verdict is not None:
                if not isinstance(verdict, Respond | Drop | Delay):
                    error = TypeError(f"an interceptor returned {verdict!r}, not None, respond, delay or drop")
                    interceptor.errors.append(error)
                    raise CloseConnection(str(error))
                return verdict
        return None

    def _update(self) -> None:
        self.intercepted = frozenset(self._interceptors)
        self.active = self.paused or bool(self._interceptors)

    def layer(self, api: KafkaApi, serve: Handle) -> Handle:
        """`serve` (the API's handler, behind its authorization) behind the API's interceptors; the
        connection uses it only while `active`."""
        api_key = api.api_key
        interceptors = self._interceptors

        def serve_with_faults(ctx: Any, body: Any, version: int, client: Any) -> Any:
            installed = interceptors.get(api_key)
            if installed:
                verdict = self._verdict(installed, api, body, version, client)
                if verdict is not None:
                    return apply_verdict(verdict, api, serve, ctx, body, version, client)
            return serve(ctx, body, version, client)

        return serve_with_faults


def apply_verdict(
    verdict: Verdict, api: KafkaApi, serve: Handle, ctx: Any, body: Any, version: int, client: Any
) -> Any:
    if isinstance(verdict, Respond):
        if verdict.error is None:
            return verdict.response
        return error_response(api, serve, ctx, body, version, client, verdict.error)
    if isinstance(verdict, Drop):
        raise CloseConnection(f"{api.name} v{version} dropped by an interceptor")
    then = verdict.then

    def later() -> Any:
        if then is None:
            return serve(ctx, body, version, client)
        return apply_verdict(then, api, serve, ctx, body, version, client)

    return Held.after(verdict.seconds, later)


def error_response(api: KafkaApi, serve: Handle, ctx: Any, body: Any, version: int, client: Any, error: int) -> Any:
    """The request answered with `error` and no side effect: a read-only API served, then every error
    code set; any other answered from the request by its refusal."""
    if api.read_only:
        return serve_then_fail(serve, ctx, body, version, client, error)
    response = api.refuse(body, version, error)
    if response is None:  # Kafka has nothing to send (a Produce with acks=0)
        raise CloseConnection(f"error {error} on {api.name} v{version}, which has no response")
    return response


def serve_then_fail(serve: Handle, ctx: Any, body: Any, version: int, client: Any, error: int) -> Any:
    """A read-only request served, then every error code of its answer set to `error`."""
    outcome = serve(ctx, body, version, client)
    if type(outcome) is Parked:
        return outcome.then(lambda answer: _failed(answer, error, version))
    if isinstance(outcome, Deferred):
        return Deferred(_failing(outcome.wait, error, version))
    return _failed(outcome, error, version)


def _failed(response: Any, error: int, version: int) -> Any:
    as_kafka_python = getattr(response, "as_kafka_python", None)  # a fast-path answer
    if as_kafka_python is not None:
        response = as_kafka_python(version)
    _set_error_codes(response, error)
    return response


def _failing(wait: Callable[[], Any], error: int, version: int) -> Callable[[], Any]:
    async def wait_and_fail() -> Any:
        return _failed(await wait(), error, version)

    return wait_and_fail
