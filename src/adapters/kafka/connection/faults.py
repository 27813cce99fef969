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

from ..api import CloseConnection, Deferred

# Served first, then every error code set: reading them changes nothing.
_READ_ONLY = {
    "Metadata",
    "Fetch",
    "ListOffsets",
    "OffsetFetch",
    "FindCoordinator",
    "DescribeGroups",
    "ListGroups",
    "DescribeConfigs",
    "DescribeCluster",
    "DescribeTopicPartitions",
    "DescribeProducers",
    "DescribeTransactions",
    "ListTransactions",
    "DescribeAcls",
    "ListPartitionReassignments",
}


def _produce(response_class: Any, request: Any, version: int, error: int) -> Any:
    topic_response = response_class.TopicProduceResponse
    partition_response = topic_response.PartitionProduceResponse
    return response_class(
        version=version,
        throttle_time_ms=0,
        responses=[
            topic_response(
                name=topic.name,
                partition_responses=[
                    partition_response(index=data.index, error_code=error, base_offset=-1, record_errors=[])
                    for data in topic.partition_data
                ],
            )
            for topic in request.topic_data
        ],
    )


def _offset_commit(response_class: Any, request: Any, version: int, error: int) -> Any:
    topic_response = response_class.OffsetCommitResponseTopic
    partition_response = topic_response.OffsetCommitResponsePartition
    return response_class(
        version=version,
        throttle_time_ms=0,
        topics=[
            topic_response(
                name=topic.name,
                partitions=[
                    partition_response(partition_index=p.partition_index, error_code=error) for p in topic.partitions
                ],
            )
            for topic in request.topics
        ],
    )


def _create_topics(response_class: Any, request: Any, version: int, error: int) -> Any:
    result = response_class.CreatableTopicResult
    return response_class(
        version=version, throttle_time_ms=0, topics=[result(name=t.name, error_code=error) for t in request.topics]
    )


def _delete_topics(response_class: Any, request: Any, version: int, error: int) -> Any:
    result = response_class.DeletableTopicResult
    names = [t.name for t in request.topics] if version >= 6 else list(request.topic_names)
    return response_class(
        version=version, throttle_time_ms=0, responses=[result(name=n, error_code=error) for n in names]
    )


def _create_acls(response_class: Any, request: Any, version: int, error: int) -> Any:
    result = response_class.AclCreationResult
    return response_class(
        version=version,
        throttle_time_ms=0,
        results=[result(error_code=error, error_message=None) for _ in request.creations],
    )


def _delete_acls(response_class: Any, request: Any, version: int, error: int) -> Any:
    result = response_class.DeleteAclsFilterResult
    return response_class(
        version=version,
        throttle_time_ms=0,
        filter_results=[result(error_code=error, error_message=None, matching_acls=[]) for _ in request.filters],
    )


def _alter_scram(response_class: Any, request: Any, version: int, error: int) -> Any:
    result = response_class.AlterUserScramCredentialsResult
    users = dict.fromkeys([d.name for d in request.deletions] + [u.name for u in request.upsertions])
    return response_class(
        version=version,
        throttle_time_ms=0,
        results=[result(user=u, error_code=error, error_message=None) for u in users],
    )


def _txn_offset_commit(response_class: Any, request: Any, version: int, error: int) -> Any:
    topic = response_class.TxnOffsetCommitResponseTopic
    partition = topic.TxnOffsetCommitResponsePartition
    return response_class(
        version=version,
        throttle_time_ms=0,
        topics=[
            topic(
                name=t.name,
                partitions=[partition(partition_index=p.partition_index, error_code=error) for p in t.partitions],
            )
            for t in request.topics
        ],
    )


_FROM_REQUEST: dict[str, Callable[[Any, Any, int, int], Any]] = {
    "Produce": _produce,
    "OffsetCommit": _offset_commit,
    "CreateTopics": _create_topics,
    "DeleteTopics": _delete_topics,
    "CreateAcls": _create_acls,
    "DeleteAcls": _delete_acls,
    "AlterUserScramCredentials": _alter_scram,
    "TxnOffsetCommit": _txn_offset_commit,
}


def _set_error_codes(message: DataContainer, error: int) -> None:
    """Every `error_code` in the message tree set to `error`; a fetched partition loses its records."""
    for name in message.fields:
        value = getattr(message, name, None)
        if name == "error_code":
            setattr(message, name, error)
        elif name == "records" and hasattr(message, "error_code"):
            setattr(message, name, None)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, DataContainer):
                    _set_error_codes(item, error)
        elif isinstance(value, DataContainer):
            _set_error_codes(value, error)


def can_fail(handler: Any) -> bool:
    """Whether `fail_next` can answer this API with an error: read-only APIs, the ones built from the
    request above, and those whose response has a top-level error code at every served version.
    ApiVersions is left out: it opens every connection, and its errors mean something else."""
    if handler.name == "ApiVersions":
        return False
    if handler.name in _READ_ONLY or handler.name in _FROM_REQUEST:
        return True
    error_code = handler.response.fields.get("error_code")
    return error_code is not None and all(
        error_code.for_version_q(v) for v in range(handler.min_version, handler.max_version + 1)
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

    def handle(self, handler: Any, ctx: Any, body: Any, version: int, client: Any) -> Any:
        """Serve one request with the armed faults applied (called only while `active`)."""
        error = self._take(handler.api_key)
        if error is None:
            return handler.handle(ctx, body, version, client)
        return error_response(handler, ctx, body, version, client, error)


def error_response(handler: Any, ctx: Any, body: Any, version: int, client: Any, error: int) -> Any:
    """The request answered with `error` and no side effect, as above (also the authorizer's refusal)."""
    if handler.name == "Produce" and body.acks == 0:
        raise CloseConnection(f"error {error} on an acks=0 produce")
    build = _FROM_REQUEST.get(handler.name)
    if build is not None:
        return build(handler.response, body, version, error)
    if handler.name in _READ_ONLY:
        outcome = handler.handle(ctx, body, version, client)
        if isinstance(outcome, Deferred):
            return Deferred(_failing(outcome.wait, error, version))
        return _failed(outcome, error, version)
    response = handler.response(version=version, error_code=error)
    if "throttle_time_ms" in response.fields:
        response.throttle_time_ms = 0
    return response


def response_from_request(handler: Any, body: Any, version: int, error: int) -> Any | None:
    """The request answered with `error` from its own fields only, serving nothing: the builders above,
    or a response whose top-level error code says it all; None when neither fits this API and version,
    and for a Produce with acks=0, which Kafka never answers."""
    if handler.name == "Produce" and body.acks == 0:
        return None
    build = _FROM_REQUEST.get(handler.name)
    if build is not None:
        return build(handler.response, body, version, error)
    error_code = handler.response.fields.get("error_code")
    if error_code is None or not error_code.for_version_q(version):
        return None
    response = handler.response(version=version, error_code=error)
    if "throttle_time_ms" in response.fields:
        response.throttle_time_ms = 0
    return response


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
