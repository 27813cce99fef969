"""ConsumerGroupDescribe (key 69): v0-1. KIP-848 consumer groups: epochs, assignor, each member's
subscription with its current and target assignments (v1, KIP-1099: the member's type, 1 = consumer,
0 = a classic member the group hosts since an online upgrade).

A group of another type, or none, is GROUP_ID_NOT_FOUND, as Kafka answers.
Authorization filters: a group the principal may not DESCRIBE is GROUP_AUTHORIZATION_FAILED; the
authorized operations are filled from the ACLs.

Version notes:
- v1: each member's MemberType (consumer or classic, KIP-1099); the request is unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.schema_codec.messages import ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse

from ..api import KafkaApi
from ..connection.cluster import groups_in, refuse_unless_coordinator
from ..request_context import ClientInfo
from ..security.authorization import Filter
from .common.authorized_operations import GROUP_OPERATIONS, as_int32
from .common.modern_groups import describe_filter, describe_refusal, described_assignment, not_described

if TYPE_CHECKING:
    from trafka.domain.catalog import TopicCatalog

    from ..internal_topics import InternalTopics
    from ..runtime.group_runtime import GroupRuntime


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    internal_topics: InternalTopics
    groups: GroupRuntime


Described = ConsumerGroupDescribeResponse.DescribedGroup


def assignment(ctx: Uses, assigned: Mapping[str, frozenset[int]]) -> Any:
    return described_assignment(Described, ctx, assigned)


CLASSIC_MEMBER_TYPE = 0  # a classic-protocol member inside the consumer group (online migration, ADR 50)
CONSUMER_MEMBER_TYPE = 1


def handle_consumer_group_describe(
    ctx: Uses, request: ConsumerGroupDescribeRequest, version: int, client: ClientInfo
) -> ConsumerGroupDescribeResponse:
    described = []
    consumer = ctx.groups.consumer
    for group_id in request.group_ids:
        group = consumer.groups.get(group_id) if consumer is not None else None
        if not group_id:
            described.append(not_described(Described, group_id, "The group id is invalid.", ErrorCode.INVALID_GROUP_ID))
            continue
        if group is None or consumer is None:
            known = ctx.groups.coordinator.group(group_id) is not None
            message = f"Group {group_id} is not a consumer group." if known else f"Group {group_id} not found."
            described.append(not_described(Described, group_id, message))
            continue
        members = [
            Described.Member(
                member_id=m.member_id,
                instance_id=m.instance_id,
                rack_id=m.rack_id,
                member_epoch=m.member_epoch,
                client_id=m.client_id,
                client_host=m.client_host,
                subscribed_topic_names=list(m.subscribed_topic_names),
                subscribed_topic_regex=m.subscribed_topic_regex,
                assignment=assignment(ctx, m.assigned),
                target_assignment=assignment(ctx, group.target.get(m.member_id, {})),
                member_type=CLASSIC_MEMBER_TYPE if m.classic is not None else CONSUMER_MEMBER_TYPE,
            )
            for m in group.members.values()
        ]
        described.append(
            Described(
                error_code=ErrorCode.NONE,
                group_id=group_id,
                group_state=group.state.value,
                group_epoch=group.group_epoch,
                assignment_epoch=group.assignment_epoch,
                assignor_name=group.assignor or consumer.settings.assignors[0],
                members=members,
                authorized_operations=as_int32(GROUP_OPERATIONS if request.include_authorized_operations else None),
            )
        )
    return ConsumerGroupDescribeResponse(version=version, throttle_time_ms=0, groups=described)


API = KafkaApi(
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    (0, 1),
    handle_consumer_group_describe,
    authorization=Filter(describe_filter),
    refusal=describe_refusal,
    read_only=True,
    cluster=refuse_unless_coordinator(groups_in("group_ids")),
)
