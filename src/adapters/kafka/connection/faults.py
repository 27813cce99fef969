"""Fault injection for test suites: what a real broker cannot easily be made to do on cue.

`trafka.Broker` exposes these so that users can test their clients' retry and reconnect logic:

- `pause()` / `resume()`: requests are read but not answered until resumed (connections stay open);
- `drop_connections()`: every client connection is closed at once, as when a broker restarts;
- `fail_next(api_key, error_code, times)`: the next `times` requests of one API are answered with
  that error instead of being served.

A failed request has no side effect, as when Kafka refuses it: a failed Produce appends nothing, a
failed OffsetCommit commits nothing. APIs without side effects (Metadata, Fetch, ListOffsets, ...) are
served and then every error code in the response is set, the way a broker answers while it is not the
leader; APIs with side effects get a response built from the request. Nothing here costs the normal
request path more than one attribute check (`active`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import trio
from kafka.protocol.data_container import DataContainer

from ..api import CloseConnection, Deferred, Handle, KafkaApi, top_level_error


def _set_error_codes(message: DataContainer, error: int) -> None:
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
                if isinstance(item, DataContainer):
                    _set_error_codes(item, error)
        elif isinstance(value, DataContainer):
            _set_error_codes(value, error)


def can_fail(api: KafkaApi) -> bool:
    """Whether `fail_next` can answer this API with an error: read-only APIs, and those with a refusal
    built from the request (its own, or a top-level error code at every served version). ApiVersions
    is left out: it opens every connection, and its errors mean something else."""
    if api.name == "ApiVersions":
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
        self._failures: dict[int, list[int]] = {}  # api key -> [error code, remaining]
        self._connections: set[trio.CancelScope] = set()
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
    def connection_opened(self, scope: trio.CancelScope) -> None:
        self._connections.add(scope)

    def connection_closed(self, scope: trio.CancelScope) -> None:
        self._connections.discard(scope)

    def drop_connections(self) -> int:
        """Close every client connection now; returns how many there were."""
        scopes, self._connections = self._connections, set()
        for scope in scopes:
            scope.cancel()
        return len(scopes)

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    # -- failing requests ------------------------------------------------------------------------
    def fail_next(self, api_key: int, error_code: int, times: int) -> None:
        if times < 0:
            raise ValueError("times must be >= 0")
        if times:
            self._failures[api_key] = [error_code, times]
        else:
            self._failures.pop(api_key, None)
        self._update()

    def pending_failures(self, api_key: int) -> int:
        failure = self._failures.get(api_key)
        return failure[1] if failure else 0

    def _take(self, api_key: int) -> int | None:
        failure = self._failures.get(api_key)
        if failure is None:
            return None
        failure[1] -= 1
        if failure[1] == 0:
            del self._failures[api_key]
            self._update()
        return failure[0]

    def _update(self) -> None:
        self.active = self.paused or bool(self._failures)

    def layer(self, api: KafkaApi, serve: Handle) -> Handle:
        """`serve` (the API's handler, behind its authorization) with the armed failures applied; the
        connection uses it only while `active`."""
        api_key = api.api_key

        def serve_with_faults(ctx: Any, body: Any, version: int, client: Any) -> Any:
            error = self._take(api_key)
            if error is None:
                return serve(ctx, body, version, client)
            return error_response(api, serve, ctx, body, version, client, error)

        return serve_with_faults


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
