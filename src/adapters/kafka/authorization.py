"""Which resource and operation every API needs, in one table, and the gate that applies it.

`ACL_TABLE` maps an API to its checks, in the order Kafka's KafkaApis makes them: each names a
resource type, an operation and how to find the resource names in the request (a transactional id,
a group id, the topics, the cluster). `AuthorizationGate.handle` runs before the handler when an
authorizer is configured (`authorizer.class.name`):

- a denied group, transactional id or cluster check answers the whole request with
  GROUP_/TRANSACTIONAL_ID_/CLUSTER_AUTHORIZATION_FAILED (`faults.error_response` builds the
  response, with no side effect);
- denied topics in Produce, CreateTopics, Fetch, ListOffsets, OffsetCommit and DescribeProducers are
  answered TOPIC_AUTHORIZATION_FAILED one by one while the others are served; in the other APIs a
  denied topic fails the request with that code;
- CreateTopics needs CREATE on the cluster or on each topic;
- Metadata leaves out topics the principal may not DESCRIBE (or answers TOPIC_AUTHORIZATION_FAILED
  for one it named), and does not auto-create a topic without CREATE;
- authorized-operations fields (Metadata, DescribeCluster, DescribeGroups) carry what the
  authorizer allows this principal.

APIs absent from the table (ApiVersions, the SASL APIs) need no authorization, as in Kafka.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import CLUSTER_NAME, AclOperation as Op, Authorizer, ResourceType as Res

from .faults import can_fail, error_response
from .handlers.metadata import error_entry
from .registry import NO_RESPONSE, CloseConnection, Deferred

ERRORS = {
    Res.TOPIC: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    Res.GROUP: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    Res.CLUSTER: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    Res.TRANSACTIONAL_ID: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
}

Names = Callable[[Any, int, Any], Iterable[str]]  # (request, version, ctx) -> resource names


@attrs.frozen
class Check:
    resource_type: Res
    operation: Op
    names: Names


def _topics(field: str = "topics", name: str = "name") -> Names:
    return lambda request, version, ctx: [getattr(t, name) for t in getattr(request, field) or ()]


def _attr(field: str) -> Names:
    return lambda request, version, ctx: [value] if (value := getattr(request, field, None)) else []


def _cluster(request, version, ctx) -> list[str]:
    return [CLUSTER_NAME]


def _fetch_topics(request, version, ctx) -> list[str]:
    if version < 13:
        return [t.topic for t in request.topics]
    return [topic.name for t in request.topics if (topic := ctx.catalog.by_id(t.topic_id)) is not None]


def _offset_fetch_groups(request, version, ctx) -> list[str]:
    return [g.group_id for g in request.groups] if version >= 8 else [request.group_id]


def _offset_fetch_topics(request, version, ctx) -> list[str]:
    if version >= 8:
        return [t.name for g in request.groups for t in g.topics or ()]
    return [t.name for t in request.topics or ()]


def _coordinator_keys(key_type: int) -> Names:
    def names(request, version, ctx) -> list[str]:
        if request.key_type != key_type:
            return []
        return list(request.coordinator_keys) if version >= 4 else [request.key]

    return names


def _delete_topic_names(request, version, ctx) -> list[str]:
    if version < 6:
        return list(request.topic_names)
    out = []
    for t in request.topics:
        topic = ctx.catalog.by_id(t.topic_id) if not t.name else None
        out.append(t.name or (topic.name if topic is not None else ""))
    return [n for n in out if n]


def _config_resources(resource_type: int) -> Names:
    return lambda request, version, ctx: [r.resource_name for r in request.resources if r.resource_type == resource_type]


_TOPIC_CONFIG, _BROKER_CONFIG = 2, 4


def _broker_configs(request, version, ctx) -> list[str]:
    return [CLUSTER_NAME] if any(r.resource_type == _BROKER_CONFIG for r in request.resources) else []


def _idempotent(request, version, ctx) -> list[str]:
    return [] if request.transactional_id else [CLUSTER_NAME]


TXN_WRITE = Check(Res.TRANSACTIONAL_ID, Op.WRITE, _attr("transactional_id"))

ACL_TABLE: dict[str, tuple[Check, ...]] = {
    "Produce": (TXN_WRITE, Check(Res.TOPIC, Op.WRITE, _topics("topic_data"))),
    "Fetch": (Check(Res.TOPIC, Op.READ, _fetch_topics),),
    "ListOffsets": (Check(Res.TOPIC, Op.DESCRIBE, _topics()),),
    "OffsetCommit": (Check(Res.GROUP, Op.READ, _attr("group_id")), Check(Res.TOPIC, Op.READ, _topics())),
    "OffsetFetch": (Check(Res.GROUP, Op.DESCRIBE, _offset_fetch_groups), Check(Res.TOPIC, Op.DESCRIBE, _offset_fetch_topics)),
    "OffsetDelete": (Check(Res.GROUP, Op.DELETE, _attr("group_id")), Check(Res.TOPIC, Op.READ, _topics())),
    "FindCoordinator": (
        Check(Res.GROUP, Op.DESCRIBE, _coordinator_keys(0)), Check(Res.TRANSACTIONAL_ID, Op.DESCRIBE, _coordinator_keys(1)),
    ),
    "JoinGroup": (Check(Res.GROUP, Op.READ, _attr("group_id")),),
    "SyncGroup": (Check(Res.GROUP, Op.READ, _attr("group_id")),),
    "Heartbeat": (Check(Res.GROUP, Op.READ, _attr("group_id")),),
    "LeaveGroup": (Check(Res.GROUP, Op.READ, _attr("group_id")),),
    "DeleteGroups": (Check(Res.GROUP, Op.DELETE, lambda r, v, c: list(r.groups_names)),),
    "CreateTopics": (Check(Res.TOPIC, Op.CREATE, _topics()),),
    "DeleteTopics": (Check(Res.TOPIC, Op.DELETE, _delete_topic_names),),
    "CreatePartitions": (Check(Res.TOPIC, Op.ALTER, _topics()),),
    "DeleteRecords": (Check(Res.TOPIC, Op.DELETE, _topics()),),
    "DescribeConfigs": (
        Check(Res.CLUSTER, Op.DESCRIBE_CONFIGS, _broker_configs),
        Check(Res.TOPIC, Op.DESCRIBE_CONFIGS, _config_resources(_TOPIC_CONFIG)),
    ),
    "AlterConfigs": (
        Check(Res.CLUSTER, Op.ALTER_CONFIGS, _broker_configs), Check(Res.TOPIC, Op.ALTER_CONFIGS, _config_resources(_TOPIC_CONFIG)),
    ),
    "IncrementalAlterConfigs": (
        Check(Res.CLUSTER, Op.ALTER_CONFIGS, _broker_configs), Check(Res.TOPIC, Op.ALTER_CONFIGS, _config_resources(_TOPIC_CONFIG)),
    ),
    "InitProducerId": (TXN_WRITE, Check(Res.CLUSTER, Op.IDEMPOTENT_WRITE, _idempotent)),
    "AddPartitionsToTxn": (TXN_WRITE, Check(Res.TOPIC, Op.WRITE, _topics())),
    "AddOffsetsToTxn": (TXN_WRITE, Check(Res.GROUP, Op.READ, _attr("group_id"))),
    "TxnOffsetCommit": (TXN_WRITE, Check(Res.GROUP, Op.READ, _attr("group_id")), Check(Res.TOPIC, Op.READ, _topics())),
    "EndTxn": (TXN_WRITE,),
    "DescribeProducers": (Check(Res.TOPIC, Op.READ, _topics()),),
    "DescribeTopicPartitions": (Check(Res.TOPIC, Op.DESCRIBE, _topics()),),
    "DescribeTransactions": (Check(Res.TRANSACTIONAL_ID, Op.DESCRIBE, lambda r, v, c: list(r.transactional_ids)),),
    "DescribeAcls": (Check(Res.CLUSTER, Op.DESCRIBE, _cluster),),
    "CreateAcls": (Check(Res.CLUSTER, Op.ALTER, _cluster),),
    "DeleteAcls": (Check(Res.CLUSTER, Op.ALTER, _cluster),),
    "DescribeUserScramCredentials": (Check(Res.CLUSTER, Op.DESCRIBE, _cluster),),
    "AlterUserScramCredentials": (Check(Res.CLUSTER, Op.ALTER, _cluster),),
    "AlterPartitionReassignments": (Check(Res.CLUSTER, Op.ALTER, _cluster),),
    "ListPartitionReassignments": (Check(Res.CLUSTER, Op.DESCRIBE, _cluster),),
}
"""API name -> its checks. Metadata, DescribeCluster, DescribeGroups, ListGroups and ListTransactions
filter or annotate their answers instead (`_SPECIAL`); `UNCHECKED` need nothing, as in Kafka."""

UNCHECKED = frozenset({"ApiVersions", "SaslHandshake", "SaslAuthenticate"})


class AuthorizationGate:
    def __init__(self, authorizer: Authorizer) -> None:
        self.authorizer = authorizer

    def allowed(self, client: Any, operation: Op, resource_type: Res, name: str) -> bool:
        return self.authorizer.authorize(client.principal, client.host, operation, resource_type, name)

    def operations(self, client: Any, resource_type: Res, name: str) -> set[int]:
        return {int(op) for op in self.authorizer.authorized_operations(client.principal, client.host, resource_type, name)}

    def handle(self, handler: Any, ctx: Any, body: Any, version: int, client: Any) -> Any:
        special = _SPECIAL.get(handler.name)
        if special is not None:
            return special(self, handler, ctx, body, version, client)
        for check in ACL_TABLE.get(handler.name, ()):
            names = list(check.names(body, version, ctx))
            denied = {n for n in names if not self.allowed(client, check.operation, check.resource_type, n)}
            if check.resource_type is Res.TOPIC and handler.name == "CreateTopics" and denied:
                if self.allowed(client, Op.CREATE, Res.CLUSTER, CLUSTER_NAME):
                    denied = set()
            if not denied:
                continue
            error = ERRORS[check.resource_type]
            if check.resource_type is Res.TOPIC and handler.name in _PARTIAL:
                return _PARTIAL[handler.name](handler, ctx, body, version, client, denied, error)
            if not can_fail(handler):
                raise CloseConnection(f"{client.principal} is not authorized for {handler.name}")
            return error_response(handler, ctx, body, version, client, error)
        return handler.handle(ctx, body, version, client)


# -- topics answered one by one ----------------------------------------------------------------------


def _produce_partially(handler, ctx, body, version, client, denied, error):
    refused = [t for t in body.topic_data if t.name in denied]
    body.topic_data = [t for t in body.topic_data if t.name not in denied]
    if body.acks == 0:
        raise CloseConnection(f"{client.principal} may not write to {sorted(denied)} (acks=0)")
    failed = error_response(handler, ctx, _shallow(body, topic_data=refused), version, client, error)
    if not body.topic_data:
        return failed
    return _combined(handler.handle(ctx, body, version, client), failed, "responses", version)


def _create_topics_partially(handler, ctx, body, version, client, denied, error):
    refused = [t for t in body.topics if t.name in denied]
    body.topics = [t for t in body.topics if t.name not in denied]
    failed = error_response(handler, ctx, _shallow(body, topics=refused), version, client, error)
    for result in failed.topics:
        result.error_message = "Authorization failed."
    if not body.topics:
        return failed
    return _merged(handler.handle(ctx, body, version, client), lambda response: response.topics.extend(failed.topics))


def _fetch_entry(entry, version, ctx) -> str | None:
    if version < 13:
        return entry.topic
    topic = ctx.catalog.by_id(entry.topic_id)
    return topic.name if topic is not None else None


# API -> (request list, response list, the topic name of a request entry): APIs whose denied topics are
# answered with the error per topic from the same response shape, the others served.
_TOPIC_LISTS: dict[str, tuple[str, str, Callable[[Any, int, Any], str | None]]] = {
    "Fetch": ("topics", "responses", _fetch_entry),
    "ListOffsets": ("topics", "topics", lambda entry, version, ctx: entry.name),
    "OffsetCommit": ("topics", "topics", lambda entry, version, ctx: entry.name),
    "DescribeProducers": ("topics", "topics", lambda entry, version, ctx: entry.name),
}


def _topics_partially(handler, ctx, body, version, client, denied, error):
    field, answered, name_of = _TOPIC_LISTS[handler.name]
    entries = getattr(body, field)
    refused = [e for e in entries if name_of(e, version, ctx) in denied]
    setattr(body, field, [e for e in entries if name_of(e, version, ctx) not in denied])
    refused_request = _shallow(body, **{field: refused})
    if handler.name == "Fetch":
        refused_request.max_wait_ms = 0  # the refusal never waits for data it will not send
    failed = error_response(handler, ctx, refused_request, version, client, error)
    if not getattr(body, field):
        return failed
    return _combined(handler.handle(ctx, body, version, client), failed, answered, version)


def _message(response: Any, version: int) -> Any:
    """A fast-path answer (Produce, Fetch) as kafka-python's message, whose lists can be extended."""
    as_kafka_python = getattr(response, "as_kafka_python", None)
    return as_kafka_python(version) if as_kafka_python is not None else response


