"""The APIs whose answers the authorizer filters or annotates rather than refuses.

Kafka leaves out what a principal may not DESCRIBE instead of failing the request: Metadata's and
DescribeTopicPartitions' topics (or TOPIC_AUTHORIZATION_FAILED, without the topic id, for one asked
for by name), ListGroups' groups, ListTransactions' and DescribeTransactions' transactional ids and
their partitions, OffsetFetch's topics (v8+ also per group); and it fills the authorized-operations
fields (Metadata, DescribeCluster, DescribeGroups, DescribeTopicPartitions) with what the authorizer
allows. Each function takes the `AuthorizationGate`, runs the handler on the authorized part of the
request and completes its answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trafka.domain.errors import ErrorCode
from trafka.domain.security.acls import CLUSTER_NAME
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res
from trafka.domain.topics import ZERO_UUID

from ..handlers.authorized import as_int32
from ..handlers.metadata import error_entry
from .partial import merged


def _metadata(gate, handler, ctx, body, version, client):
    explicit = body.topics is not None and not (version == 0 and not body.topics)
    refused = []
    if explicit:
        kept = []
        auto_create = (
            body.allow_auto_topic_creation if version >= 4 else True
        ) and ctx.policy.auto_create_topics_enable
        may_create_all = gate.allowed(client, Op.CREATE, Res.CLUSTER, CLUSTER_NAME)
        for requested in body.topics:
            name = requested.name
            if name and not gate.allowed(client, Op.DESCRIBE, Res.TOPIC, name):
                refused.append(error_entry(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            elif (
                name
                and auto_create
                and ctx.catalog.get(name) is None
                and not may_create_all
                and not gate.allowed(client, Op.CREATE, Res.TOPIC, name)
            ):
                refused.append(error_entry(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            else:
                kept.append(requested)
        body.topics = kept
    response = handler.handle(ctx, body, version, client)
    if explicit and not body.topics:
        response.topics = []  # everything refused (a v0 request with no topics would mean all of them)
    shown = []
    for topic in response.topics:
        if (
            topic.name
            and topic.error_code == ErrorCode.NONE
            and not gate.allowed(client, Op.DESCRIBE, Res.TOPIC, topic.name)
        ):
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


def _describe_cluster(gate, handler, ctx, body, version, client):
    response = handler.handle(ctx, body, version, client)
    if response.authorized_operations is not None:
        response.authorized_operations = gate.operations(client, Res.CLUSTER, CLUSTER_NAME)
    return response


def _describe_groups(gate, handler, ctx, body, version, client):
    response = handler.handle(ctx, body, version, client)
    for group in response.groups:
        if not gate.allowed(client, Op.DESCRIBE, Res.GROUP, group.group_id):
            group.error_code = ErrorCode.GROUP_AUTHORIZATION_FAILED
            group.members = []
            group.group_state = group.protocol_type = group.protocol_data = ""
        elif group.authorized_operations is not None:
            group.authorized_operations = gate.operations(client, Res.GROUP, group.group_id)
    return response


def _list_groups(gate, handler, ctx, body, version, client):
    response = handler.handle(ctx, body, version, client)
    if not gate.allowed(client, Op.DESCRIBE, Res.CLUSTER, CLUSTER_NAME):
        response.groups = [g for g in response.groups if gate.allowed(client, Op.DESCRIBE, Res.GROUP, g.group_id)]
    return response


def _list_transactions(gate, handler, ctx, body, version, client):
    response = handler.handle(ctx, body, version, client)
    response.transaction_states = [
        t
        for t in response.transaction_states
        if gate.allowed(client, Op.DESCRIBE, Res.TRANSACTIONAL_ID, t.transactional_id)
    ]
    return response


SPECIAL: dict[str, Callable[..., Any]] = {
    "ListTransactions": _list_transactions,
    "Metadata": _metadata,
    "DescribeCluster": _describe_cluster,
    "DescribeGroups": _describe_groups,
    "ListGroups": _list_groups,
}


def _offset_fetch(gate, handler, ctx, body, version, client):
    """Per group (v8+) and per topic; asked for all topics, the ones it may not DESCRIBE are left out."""

    def group_allowed(group_id: str) -> bool:
        return gate.allowed(client, Op.DESCRIBE, Res.GROUP, group_id)

    def topic_allowed(name: str) -> bool:
        return gate.allowed(client, Op.DESCRIBE, Res.TOPIC, name)

    Response = handler.response
    if version < 8:
        if not group_allowed(body.group_id):
            return _offset_fetch_group_refused(handler, body, version)
        Topic = Response.OffsetFetchResponseTopic
        refused = _without_refused_topics(body, topic_allowed)
        return merged(
            handler.handle(ctx, body, version, client),
            lambda response: _offset_fetch_topics(
                response, Topic, Topic.OffsetFetchResponsePartition, refused, topic_allowed
            ),
        )
    Group = Response.OffsetFetchResponseGroup
    Topics = Group.OffsetFetchResponseTopics
    asked = list(body.groups)
    body.groups = [g for g in asked if group_allowed(g.group_id)]
    refused_by_group = [_without_refused_topics(g, topic_allowed) for g in body.groups]

    def complete(response) -> None:
        served = iter(zip(response.groups, refused_by_group))
        groups = []
        for g in asked:
            if not group_allowed(g.group_id):
                groups.append(Group(group_id=g.group_id, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, topics=[]))
                continue
            group, refused = next(served)
            _offset_fetch_topics(group, Topics, Topics.OffsetFetchResponsePartitions, refused, topic_allowed)
            groups.append(group)
        response.groups = groups

    return merged(handler.handle(ctx, body, version, client), complete)


def _without_refused_topics(request, allowed: Callable[[str], bool]) -> list | None:
    """Drop the topics the principal may not DESCRIBE from a (group's) request; None asks for all of them."""
    if request.topics is None:
        return None
    refused = [t for t in request.topics if not allowed(t.name)]
    request.topics = [t for t in request.topics if allowed(t.name)]
    return refused


def _offset_fetch_topics(answer, Topic, Partition, refused: list | None, allowed: Callable[[str], bool]) -> None:
    """The refused topics added with TOPIC_AUTHORIZATION_FAILED or, for an all-topics fetch, the
    undescribable ones left out, as Kafka does when the group was answered without an error."""
    if getattr(answer, "error_code", None):
        return
    if refused is None:
        answer.topics = [t for t in answer.topics if allowed(t.name)]
        return
    answer.topics.extend(
        Topic(
            name=t.name,
            partitions=[
                Partition(
                    partition_index=p,
                    committed_offset=-1,
                    committed_leader_epoch=-1,
                    metadata="",
                    error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                )
                for p in t.partition_indexes
            ],
        )
        for t in refused
    )


def _offset_fetch_group_refused(handler, body, version):
    """Kafka's OffsetFetch error response before v8: the error per partition (v1) or at the top (v2+)."""
    Topic = handler.response.OffsetFetchResponseTopic
    Partition = Topic.OffsetFetchResponsePartition
    error = ErrorCode.GROUP_AUTHORIZATION_FAILED
    topics = (
        []
        if version >= 2
        else [
            Topic(
                name=t.name,
                partitions=[
                    Partition(
                        partition_index=p, committed_offset=-1, committed_leader_epoch=-1, metadata="", error_code=error
                    )
                    for p in t.partition_indexes
                ],
            )
            for t in body.topics or ()
        ]
    )
    return handler.response(version=version, throttle_time_ms=0, error_code=error, topics=topics)


def _describe_transactions(gate, handler, ctx, body, version, client):
    """Per transactional id; the partitions of topics the principal may not DESCRIBE are left out."""
    asked = list(body.transactional_ids)
    allowed = {t for t in asked if gate.allowed(client, Op.DESCRIBE, Res.TRANSACTIONAL_ID, t)}
    body.transactional_ids = [t for t in asked if t in allowed]

    def complete(response) -> None:
        State = response.TransactionState
        served = iter(response.transaction_states)
        states = []
        for txn_id in asked:
            if txn_id not in allowed:
                states.append(
                    State(
                        error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                        transactional_id=txn_id,
                        transaction_state="",
                        transaction_timeout_ms=0,
                        transaction_start_time_ms=0,
                        producer_id=0,
                        producer_epoch=0,
                        topics=[],
                    )
                )
                continue
            state = next(served)
            state.topics = [t for t in state.topics or () if gate.allowed(client, Op.DESCRIBE, Res.TOPIC, t.topic)]
            states.append(state)
        response.transaction_states = states

    return merged(handler.handle(ctx, body, version, client), complete)


def _describe_topic_partitions(gate, handler, ctx, body, version, client):
    """Named topics it may not DESCRIBE are refused without their id; asked for all, they are left out
    (the request becomes the list of describable topics, so paging never reaches the others)."""

    def allowed(name: str) -> bool:
        return gate.allowed(client, Op.DESCRIBE, Res.TOPIC, name)

    Topic = handler.response.DescribeTopicPartitionsResponseTopic
    refused = []
    if body.topics:
        refused = [
            Topic(
                error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                name=t.name,
                topic_id=ZERO_UUID,
                is_internal=False,
                partitions=[],
            )
            for t in body.topics
            if not allowed(t.name)
        ]
        body.topics = [t for t in body.topics if allowed(t.name)]
    else:
        RequestTopic = handler.request.TopicRequest
        body.topics = [RequestTopic(name=t.name) for t in ctx.catalog.topics() if allowed(t.name)]
    if not body.topics:
        return handler.response(version=version, throttle_time_ms=0, topics=refused, next_cursor=None)

    def complete(response) -> None:
        for topic in response.topics:
            if topic.error_code == ErrorCode.NONE:
                topic.topic_authorized_operations = as_int32(frozenset(gate.operations(client, Res.TOPIC, topic.name)))
        response.topics.extend(refused)

    return merged(handler.handle(ctx, body, version, client), complete)


SPECIAL.update(
    {
        "OffsetFetch": _offset_fetch,
        "DescribeTransactions": _describe_transactions,
        "DescribeTopicPartitions": _describe_topic_partitions,
    }
)
