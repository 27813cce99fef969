"""The coordinator's task assignor for streams groups: Kafka 4.2's StickyTaskAssignor (`sticky`).

Read from kafka-group-coordinator 4.2.2 (`coordinator.group.streams.assignor.StickyTaskAssignor` and
`ProcessState`). The assignor sees each member's previous *target* assignment and its process; a
process's load is its task count over its member count (instances with more stream threads take
more). Two quotas, both the ceiling of tasks over members and both recomputed whenever a member
reaches its quota exactly (the tasks it took and the member leave the sums): active tasks per member,
and all tasks (active plus standby) per member.

Active tasks, in order of partition then subtopology:
1. a task stays with the member that had it as active while that member is under the active quota;
2. else it goes to the least loaded member that had it as standby, if under the active quota;
3. the rest, in order of subtopology then partition, go one by one to the least loaded process's
   least loaded member.
Standby tasks, only for stateful subtopologies (those with changelog topics: a stateless task has
no state to keep warm), `num_standby_replicas` copies each, tasks in descending order:
1. the member that had the task as active and lost it takes a copy, if under the total quota;
2. else the least loaded member that had it as standby, on a process that holds no copy yet;
3. else (the remaining copies) the least loaded process that holds no copy of the task, in order of
   load; a task with fewer processes to go to gets fewer copies (Kafka logs a warning).
A copy is never placed on a process that already holds the task, active or standby.

Kafka 4.2's assignor does not read `rack.id` (nor client tags): rack-aware standby placement is not
in 4.2.2 nor 4.4.0 (ADR 97). Where Kafka breaks ties by HashMap and PriorityQueue order, this one
breaks them by process id, then member id, so the same input always gives the same assignment.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

import attrs

from .tasks import TasksTuple

Task = tuple[str, int]


@attrs.frozen
class MemberSpec:
    process_id: str
    current: TasksTuple  # its previous target assignment: stickiness


class _Process:
    """Kafka's ProcessState: a process's members, their task counts and the tasks it holds."""

    def __init__(self, process_id: str) -> None:
        self.process_id = process_id
        self.task_counts: dict[str, int] = {}
        self.active: dict[str, set[Task]] = {}
        self.standby: dict[str, set[Task]] = {}
        self.tasks: set[Task] = set()

    @property
    def load(self) -> float:
        return sum(self.task_counts.values()) / len(self.task_counts)

    def add_member(self, member_id: str) -> None:
        self.task_counts[member_id] = 0
        self.active[member_id] = set()
        self.standby[member_id] = set()

    def add(self, member_id: str, task: Task, active: bool) -> int:
        """Give the task to the member; its task count after."""
        self.tasks.add(task)
        (self.active if active else self.standby)[member_id].add(task)
        self.task_counts[member_id] += 1
        return self.task_counts[member_id]

    def add_to_least_loaded(self, task: Task, active: bool) -> int:
        member = min(self.task_counts, key=lambda m: (self.task_counts[m], m))
        return self.add(member, task, active)


class _Quota:
    """Tasks per member, recomputed as members fill up (Kafka's maybeUpdate*TasksPerMember)."""

    def __init__(self, tasks: int, members: int) -> None:
        self.tasks = tasks
        self.members = members
        self.per_member = _per_member(tasks, members)

    def taken(self, count: int) -> None:
        if count == self.per_member:
            self.members -= 1
            self.tasks -= count
            self.per_member = _per_member(self.tasks, self.members)


def _per_member(tasks: int, members: int) -> int:
    return 0 if members == 0 else math.ceil(tasks / members)


def assign(
    members: Mapping[str, MemberSpec],
    tasks: Sequence[Task],
    num_standby_replicas: int,
    stateful: Collection[str] = (),
) -> dict[str, TasksTuple]:
    """The target assignment: {member id: tasks}. `stateful`: the subtopologies with state (standbys)."""
    ids = sorted(members)
    if not ids:
        return {}
    processes: dict[str, _Process] = {}
    process_of: dict[str, _Process] = {}
    previous_active: dict[Task, str] = {}
    previous_standby: dict[Task, list[str]] = {}
    for m in ids:
        spec = members[m]
        process = processes.setdefault(spec.process_id, _Process(spec.process_id))
        process.add_member(m)
        process_of[m] = process
        for sid, ps in sorted(spec.current.active.items()):
            for p in sorted(ps):
                previous_active[(sid, p)] = m
        for sid, ps in sorted(spec.current.standby.items()):
            for p in sorted(ps):
                previous_standby.setdefault((sid, p), []).append(m)

    stateful_tasks = [t for t in tasks if t[0] in stateful]
    active_quota = _Quota(len(tasks), len(ids))
    total_quota = _Quota(len(tasks) + len(stateful_tasks) * num_standby_replicas, len(ids))
    by_load = sorted(processes.values(), key=lambda p: p.process_id)

    def count(m: str) -> int:
        return process_of[m].task_counts[m]

    def least_loaded_previous(candidates: Sequence[str], task: Task | None) -> str | None:
        """Kafka's findPrevMemberWithLeastLoad: the first candidate, then one whose process load and
        own task count are both lower; processes already holding `task` are skipped."""
        chosen: str | None = None
        best = (math.inf, math.inf)
        for m in candidates:
            process = process_of[m]
            if task is not None and task in process.tasks:
                continue
            load, own = process.load, count(m)
            if chosen is None or (load < best[0] and own < best[1]):
                chosen, best = m, (load, own)
        return chosen

    def give_active(m: str, task: Task) -> None:
        taken = process_of[m].add(m, task, active=True)
        active_quota.taken(taken)
        total_quota.taken(taken)

    unassigned = []
    for task in sorted(tasks, key=lambda t: (t[1], t[0])):
        owner = previous_active.get(task)
        if owner is not None and count(owner) < active_quota.per_member:
            give_active(owner, task)
        else:
            unassigned.append(task)
    rest = []
    for task in unassigned:
        previous = least_loaded_previous(previous_standby.get(task, []), None)
        if previous is not None and count(previous) < active_quota.per_member:
            give_active(previous, task)
        else:
            rest.append(task)
    for task in sorted(rest):
        process = min(by_load, key=lambda p: p.load)
        taken = process.add_to_least_loaded(task, active=True)
        active_quota.taken(taken)
        total_quota.taken(taken)

    if num_standby_replicas > 0:
        leftovers: list[tuple[Task, int]] = []
        for task in sorted(stateful_tasks, key=lambda t: (t[1], t[0]), reverse=True):
            for copy in range(num_standby_replicas):
                owner = previous_active.get(task)
                if owner is not None and task not in process_of[owner].tasks and count(owner) < total_quota.per_member:
                    total_quota.taken(process_of[owner].add(owner, task, active=False))
                    continue
                previous = least_loaded_previous(previous_standby.get(task, []), task)
                if previous is not None and count(previous) < total_quota.per_member:
                    total_quota.taken(process_of[previous].add(previous, task, active=False))
                    continue
                leftovers.append((task, num_standby_replicas - copy))
                break
        for task, copies in sorted(leftovers, reverse=True):
            for _ in range(copies):
                free = [p for p in sorted(by_load, key=lambda p: p.load) if task not in p.tasks]
                if not free:
                    break  # not enough processes for the requested standby replicas (Kafka warns)
                total_quota.taken(free[0].add_to_least_loaded(task, active=False))

    return {
        m: TasksTuple(_by_subtopology(process_of[m].active[m]), _by_subtopology(process_of[m].standby[m])) for m in ids
    }


def _by_subtopology(tasks: set[Task]) -> dict[str, frozenset[int]]:
    grouped: dict[str, set[int]] = {}
    for sid, p in tasks:
        grouped.setdefault(sid, set()).add(p)
    return {sid: frozenset(ps) for sid, ps in grouped.items()}
