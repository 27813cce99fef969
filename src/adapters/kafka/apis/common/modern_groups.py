"""What the rooms of the KIP-848-shaped groups share: ConsumerGroupHeartbeat/ShareGroupHeartbeat
answer a `HeartbeatAnswer` the same way, and ConsumerGroupDescribe/ShareGroupDescribe describe
assignments, answer unknown groups, filter by DESCRIBE and refuse alike. Each function takes the
room's own kafka-python message class, whose fields these two protocols name the same."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from trafka.domain.errors import ErrorCode
from trafka.domain.groups.modern import HeartbeatAnswer
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res

from ...api import KafkaApi
from .authorized_operations import as_int32

if TYPE_CHECKING:
    from trafka.domain.catalog import TopicCatalog

    from ...internal_topics import InternalTopics


class ReadsTopics(Protocol):
    """What the group rooms' shared answers read: the topics (and the internal ones), to name an assignment's."""

    @property
    def catalog(self) -> TopicCatalog: ...

    @property
    def internal_topics(self) -> InternalTopics: ...


def heartbeat_response(Response: Any, version: int, answer: HeartbeatAnswer, ctx: ReadsTopics | None = None) -> Any:
    """A heartbeat's answer; the assignment (when the member is sent one) with topics by id."""
    assignment = None
    if answer.assignment is not None and ctx is not None:
        partitions = []
        for name, ps in sorted(answer.assignment.items()):
            topic = ctx.catalog.get(name) or ctx.internal_topics.get(name)
            if topic is not None and ps:
                partitions.append(Response.Assignment.TopicPartitions(topic_id=topic.topic_id, partitions=sorted(ps)))
        assignment = Response.Assignment(topic_partitions=partitions)
    return Response(
        version=version,
        throttle_time_ms=0,
        error_code=answer.error,
        error_message=answer.message,
        member_id=answer.member_id,
        member_epoch=answer.member_epoch,
        heartbeat_interval_ms=answer.heartbeat_interval_ms,
        assignment=assignment,
    )


def described_assignment(Described: Any, ctx: ReadsTopics, assignment: Mapping[str, frozenset[int]]) -> Any:
    """A member's assignment in a describe answer: topics by id and name (unknown topics left out)."""
    partitions = []
    for name, ps in sorted(assignment.items()):
        topic = ctx.catalog.get(name) or ctx.internal_topics.get(name)
        if topic is not None and ps:
            partitions.append(
                Described.Member.Assignment.TopicPartitions(
                    topic_id=topic.topic_id, topic_name=name, partitions=sorted(ps)
                )
            )
    return Described.Member.Assignment(topic_partitions=partitions)


def not_described(Described: Any, group_id: str, message: str | None, error: int = ErrorCode.GROUP_ID_NOT_FOUND) -> Any:
    """A group described with an error and nothing else."""
    return Described(
        error_code=error,
        error_message=message,
        group_id=group_id,
        group_state="",
        group_epoch=0,
        assignment_epoch=0,
        assignor_name="",
        members=[],
    )


def _topics_named(group: Any) -> set[str]:
    """Every topic a described group's members subscribe to or are (to be) assigned."""
    names: set[str] = set()
    for member in group.members:
        names.update(member.subscribed_topic_names or ())
        for assigned in (member.assignment, getattr(member, "target_assignment", None)):
            if assigned is not None:
                names.update(tp.topic_name for tp in assigned.topic_partitions)
    return names


def describe_filter(gate, handler, ctx, body, version, client):
    """The describe rooms' authorization: a group the principal may not DESCRIBE is answered
    GROUP_AUTHORIZATION_FAILED and emptied; so is one whose members name a topic the principal may not
    DESCRIBE, with TOPIC_AUTHORIZATION_FAILED (Kafka's KafkaApis, issue 42 #7); the authorized
    operations come from the ACLs."""
    response = handler.handle(ctx, body, version, client)
    for group in response.groups:
        if not gate.allowed(client, Op.DESCRIBE, Res.GROUP, group.group_id):
            group.error_code = ErrorCode.GROUP_AUTHORIZATION_FAILED
            group.error_message = None
            group.members = []
            group.group_state = group.assignor_name = ""
        elif group.error_code == ErrorCode.NONE and not all(
            gate.allowed(client, Op.DESCRIBE, Res.TOPIC, t) for t in _topics_named(group)
        ):
            group.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            group.error_message = "The described group uses topics that the client is not authorized to describe."
            group.members = []
        elif body.include_authorized_operations and group.error_code == ErrorCode.NONE:
            group.authorized_operations = as_int32(frozenset(gate.operations(client, Res.GROUP, group.group_id)))
    return response


def describe_refusal(api: KafkaApi, request: Any, version: int, error: int) -> Any:
    """Kafka's getErrorResponse for the describe rooms: each group with the error."""
    Described = api.response.DescribedGroup
    return api.empty_response(version, groups=[not_described(Described, g, None, error) for g in request.group_ids])
