"""Requests authorized in part: the refused resources answered with their error, the others served.

Kafka's KafkaApis (and ControllerApis for the topic and config admin APIs) answers most requests that
name several topics, groups or config resources one resource at a time: the ones the principal may
not touch get TOPIC_/GROUP_/CLUSTER_AUTHORIZATION_FAILED in the response entry of their own, the rest
are served as if the refused ones had not been asked for. `AuthorizationGate` calls `answer` with the
names its table refused; each function here splits the request, hands the authorized part to the
handler, builds the refused part's entries from the request (no side effect, nothing served for them)
and merges both into one response of the shape the client expects.

Per API, as Kafka does it:
- Produce, Fetch, ListOffsets, OffsetCommit, DescribeProducers, TxnOffsetCommit, OffsetDelete,
  DeleteRecords, CreatePartitions: the refused topics' entries (every partition) carry the error and
  nothing read for them (a refused Fetch partition has no records and a high watermark of -1, a
  refused ListOffsets partition offset and timestamp -1, as Kafka's error entries).
- CreateTopics: "Authorization failed." per refused topic.
- DeleteTopics: a topic the principal may not DESCRIBE is refused whether it exists or not, a
  describable but absent one is UNKNOWN_TOPIC_OR_PARTITION (so existence leaks only to those who may
  see it), and one named by id and not describable is refused without its name.
- DescribeConfigs / AlterConfigs / IncrementalAlterConfigs: a refused broker resource gets
  CLUSTER_AUTHORIZATION_FAILED, a refused topic TOPIC_AUTHORIZATION_FAILED, each with Kafka's message.
- AddPartitionsToTxn: nothing is added when any partition fails; the refused ones get
  TOPIC_AUTHORIZATION_FAILED, absent ones UNKNOWN_TOPIC_OR_PARTITION, the others OPERATION_NOT_ATTEMPTED.
- DeleteGroups and FindCoordinator (v4+): per group or coordinator key.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import ZERO_UUID

from ..api import NO_RESPONSE, CloseConnection, Deferred
from ..connection.faults import error_response
from .refused_entries import (
    MESSAGES,
    TOPIC_REFUSED,
    describe_producers_refused,
    fetch_refused,
    list_offsets_refused,
    no_coordinator,
    offset_commit_refused,
    transaction_refused,
    txn_offset_commit_refused,
)

TOPIC_CONFIG, BROKER_CONFIG, BROKER_LOGGER_CONFIG = 2, 4, 8
WITH_LOGGERS, WITHOUT_LOGGERS = frozenset({BROKER_CONFIG, BROKER_LOGGER_CONFIG}), frozenset({BROKER_CONFIG})


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


def shallow(body: Any, **fields: Any) -> Any:
    duplicate = copy.copy(body)
    for name, value in fields.items():
        setattr(duplicate, name, value)
    return duplicate


def merged(outcome: Any, add: Callable[[Any], None]) -> Any:
    """`outcome` (a response, or a Deferred one) with `add` applied to it once it is there."""
    if outcome is NO_RESPONSE:
        return outcome
    if isinstance(outcome, Deferred):
        wait = outcome.wait

        async def wait_and_add() -> Any:
            response = await wait()
            add(response)
            return response

        return Deferred(wait_and_add)
    add(outcome)
    return outcome


def _message(response: Any, version: int) -> Any:
    """A fast-path answer (Produce, Fetch) as kafka-python's message, whose lists can be extended."""
    as_kafka_python = getattr(response, "as_kafka_python", None)
    return as_kafka_python(version) if as_kafka_python is not None else response


def _served_and_refused(refused: Refused, field: str, kept: list, answered: str, extra: list) -> Any:
    """Serve `kept` (the request's `field` list), adding `extra` entries to the response's `answered`."""
    if not kept:
        return refused.response(**{answered: extra})
    return merged(refused.serve(**{field: kept}), lambda response: getattr(response, answered).extend(extra))


# -- topic lists: the refused entries built from the request, never served ----------------------------


