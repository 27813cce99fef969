"""What a ConsumerGroupHeartbeat says and what it is answered, and the checks it must pass before the
coordinator looks at any group (Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid): INVALID_REQUEST
for a malformed heartbeat, UNSUPPORTED_ASSIGNOR for an assignor this broker does not run. Split from the
coordinator (issue 40, item 6)."""

from __future__ import annotations

from collections.abc import Callable, Collection

import attrs

from ...errors import ErrorCode, KafkaError
from .assignors import Assignment
from .model import LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH, ConsumerMember


@attrs.frozen
class ConsumerHeartbeat:
    """A ConsumerGroupHeartbeat request; None means "unchanged since the last heartbeat", as Kafka's."""

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: Assignment | None = None
    client_id: str = ""
    client_host: str = ""
    member_id_from_client: bool = True  # v1 (KIP-1082): the client makes its member id
    # Whether the member's principal may DESCRIBE a topic: what its regex may match (None: no authorizer)
    may_describe: Callable[[str], bool] | None = attrs.field(default=None, eq=False)


@attrs.frozen
class HeartbeatAnswer:
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: dict[str, frozenset[int]] | None = None


def validate(request: ConsumerHeartbeat, assignors: Collection[str]) -> None:
    """Raise Kafka's error for a heartbeat no group may see: a missing id, a first heartbeat without
    its rebalance timeout or subscription, an unknown epoch, an assignor not among `assignors`."""

    def invalid(message: str) -> KafkaError:
        return KafkaError(ErrorCode.INVALID_REQUEST, message)

    if not request.group_id:
        raise invalid("GroupId can't be empty.")
    if request.instance_id == "":
        raise invalid("InstanceId can't be empty.")
    if request.rack_id == "":
        raise invalid("RackId can't be empty.")
    if request.member_id_from_client and not request.member_id:
        raise invalid("MemberId can't be empty.")
    epoch = request.member_epoch
    if epoch > 0 or epoch == LEAVE_GROUP_MEMBER_EPOCH:
        if not request.member_id:
            raise invalid("MemberId can't be empty.")
    elif epoch == 0:
        if request.rebalance_timeout_ms == -1:
            raise invalid("RebalanceTimeoutMs must be provided in first request.")
        if request.owned is None or any(request.owned.values()):
            raise invalid("TopicPartitions must be empty when (re-)joining.")
        if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
            raise invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
    elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if not request.member_id:
            raise invalid("MemberId can't be empty.")
        if request.instance_id is None:
            raise invalid("InstanceId can't be null.")
    else:
        raise invalid("MemberEpoch is invalid.")
    if request.server_assignor is not None and request.server_assignor not in assignors:
        raise KafkaError(
            ErrorCode.UNSUPPORTED_ASSIGNOR,
            f"ServerAssignor {request.server_assignor} is not supported. Supported assignors: {', '.join(assignors)}.",
        )


def is_full(request: ConsumerHeartbeat) -> bool:
    """A full request (a join, or every field sent: a member that lost track of its state) is answered
    with the member's assignment even when it did not change."""
    return request.member_epoch == 0 or (
        request.rebalance_timeout_ms != -1
        and (request.subscribed_topic_names is not None or request.subscribed_topic_regex is not None)
        and request.owned is not None
    )


def take_request(member: ConsumerMember, request: ConsumerHeartbeat) -> None:
    """What a heartbeat sets on its member: the fields it sent (None: unchanged), its client, and no
    classic protocol any more (a member speaking the consumer protocol is no classic member)."""
    if request.instance_id is not None:
        member.instance_id = request.instance_id
    if request.rack_id is not None:
        member.rack_id = request.rack_id
    if request.rebalance_timeout_ms != -1:
        member.rebalance_timeout_ms = request.rebalance_timeout_ms
    if request.server_assignor is not None:
        member.server_assignor = request.server_assignor
    if request.subscribed_topic_names is not None:
        member.subscribed_topic_names = tuple(sorted(set(request.subscribed_topic_names)))
    if request.subscribed_topic_regex is not None:
        member.subscribed_topic_regex = request.subscribed_topic_regex or None
    member.client_id = request.client_id
    member.client_host = request.client_host
    member.classic = None  # a member speaking the consumer protocol is no classic member any more
    member.join_deadline_ms = member.sync_deadline_ms = None
