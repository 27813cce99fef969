"""ShareGroupDescribe (key 77): v1. KIP-932 share groups: state, epochs, the assignor (`simple`), each
member with its subscription and assignment.

A group of another type, or none, is GROUP_ID_NOT_FOUND, as Kafka answers.
Authorization filters: a group the principal may not DESCRIBE is GROUP_AUTHORIZATION_FAILED; the
authorized operations are filled from the ACLs.

Version notes:
(v0 was KIP-932's early access and is not served)
- v1: the first stable version (KIP-932).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from trafka.domain.errors import ErrorCode
from trafka.domain.groups.share.coordinator import SHARE_ASSIGNOR
from trafka.schema_codec.messages import ShareGroupDescribeRequest, ShareGroupDescribeResponse

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
    from ..runtime.share_runtime import ShareRuntime


@attrs.frozen
class Uses:
    """The services this room's handler reaches (ADR 103): the registry gives it these, nothing else."""

    catalog: TopicCatalog
    internal_topics: InternalTopics
    groups: GroupRuntime
    share: ShareRuntime | None


Described = ShareGroupDescribeResponse.DescribedGroup


def assignment(ctx: Uses, assigned: Mapping[str, frozenset[int]]) -> Any:
    return described_assignment(Described, ctx, assigned)


def handle_share_group_describe(
    ctx: Uses, request: ShareGroupDescribeRequest, version: int, client: ClientInfo
) -> ShareGroupDescribeResponse:
    described = []
    coordinator = ctx.share.groups.coordinator if ctx.share is not None else None
    for group_id in request.group_ids:
        if not group_id:
            described.append(not_described(Described, group_id, "The group id is invalid.", ErrorCode.INVALID_GROUP_ID))
            continue
        group = coordinator.groups.get(group_id) if coordinator is not None else None
        if group is None or coordinator is None:
            known = ctx.groups.coordinator.group(group_id) is not None or ctx.groups.is_consumer_group(group_id)
            message = f"Group {group_id} is not a share group." if known else f"Group {group_id} not found."
            described.append(not_described(Described, group_id, message))
            continue
        members = [
            Described.Member(
                member_id=m.member_id,
                rack_id=m.rack_id,
                member_epoch=m.member_epoch,
                client_id=m.client_id,
                client_host=m.client_host,
                subscribed_topic_names=list(m.subscribed_topic_names),
                assignment=assignment(ctx, m.assigned),
            )
            for m in group.members.values()
        ]
        described.append(
            Described(
                error_code=ErrorCode.NONE,
                group_id=group_id,
                group_state=coordinator.state(group_id).value,
                group_epoch=group.group_epoch,
                assignment_epoch=group.assignment_epoch,
                assignor_name=SHARE_ASSIGNOR,
                members=members,
                authorized_operations=as_int32(GROUP_OPERATIONS if request.include_authorized_operations else None),
            )
        )
    return ShareGroupDescribeResponse(version=version, throttle_time_ms=0, groups=described)


API = KafkaApi(
    ShareGroupDescribeRequest,
    ShareGroupDescribeResponse,
    (1, 1),
    handle_share_group_describe,
    authorization=Filter(describe_filter),
    refusal=describe_refusal,
    read_only=True,
    cluster=refuse_unless_coordinator(groups_in("group_ids")),
)