def _fetch_entry(entry, version, ctx) -> str | None:
    if version < 13:
        return entry.topic
    topic = ctx.catalog.by_id(entry.topic_id)
    return topic.name if topic is not None else None


def _named(entry, version, ctx) -> str:
    return entry.name


# API -> (request list, response list, the topic name of a request entry, the refused entry's answer)
_TOPIC_LISTS: dict[str, tuple[str, str, Callable[[Any, int, Any], str | None], Callable[[Any, Any, int], Any]]] = {
    "Fetch": ("topics", "responses", _fetch_entry, fetch_refused),
    "ListOffsets": ("topics", "topics", _named, list_offsets_refused),
    "OffsetCommit": ("topics", "topics", _named, offset_commit_refused),
    "DescribeProducers": ("topics", "topics", _named, describe_producers_refused),
    "TxnOffsetCommit": ("topics", "topics", _named, txn_offset_commit_refused),
}


def _topic_lists(r: Refused) -> Any:
    field, answered, name_of, refusal = _TOPIC_LISTS[r.handler.name]
    denied = r.topics()
    entries = getattr(r.body, field)
    extra = [refusal(r.handler.response, e, r.version) for e in entries if name_of(e, r.version, r.ctx) in denied]
    kept = [e for e in entries if name_of(e, r.version, r.ctx) not in denied]
    if not kept:
        return r.response(**{answered: extra})
    return _extended(r.serve(**{field: kept}), answered, extra, r.version)


def _extended(outcome: Any, answered: str, extra: list, version: int) -> Any:
    """The served response (as kafka-python's message, for a fast-path one) with `extra` added to `answered`."""

    def add(response: Any) -> Any:
        response = _message(response, version)
        getattr(response, answered).extend(extra)
        return response

    if outcome is NO_RESPONSE:
        return outcome
    if isinstance(outcome, Deferred):
        wait = outcome.wait

        async def wait_and_add() -> Any:
            return add(await wait())

        return Deferred(wait_and_add)
    return add(outcome)


def _produce(r: Refused) -> Any:
    denied = r.topics()
    if r.body.acks == 0:
        raise CloseConnection(f"{r.client.principal} may not write to {sorted(denied)} (acks=0)")
    refused = [t for t in r.body.topic_data if t.name in denied]
    kept = [t for t in r.body.topic_data if t.name not in denied]
    failed = error_response(r.handler, r.ctx, shallow(r.body, topic_data=refused), r.version, r.client, TOPIC_REFUSED)
    if not kept:
        return failed
    return _extended(r.serve(topic_data=kept), "responses", _message(failed, r.version).responses, r.version)


def _create_topics(r: Refused) -> Any:
    denied = r.topics()
    refused = [t for t in r.body.topics if t.name in denied]
    failed = error_response(r.handler, r.ctx, shallow(r.body, topics=refused), r.version, r.client, TOPIC_REFUSED)
    for result in failed.topics:
        result.error_message = "Authorization failed."
    kept = [t for t in r.body.topics if t.name not in denied]
    return _served_and_refused(r, "topics", kept, "topics", failed.topics)


# -- topic admin -------------------------------------------------------------------------------------


def _delete_topics(r: Refused) -> Any:
    Result = r.handler.response.DeletableTopicResult
    catalog, denied = r.ctx.catalog, r.topics()
    message = MESSAGES[TOPIC_REFUSED] if r.version >= 5 else None

    def refusal(name: str | None, topic_id: Any) -> Any:
        return Result(name=name, topic_id=topic_id, error_code=TOPIC_REFUSED, error_message=message)

    def describable(name: str) -> bool:
        return r.allowed(Op.DESCRIBE, Res.TOPIC, name)

    if r.version < 6:
        refused = [n for n in r.body.topic_names if n in denied and (not describable(n) or catalog.get(n) is not None)]
        kept = [n for n in r.body.topic_names if n not in refused]
        extra = [refusal(n, None) for n in refused]
        return _served_and_refused(r, "topic_names", kept, "responses", extra)
    kept, extra = [], []
    for entry in r.body.topics:
        if entry.name:
            if entry.name in denied and (not describable(entry.name) or catalog.get(entry.name) is not None):
                extra.append(refusal(entry.name, ZERO_UUID))
                continue
        else:
            topic = catalog.by_id(entry.topic_id)
            if topic is not None and topic.name in denied:
                extra.append(refusal(topic.name if describable(topic.name) else None, entry.topic_id))
                continue
        kept.append(entry)
    return _served_and_refused(r, "topics", kept, "responses", extra)


