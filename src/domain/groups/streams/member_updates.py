"""What a StreamsGroupHeartbeat does to its member: the fields it takes from the request
(`take_request`), and the step towards its target (`step_towards`: `tasks.reconcile`'s answer applied,
the group's books of who owns which task kept in step, the revocation deadline set or cleared)."""

from __future__ import annotations

from .model import StreamsGroup, StreamsHeartbeat, StreamsMember
from .tasks import MemberState, TasksTuple, reconcile


def take_request(member: StreamsMember, request: StreamsHeartbeat) -> bool:
    """Take what the request changed; True if it changes what the assignor sees."""
    changed = False
    if request.process_id is not None and request.process_id != member.process_id:
        member.process_id = request.process_id
        changed = True
    if request.rack_id is not None and request.rack_id != member.rack_id:
        member.rack_id = request.rack_id
        changed = True
    if request.client_tags is not None and request.client_tags != member.client_tags:
        member.client_tags = request.client_tags
        changed = True
    if request.topology is not None and request.topology.epoch != member.topology_epoch:
        member.topology_epoch = request.topology.epoch
        changed = True
    if request.user_endpoint is not None:
        member.user_endpoint = request.user_endpoint
    if request.rebalance_timeout_ms != -1:
        member.rebalance_timeout_ms = request.rebalance_timeout_ms
    member.client_id = request.client_id
    member.client_host = request.client_host
    return changed


def step_towards(
    group: StreamsGroup,
    member: StreamsMember,
    owned: TasksTuple | None,
    now: int,
    target_epoch: int,
    target: TasksTuple,
) -> bool:
    """Move `member` towards `target`; True if what it is assigned or must revoke changed."""
    # Computed against the books as they are, the member's own tasks included (as Kafka): a task it
    # still runs in one role is not handed to it in another in the same answer.
    result = reconcile(
        member.state,
        member.member_epoch,
        member.process_id,
        member.assigned,
        member.pending_revocation,
        target_epoch,
        target,
        owned,
        group.owners(),
    )
    changed = False
    group.release(member)
    if result is not None:
        changed = result.assigned != member.assigned or result.pending_revocation != member.pending_revocation
        if result.member_epoch != member.member_epoch:
            member.previous_member_epoch = member.member_epoch
        member.state = result.state
        member.member_epoch = result.member_epoch
        member.assigned = result.assigned
        member.pending_revocation = result.pending_revocation
    group.claim(member)
    if member.state is MemberState.UNREVOKED_TASKS:
        if member.rebalance_deadline_ms is None:
            member.rebalance_deadline_ms = now + max(member.rebalance_timeout_ms, 0)
    else:
        member.rebalance_deadline_ms = None
    return changed
