"""A StreamsGroupHeartbeat's checks, before and after its member is found (Kafka's
GroupMetadataManager: throwIfStreamsGroupHeartbeatRequestIsInvalid, throwIfStreamsGroupMemberEpochIsInvalid),
and whether it is a full heartbeat (one that carries every field, answered with the whole assignment)."""

from __future__ import annotations

from ...errors import ErrorCode, KafkaError
from .model import StreamsHeartbeat, StreamsMember
from .tasks import TasksTuple
from .topology import invalid_topology

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


def validate(request: StreamsHeartbeat) -> None:
    """Kafka's throwIfStreamsGroupHeartbeatRequestIsInvalid."""

    def invalid(message: str) -> KafkaError:
        return KafkaError(ErrorCode.INVALID_REQUEST, message)

    if not request.group_id.strip():
        raise KafkaError(ErrorCode.INVALID_GROUP_ID, "GroupId can't be empty.")
    if not request.member_id.strip():
        raise invalid("MemberId can't be empty.")
    if request.instance_id is not None:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Static membership is not yet supported.")
    if request.member_epoch == 0:
        if request.rebalance_timeout_ms == -1:
            raise invalid("RebalanceTimeoutMs must be provided when joining.")
        if request.topology is None:
            raise invalid("Topology must be non-null when joining.")
        if request.process_id is None:
            raise invalid("ProcessId must be provided when joining.")
        if request.owned is None:
            raise invalid("ActiveTasks, StandbyTasks and WarmupTasks must be empty when joining.")
        if not request.owned.is_empty():
            raise invalid("ActiveTasks, StandbyTasks and WarmupTasks must be empty when (re-)joining.")
        problem = invalid_topology(request.topology)
        if problem is not None:
            raise KafkaError(ErrorCode.STREAMS_INVALID_TOPOLOGY, problem)
    elif request.member_epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise invalid(f"MemberEpoch is {request.member_epoch}, but must be greater than or equal to -2.")
    elif request.topology is not None and request.member_epoch > 0:
        raise invalid("Topology can only be provided when (re-)joining.")


def check_epoch(member: StreamsMember, request: StreamsHeartbeat) -> None:
    """Kafka's throwIfStreamsGroupMemberEpochIsInvalid."""
    if request.member_epoch > member.member_epoch:
        raise KafkaError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The streams group member has a greater member epoch ({request.member_epoch}) than the one known by "
            f"the group coordinator ({member.member_epoch}). The member must abandon all its tasks and rejoin.",
        )
    if request.member_epoch < member.member_epoch:
        if request.member_epoch != member.previous_member_epoch or (
            request.owned is not None and not _is_subset(request.owned, member.assigned)
        ):
            raise KafkaError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The streams group member has a smaller member epoch ({request.member_epoch}) than the one known "
                f"by the group coordinator ({member.member_epoch}). The member must abandon all its tasks and rejoin.",
            )


def is_full(request: StreamsHeartbeat) -> bool:
    return (
        request.rebalance_timeout_ms != -1
        and request.owned is not None
        and request.client_tags is not None
        and request.process_id is not None
    )


def _is_subset(owned: TasksTuple, assigned: TasksTuple) -> bool:
    return all(
        ps <= mine.get(sid, frozenset())
        for theirs, mine in (
            (owned.active, assigned.active),
            (owned.standby, assigned.standby),
            (owned.warmup, assigned.warmup),
        )
        for sid, ps in theirs.items()
    )