def _create_partitions(r: Refused) -> Any:
    Result = r.handler.response.CreatePartitionsTopicResult
    denied = r.topics()
    kept = [t for t in r.body.topics if t.name not in denied]
    extra = [
        Result(name=t.name, error_code=TOPIC_REFUSED, error_message=None) for t in r.body.topics if t.name in denied
    ]
    return _served_and_refused(r, "topics", kept, "results", extra)


def _delete_records(r: Refused) -> Any:
    Topic = r.handler.response.DeleteRecordsTopicResult
    Partition = Topic.DeleteRecordsPartitionResult
    denied = r.topics()
    kept = [t for t in r.body.topics if t.name not in denied]
    extra = [
        Topic(
            name=t.name,
            partitions=[
                Partition(partition_index=p.partition_index, low_watermark=-1, error_code=TOPIC_REFUSED)
                for p in t.partitions
            ],
        )
        for t in r.body.topics
        if t.name in denied
    ]
    return _served_and_refused(r, "topics", kept, "topics", extra)


def _offset_delete(r: Refused) -> Any:
    Topic = r.handler.response.OffsetDeleteResponseTopic
    Partition = Topic.OffsetDeleteResponsePartition
    denied = r.topics()
    kept = [t for t in r.body.topics if t.name not in denied]
    extra = [
        Topic(
            name=t.name,
            partitions=[Partition(partition_index=p.partition_index, error_code=TOPIC_REFUSED) for p in t.partitions],
        )
        for t in r.body.topics
        if t.name in denied
    ]
    if not kept:
        return r.response(error_code=ErrorCode.NONE, topics=extra)
    return merged(r.serve(topics=kept), lambda response: response.topics.extend(extra))


# -- config resources --------------------------------------------------------------------------------


def _config_error(r: Refused, resource: Any, broker_types: frozenset[int]) -> ErrorCode | None:
    if resource.resource_type in broker_types and r.denied.get(Res.CLUSTER):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    if resource.resource_type == TOPIC_CONFIG and resource.resource_name in r.topics():
        return TOPIC_REFUSED
    return None


def _configs(entry: str, answered: str, broker_types: frozenset[int], **empty: Any) -> Answer:
    """Per config resource; `broker_types` are the resource types the cluster check covers (legacy
    AlterConfigs leaves broker loggers to the handler's INVALID_REQUEST, as Kafka's ControllerApis)."""

    def answer(r: Refused) -> Any:
        Result = getattr(r.handler.response, entry)
        kept, extra = [], []
        for resource in r.body.resources:
            error = _config_error(r, resource, broker_types)
            if error is None:
                kept.append(resource)
            else:
                extra.append(
                    Result(
                        error_code=error,
                        error_message=MESSAGES[error],
                        resource_type=resource.resource_type,
                        resource_name=resource.resource_name,
                        **empty,
                    )
                )
        return _served_and_refused(r, "resources", kept, answered, extra)

    return answer


# -- transactions ------------------------------------------------------------------------------------


