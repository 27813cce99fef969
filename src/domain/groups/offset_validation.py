"""Whether a member may commit or fetch a modern group's offsets: the check Kafka's ConsumerGroup and
StreamsGroup `validateOffsetCommit` / `validateOffsetFetch` end with, shared by the KIP-848 consumer
groups and the KIP-1071 streams groups (issue 40, items 4 and 6). Each coordinator first lets an admin
through (no member, epoch -1) as Kafka does for its kind, then asks this: the member must be known,
the request's version must serve it, and the epoch must be its current one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol, TypeVar

from ..errors import ErrorCode


class EpochMember(Protocol):
    @property
    def member_epoch(self) -> int: ...


M = TypeVar("M", bound=EpochMember)


def checked_member(
    members: Mapping[str, M],
    member_id: str,
    member_epoch: int,
    *,
    version_serves: Callable[[M], bool] = lambda member: True,
    stale: Callable[[M], ErrorCode] = lambda member: ErrorCode.STALE_MEMBER_EPOCH,
) -> ErrorCode:
    """UNKNOWN_MEMBER_ID for a member not in `members`; UNSUPPORTED_VERSION when the request's version
    does not serve it (OffsetCommit before v9 for a member of the new protocols); `stale(member)` for
    another epoch (a classic member's is ILLEGAL_GENERATION); NONE otherwise."""
    member = members.get(member_id)
    if member is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if not version_serves(member):
        return ErrorCode.UNSUPPORTED_VERSION
    if member_epoch != member.member_epoch:
        return stale(member)
    return ErrorCode.NONE
