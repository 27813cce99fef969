"""Whether a consumer group's member may commit or fetch its offsets: Kafka's ConsumerGroup
`validateOffsetCommit` / `validateOffsetFetch`, an admin let through first (no member, epoch -1), then
`..offset_validation`'s member check; a classic member's stale generation is ILLEGAL_GENERATION."""

from __future__ import annotations

from ...errors import ErrorCode
from ..offset_validation import checked_member
from .model import ConsumerGroup, ConsumerMember


def validate_commit(
    group: ConsumerGroup,
    member_id: str,
    member_epoch: int,
    version: int,
    transactional: bool,
    instance_id: str | None,
) -> ErrorCode:
    """An OffsetCommit or (`transactional`) a TxnOffsetCommit, which need not name a member."""
    if member_epoch < 0 and not group.members:
        return ErrorCode.NONE
    if transactional and member_epoch == -1 and not member_id and instance_id is None:
        return ErrorCode.NONE
    return checked_member(
        group.members,
        member_id,
        member_epoch,
        version_serves=lambda member: transactional or version >= 9 or member.classic is not None,
        stale=_stale,
    )


def validate_fetch(group: ConsumerGroup, member_id: str | None, member_epoch: int) -> ErrorCode:
    """An admin's fetch (epoch -1, no member) always may."""
    if member_epoch < 0 and member_id is None:
        return ErrorCode.NONE
    return checked_member(group.members, member_id or "", member_epoch, stale=_stale)


def _stale(member: ConsumerMember) -> ErrorCode:
    """A member at another epoch: a classic member's generation is ILLEGAL_GENERATION, as Kafka's."""
    return ErrorCode.ILLEGAL_GENERATION if member.classic is not None else ErrorCode.STALE_MEMBER_EPOCH
