"""A member's tasks (Kafka's TasksTuple) and how it moves towards its target (Kafka's streams
CurrentAssignmentBuilder): KIP-848's reconciliation with tasks in place of partitions.

A task is a subtopology id and a partition. A member holds active, standby and warm-up tasks. When
its target changes, the tasks it must give up are pending revocation and the member stays at its
epoch (UNREVOKED_TASKS) until a heartbeat no longer reports them; only then does it take the next
epoch. A task of its target that is not free yet is held back (UNRELEASED_TASKS): an active task
while any member still owns it as active, or while the member's own process holds it as standby or
warm-up; a standby or warm-up task while the member's process holds it in any role. So a task never
has two active owners, and a process never holds one task twice.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Mapping

import attrs

Tasks = Mapping[str, frozenset[int]]  # subtopology id -> partitions


def _clean(tasks: Mapping[str, frozenset[int]]) -> dict[str, frozenset[int]]:
    return {sid: frozenset(ps) for sid, ps in sorted(tasks.items()) if ps}


@attrs.frozen
class TasksTuple:
    active: Tasks = attrs.field(factory=dict, converter=_clean)
    standby: Tasks = attrs.field(factory=dict, converter=_clean)
    warmup: Tasks = attrs.field(factory=dict, converter=_clean)

    def is_empty(self) -> bool:
        return not (self.active or self.standby or self.warmup)

    def contains_any(self, other: TasksTuple) -> bool:
        return any(
            mine.get(sid, frozenset()) & ps
            for mine, theirs in (
                (self.active, other.active),
                (self.standby, other.standby),
                (self.warmup, other.warmup),
            )
            for sid, ps in theirs.items()
        )

    def roles(self) -> Iterator[tuple[str, str, int]]:
        """(role, subtopology id, partition) for every task held."""
        for role, tasks in (("active", self.active), ("standby", self.standby), ("warmup", self.warmup)):
            for sid, ps in tasks.items():
                for p in sorted(ps):
                    yield role, sid, p


EMPTY = TasksTuple()


class MemberState(enum.Enum):
    STABLE = "stable"
    UNREVOKED_TASKS = "unrevoked_tasks"
    UNRELEASED_TASKS = "unreleased_tasks"


@attrs.frozen
class Reconciled:
    state: MemberState
    member_epoch: int
    assigned: TasksTuple
    pending_revocation: TasksTuple


@attrs.frozen
class Owners:
    """Who holds a task now: the active owner's process id, the processes holding it as standby or
    warm-up (assigned or pending revocation)."""

    active_process: Callable[[str, int], str | None]
    standby_processes: Callable[[str, int], frozenset[str]]
    warmup_processes: Callable[[str, int], frozenset[str]]


def reconcile(
    state: MemberState,
    member_epoch: int,
    process_id: str,
    assigned: TasksTuple,
    pending_revocation: TasksTuple,
    target_epoch: int,
    target: TasksTuple,
    owned: TasksTuple | None,
    owners: Owners,
) -> Reconciled | None:
    """The member's next state, or None when it stays as it is. `owned`: what the heartbeat reported
    (None: unchanged, so nothing counts as revoked)."""
    if state is MemberState.STABLE:
        if member_epoch == target_epoch:
            return None
        return _next(member_epoch, process_id, assigned, target_epoch, target, owned, owners)
    if state is MemberState.UNREVOKED_TASKS:
        if owned is None or owned.contains_any(pending_revocation):
            return None
        return _next(member_epoch + 1, process_id, assigned, target_epoch, target, owned, owners)
    return _next(member_epoch, process_id, assigned, target_epoch, target, owned, owners)


def _difference(
    current: Tasks, wanted: Tasks, unreleased: Callable[[str, int], bool]
) -> tuple[dict[str, frozenset[int]], dict[str, frozenset[int]], dict[str, frozenset[int]], bool]:
    keep: dict[str, frozenset[int]] = {}
    revoke: dict[str, frozenset[int]] = {}
    add: dict[str, frozenset[int]] = {}
    held_back = False
    for sid in set(current) | set(wanted):
        have = current.get(sid, frozenset())
        want = wanted.get(sid, frozenset())
        keep[sid] = have & want
        revoke[sid] = have - want
        free = frozenset(p for p in want - have if not unreleased(sid, p))
        held_back = held_back or free != want - have
        add[sid] = free
    return keep, revoke, add, held_back


def _next(
    member_epoch: int,
    process_id: str,
    current: TasksTuple,
    target_epoch: int,
    target: TasksTuple,
    owned: TasksTuple | None,
    owners: Owners,
) -> Reconciled:
    def held_by_process(sid: str, p: int) -> bool:
        return process_id in owners.standby_processes(sid, p) or process_id in owners.warmup_processes(sid, p)

    def active_unreleased(sid: str, p: int) -> bool:
        return owners.active_process(sid, p) is not None or held_by_process(sid, p)

    def other_unreleased(sid: str, p: int) -> bool:
        return owners.active_process(sid, p) == process_id or held_by_process(sid, p)

    a_keep, a_revoke, a_add, a_held = _difference(current.active, target.active, active_unreleased)
    s_keep, s_revoke, s_add, s_held = _difference(current.standby, target.standby, other_unreleased)
    w_keep, w_revoke, w_add, w_held = _difference(current.warmup, target.warmup, other_unreleased)
    revoking = TasksTuple(a_revoke, s_revoke, w_revoke)
    kept = TasksTuple(a_keep, s_keep, w_keep)
    if not revoking.is_empty() and (owned is None or owned.contains_any(revoking)):
        return Reconciled(MemberState.UNREVOKED_TASKS, member_epoch, kept, revoking)
    assigned = TasksTuple(_union(a_keep, a_add), _union(s_keep, s_add), _union(w_keep, w_add))
    state = MemberState.UNRELEASED_TASKS if a_held or s_held or w_held else MemberState.STABLE
    return Reconciled(state, target_epoch, assigned, EMPTY)


def _union(a: Mapping[str, frozenset[int]], b: Mapping[str, frozenset[int]]) -> dict[str, frozenset[int]]:
    return {sid: a.get(sid, frozenset()) | b.get(sid, frozenset()) for sid in set(a) | set(b)}