def _add_partitions_to_txn(r: Refused) -> Any:
    """Kafka adds nothing when any partition fails: every partition gets an error, none is added."""
    Topic = r.handler.response.AddPartitionsToTxnTopicResult
    Partition = Topic.AddPartitionsToTxnPartitionResult
    denied = r.topics()
    results = []
    for t in r.body.v3_and_below_topics:
        topic = r.ctx.catalog.get(t.name)
        errors = []
        for p in t.partitions:
            if t.name in denied:
                errors.append(Partition(partition_index=p, partition_error_code=TOPIC_REFUSED))
            elif topic is None or not 0 <= p < topic.partition_count:
                errors.append(Partition(partition_index=p, partition_error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            else:
                errors.append(Partition(partition_index=p, partition_error_code=ErrorCode.OPERATION_NOT_ATTEMPTED))
        results.append(Topic(name=t.name, results_by_partition=errors))
    return r.response(results_by_topic_v3_and_below=results)


# -- groups and coordinators -------------------------------------------------------------------------


def _delete_groups(r: Refused) -> Any:
    Result = r.handler.response.DeletableGroupResult
    denied = r.denied[Res.GROUP]
    kept = [g for g in dict.fromkeys(r.body.groups_names) if g not in denied]
    extra = [
        Result(group_id=g, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
        for g in dict.fromkeys(r.body.groups_names)
        if g in denied
    ]
    return _served_and_refused(r, "groups_names", kept, "results", extra)


def _find_coordinator(r: Refused) -> Any:
    """v4+ answers each key; before v4 the one key's refusal is the whole answer (`whole` below)."""
    key_type = r.body.key_type
    resource, error = (
        (Res.GROUP, ErrorCode.GROUP_AUTHORIZATION_FAILED)
        if key_type == 0
        else (Res.TRANSACTIONAL_ID, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    )
    denied = r.denied.get(resource, set())
    Coordinator = r.handler.response.Coordinator
    kept = [k for k in r.body.coordinator_keys if k not in denied]
    extra = [
        Coordinator(key=k, node_id=-1, host="", port=-1, error_code=error, error_message=None)
        for k in r.body.coordinator_keys
        if k in denied
    ]
    return _served_and_refused(r, "coordinator_keys", kept, "coordinators", extra)


WHOLE: dict[str, Callable[[Any, Any, int, int], Any]] = {
    "AddPartitionsToTxn": transaction_refused,
    "FindCoordinator": no_coordinator,
}
"""APIs whose refusal as a whole is not faults' error response (no top-level error code, or no node)."""


@attrs.frozen
class PartialAnswer:
    """The resource types an API answers one by one (from `min_version` on), and how."""

    resource_types: frozenset[Res]
    answer: Answer
    min_version: int = 0


_TOPICS = frozenset({Res.TOPIC})
_CONFIGS = frozenset({Res.CLUSTER, Res.TOPIC})

PARTIAL: dict[str, PartialAnswer] = {
    "Produce": PartialAnswer(_TOPICS, _produce),
    "CreateTopics": PartialAnswer(_TOPICS, _create_topics),
    **{name: PartialAnswer(_TOPICS, _topic_lists) for name in _TOPIC_LISTS},
    "DeleteTopics": PartialAnswer(_TOPICS, _delete_topics),
    "CreatePartitions": PartialAnswer(_TOPICS, _create_partitions),
    "DeleteRecords": PartialAnswer(_TOPICS, _delete_records),
    "OffsetDelete": PartialAnswer(_TOPICS, _offset_delete),
    "DescribeConfigs": PartialAnswer(_CONFIGS, _configs("DescribeConfigsResult", "results", WITH_LOGGERS, configs=[])),
    "AlterConfigs": PartialAnswer(_CONFIGS, _configs("AlterConfigsResourceResponse", "responses", WITHOUT_LOGGERS)),
    "IncrementalAlterConfigs": PartialAnswer(
        _CONFIGS, _configs("AlterConfigsResourceResponse", "responses", WITH_LOGGERS)
    ),
    "AddPartitionsToTxn": PartialAnswer(_TOPICS, _add_partitions_to_txn),
    "DeleteGroups": PartialAnswer(frozenset({Res.GROUP}), _delete_groups),
    "FindCoordinator": PartialAnswer(frozenset({Res.GROUP, Res.TRANSACTIONAL_ID}), _find_coordinator, min_version=4),
}
"""API name -> how it answers refused resources one by one; any other refusal fails the whole request."""