def _combined(outcome: Any, failed: Any, answered: str, version: int) -> Any:
    """The served response with the refused entries of `failed` added to its `answered` list."""
    if outcome is NO_RESPONSE:
        return outcome
    if not isinstance(outcome, Deferred) and not isinstance(failed, Deferred):
        served = _message(outcome, version)
        getattr(served, answered).extend(getattr(_message(failed, version), answered))
        return served

    async def both() -> Any:
        served = _message(await outcome.wait() if isinstance(outcome, Deferred) else outcome, version)
        refused = _message(await failed.wait() if isinstance(failed, Deferred) else failed, version)
        getattr(served, answered).extend(getattr(refused, answered))
        return served

    return Deferred(both)


_PARTIAL = {
    "Produce": _produce_partially, "CreateTopics": _create_topics_partially,
    **{name: _topics_partially for name in _TOPIC_LISTS},
}


def _shallow(body: Any, **fields: Any) -> Any:
    duplicate = copy.copy(body)
    for name, value in fields.items():
        setattr(duplicate, name, value)
    return duplicate


def _merged(outcome: Any, add: Callable[[Any], None]) -> Any:
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


# -- APIs that filter or annotate --------------------------------------------------------------------


def _metadata(gate: AuthorizationGate, handler, ctx, body, version, client):
    explicit = body.topics is not None and not (version == 0 and not body.topics)
    refused = []
    if explicit:
        kept = []
        auto_create = (body.allow_auto_topic_creation if version >= 4 else True) and ctx.policy.auto_create_topics_enable
        may_create_all = gate.allowed(client, Op.CREATE, Res.CLUSTER, CLUSTER_NAME)
        for requested in body.topics:
            name = requested.name
            if name and not gate.allowed(client, Op.DESCRIBE, Res.TOPIC, name):
                refused.append(error_entry(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            elif (name and auto_create and ctx.catalog.get(name) is None and not may_create_all
                  and not gate.allowed(client, Op.CREATE, Res.TOPIC, name)):
                refused.append(error_entry(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            else:
                kept.append(requested)
        body.topics = kept
    response = handler.handle(ctx, body, version, client)
    if explicit and not body.topics:
        response.topics = []  # everything refused (a v0 request with no topics would mean all of them)
    shown = []
    for topic in response.topics:
        if topic.name and topic.error_code == ErrorCode.NONE and not gate.allowed(client, Op.DESCRIBE, Res.TOPIC, topic.name):
            if explicit:  # asked for by topic id: refused without its name, as Kafka
                shown.append(error_entry(None, ErrorCode.TOPIC_AUTHORIZATION_FAILED, topic.topic_id))
            continue
        if topic.authorized_operations is not None and topic.error_code == ErrorCode.NONE:
            topic.authorized_operations = gate.operations(client, Res.TOPIC, topic.name)
        shown.append(topic)
    response.topics = shown + refused
    if getattr(response, "authorized_operations", None) is not None:
        response.authorized_operations = gate.operations(client, Res.CLUSTER, CLUSTER_NAME)
    return response


def _describe_cluster(gate: AuthorizationGate, handler, ctx, body, version, client):
    response = handler.handle(ctx, body, version, client)
    if response.authorized_operations is not None:
        response.authorized_operations = gate.operations(client, Res.CLUSTER, CLUSTER_NAME)
    return response


def _describe_groups(gate: AuthorizationGate, handler, ctx, body, version, client):
    response = handler.handle(ctx, body, version, client)
    for group in response.groups:
        if not gate.allowed(client, Op.DESCRIBE, Res.GROUP, group.group_id):
            group.error_code = ErrorCode.GROUP_AUTHORIZATION_FAILED
            group.members = []
            group.group_state = group.protocol_type = group.protocol_data = ""
        elif group.authorized_operations is not None:
            group.authorized_operations = gate.operations(client, Res.GROUP, group.group_id)
    return response


def _list_groups(gate: AuthorizationGate, handler, ctx, body, version, client):
    response = handler.handle(ctx, body, version, client)
    if not gate.allowed(client, Op.DESCRIBE, Res.CLUSTER, CLUSTER_NAME):
        response.groups = [g for g in response.groups if gate.allowed(client, Op.DESCRIBE, Res.GROUP, g.group_id)]
    return response


def _list_transactions(gate: AuthorizationGate, handler, ctx, body, version, client):
    response = handler.handle(ctx, body, version, client)
    response.transaction_states = [
        t for t in response.transaction_states if gate.allowed(client, Op.DESCRIBE, Res.TRANSACTIONAL_ID, t.transactional_id)
    ]
    return response


_SPECIAL = {
    "ListTransactions": _list_transactions,
    "Metadata": _metadata,
    "DescribeCluster": _describe_cluster,
    "DescribeGroups": _describe_groups,
    "ListGroups": _list_groups,
}
