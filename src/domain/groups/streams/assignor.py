"""The coordinator's task assignor for streams groups (Kafka's StickyTaskAssignor, `sticky`).

Active tasks first: a task stays with the member that held it as active, as long as that member is
under its share (the task count over the member count, rounded up); the others go, task by task, to
a member of a process that held the task as standby if one is under its share, else to the least
loaded member, counting load per process (its tasks over its member count) before per member, so
instances with more stream threads take more tasks. Then `num_standby_replicas` standby copies of
each task, each on a process that holds no copy of it yet, preferring the members that held it as
standby before and then the least loaded; a task with fewer processes to go to gets fewer copies,
as Kafka. Deterministic: members are visited by id, tasks by subtopology id and partition.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import attrs

from .tasks import TasksTuple


@attrs.frozen
class MemberSpec:
    process_id: str
    current: TasksTuple  # what it holds now (assigned): stickiness


def assign(
    members: Mapping[str, MemberSpec], tasks: Sequence[tuple[str, int]], num_standby_replicas: int
) -> dict[str, TasksTuple]:
    ids = sorted(members)
    if not ids:
        return {}
    active: dict[str, set[tuple[str, int]]] = {m: set() for m in ids}
    standby: dict[str, set[tuple[str, int]]] = {m: set() for m in ids}
    process_members: dict[str, list[str]] = {}
    for m in ids:
        process_members.setdefault(members[m].process_id, []).append(m)
    quota = math.ceil(len(tasks) / len(ids))
    task_set = set(tasks)

    def load(m: str) -> int:
        return len(active[m]) + len(standby[m])

    def process_load(m: str) -> float:
        peers = process_members[members[m].process_id]
        return sum(load(p) for p in peers) / len(peers)

    def least_loaded(candidates: Sequence[str]) -> str:
        return min(candidates, key=lambda m: (process_load(m), load(m), m))

    previous_active: dict[tuple[str, int], str] = {}
    for m in ids:
        for sid, ps in members[m].current.active.items():
            for p in ps:
                if (sid, p) in task_set:
                    previous_active.setdefault((sid, p), m)
    unassigned = []
    for task in tasks:
        owner = previous_active.get(task)
        if owner is not None and len(active[owner]) < quota:
            active[owner].add(task)
        else:
            unassigned.append(task)
    for sid, p in unassigned:
        was_standby = [
            m for m in ids if p in members[m].current.standby.get(sid, frozenset()) and len(active[m]) < quota
        ]
        under_quota = [m for m in ids if len(active[m]) < quota] or ids
        chosen = least_loaded(was_standby) if was_standby else least_loaded(under_quota)
        active[chosen].add((sid, p))

    for _ in range(num_standby_replicas):
        for sid, p in tasks:
            holding = {members[m].process_id for m in ids if (sid, p) in active[m] or (sid, p) in standby[m]}
            candidates = [m for m in ids if members[m].process_id not in holding]
            if not candidates:
                continue
            sticky = [m for m in candidates if p in members[m].current.standby.get(sid, frozenset())]
            chosen = least_loaded(sticky) if sticky else least_loaded(candidates)
            standby[chosen].add((sid, p))

    return {m: TasksTuple(_by_subtopology(active[m]), _by_subtopology(standby[m])) for m in ids}


def _by_subtopology(tasks: set[tuple[str, int]]) -> dict[str, frozenset[int]]:
    grouped: dict[str, set[int]] = {}
    for sid, p in tasks:
        grouped.setdefault(sid, set()).add(p)
    return {sid: frozenset(ps) for sid, ps in grouped.items()}
