"""Hypothesis drives the group coordinator with random members, requests and time.

Invariants: no request is answered twice; at most one generation is Stable at a time (every
member's assignment in a Stable group comes from the current generation's leader); every partition is
assigned to at most one member of a Stable generation; a member removed from the group gets
UNKNOWN_MEMBER_ID.
"""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from tests.unit.domain.groups.test_group_coordinator import G, Harness
from trafka.domain.errors import ErrorCode
from trafka.domain.groups import GroupState, JoinResult

PARTITIONS = 6


def encode_assignment(generation: int, partitions: list[int]) -> bytes:
    return f"{generation}:{','.join(map(str, partitions))}".encode()


def decode_assignment(data: bytes) -> tuple[int, list[int]]:
    generation, _, partitions = data.decode().partition(":")
    return int(generation), [int(p) for p in partitions.split(",") if p]


class GroupMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = Harness(delay=0)
        self.members: list[str] = []  # ids we believe may be in the group
        self.removed: set[str] = set()
        self.generation_of: dict[str, int] = {}

    def _absorb(self) -> None:
        """Track what members learned from their answers."""
        for result in self.h.answers.values():
            if isinstance(result, JoinResult) and result.error == ErrorCode.NONE:
                self.generation_of[result.member_id] = result.generation_id

    def _current_members(self) -> list[str]:
        group = self.h.coordinator.group(G)
        return list(group.members) if group else []

    @rule()
    def new_member(self):
        member = self.h.join_new()
        self.h.join(member)
        self.members.append(member)
        self._absorb()

    @precondition(lambda self: self.members)
    @rule(data=st.data())
    def rejoin(self, data):
        member = data.draw(st.sampled_from(self.members))
        self.h.join(member)
        self._absorb()

    @precondition(lambda self: self.members)
    @rule(data=st.data())
    def sync(self, data):
        member = data.draw(st.sampled_from(self.members))
        group = self.h.coordinator.group(G)
        generation = self.generation_of.get(member, -1)
        assignments = []
        if group is not None and group.leader_id == member:
            current = list(group.members)
            omitted = data.draw(st.sets(st.sampled_from(current)))  # a leader may leave members out
            assignments = [
                (m, encode_assignment(generation, list(range(i, PARTITIONS, len(current)))))
                for i, m in enumerate(current)
                if m not in omitted
            ]
        self.h.sync(member, generation, assignments)

    @precondition(lambda self: self.members)
    @rule(data=st.data())
    def heartbeat(self, data):
        member = data.draw(st.sampled_from(self.members))
        error = self.h.coordinator.heartbeat(G, member, self.generation_of.get(member, -1), self.h.now)
        if member in self.removed:
            assert error == ErrorCode.UNKNOWN_MEMBER_ID

    @precondition(lambda self: self.members)
    @rule(data=st.data())
    def leave(self, data):
        member = data.draw(st.sampled_from(self.members))
        (error,), completions = self.h.coordinator.leave(G, [(member, None)], self.h.now)
        self.h._record(completions)
        self._absorb()
        if error == ErrorCode.NONE:
            self.removed.add(member)
        self.members.remove(member)
        self.removed.add(member)

    @rule(ms=st.integers(min_value=1, max_value=40_000))
    def advance(self, ms):
        before = set(self._current_members())
        self.h.tick(self.h.now + ms)
        self._absorb()
        self.removed |= before - set(self._current_members())

    @invariant()
    def removed_members_are_unknown(self):
        assert not self.removed & set(self._current_members())
        for member in self.removed:
            error = self.h.coordinator.heartbeat(G, member, self.generation_of.get(member, -1), self.h.now)
            assert error == ErrorCode.UNKNOWN_MEMBER_ID

    @invariant()
    def a_stable_group_holds_one_generation_with_disjoint_assignments(self):
        group = self.h.coordinator.group(G)
        if group is None or group.state is not GroupState.STABLE:
            return
        seen: set[int] = set()
        for member in group.members.values():
            if not member.assignment:
                continue
            generation, partitions = decode_assignment(member.assignment)
            assert generation == group.generation_id
            assert not seen & set(partitions), "a partition is assigned twice in a Stable generation"
            seen |= set(partitions)


GroupMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
test_group_state_machine = GroupMachine.TestCase
