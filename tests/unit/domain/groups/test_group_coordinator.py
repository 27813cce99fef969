"""The group coordinator driven through join / sync / heartbeat / leave / expiry with a fake clock."""

from __future__ import annotations

import itertools

import pytest

from trafka.domain.errors import ErrorCode
from trafka.domain.groups import (
    GroupCoordinator,
    GroupSettings,
    GroupState,
    IllegalTransition,
    JoinRequest,
    JoinResult,
    Protocol,
    SyncRequest,
    SyncResult,
)
from trafka.domain.groups.state import GroupEvent, next_state

G = "group"
SESSION = 10_000
REBALANCE = 30_000


class Harness:
    """Feeds the coordinator and remembers every answer by the token of its request."""

    def __init__(self, delay: int = 0) -> None:
        ids = itertools.count(1)
        self.coordinator = GroupCoordinator(
            GroupSettings(initial_rebalance_delay_ms=delay), lambda client: f"{client}-{next(ids)}"
        )
        self.now = 0
        self.answers: dict[object, JoinResult | SyncResult] = {}
        self._tokens = itertools.count()

    def _record(self, completions) -> None:
        for c in completions:
            assert c.token not in self.answers, "a request was answered twice"
            self.answers[c.token] = c.result

    def join(self, member_id="", protocols=(("range", b"m"),), instance=None, known=True, client="c"):
        token = next(self._tokens)
        self._record(
            self.coordinator.join(
                JoinRequest(
                    G,
                    member_id,
                    "consumer",
                    tuple(Protocol(n, m) for n, m in protocols),
                    SESSION,
                    REBALANCE,
                    instance,
                    client,
                    "host",
                    known,
                ),
                self.now,
                token,
            )
        )
        return token

    def join_new(self, **kw) -> str:
        """A new member's two-step join (MEMBER_ID_REQUIRED, then with the id); returns the id."""
        first = self.answers[self.join(**kw)]
        assert first.error == ErrorCode.MEMBER_ID_REQUIRED
        return first.member_id

    def sync(self, member_id, generation, assignments=(), instance=None):
        token = next(self._tokens)
        self._record(
            self.coordinator.sync(SyncRequest(G, member_id, generation, tuple(assignments), instance), self.now, token)
        )
        return token

    def tick(self, to: int) -> None:
        self.now = to
        self._record(self.coordinator.tick(to))

    @property
    def state(self) -> GroupState:
        return self.coordinator.describe(G).state


def test_transitions_are_a_table_and_anything_else_is_illegal():
    assert next_state(GroupState.EMPTY, GroupEvent.REBALANCE) is GroupState.PREPARING_REBALANCE
    with pytest.raises(IllegalTransition):
        next_state(GroupState.STABLE, GroupEvent.LEADER_SYNCED)
    with pytest.raises(IllegalTransition):
        next_state(GroupState.DEAD, GroupEvent.REBALANCE)


def test_one_member_joins_syncs_and_is_stable():
    h = Harness()
    member = h.join_new()
    joined = h.answers[h.join(member)]
    assert (joined.error, joined.generation_id, joined.leader, joined.protocol_name) == (
        ErrorCode.NONE,
        1,
        member,
        "range",
    )
    assert [m.member_id for m in joined.members] == [member]
    synced = h.answers[h.sync(member, 1, [(member, b"assignment")])]
    assert (synced.error, synced.assignment) == (ErrorCode.NONE, b"assignment")
    assert h.state is GroupState.STABLE


def test_two_members_wait_for_each_other_and_only_the_leader_gets_the_member_list():
    h = Harness()
    a = h.join_new()
    ta = h.join(a)
    assert ta in h.answers  # alone: completes at once (no initial delay here)
    h.sync(a, 1, [(a, b"A")])
    b = h.join_new()
    tb = h.join(b)
    assert tb not in h.answers and h.state is GroupState.PREPARING_REBALANCE
    assert h.coordinator.heartbeat(G, a, 1, h.now) == ErrorCode.REBALANCE_IN_PROGRESS
    ta2 = h.join(a)
    leader, follower = h.answers[ta2], h.answers[tb]
    assert leader.generation_id == follower.generation_id == 2
    assert leader.leader == a and len(leader.members) == 2 and follower.members == ()
    sb = h.sync(b, 2)
    assert sb not in h.answers and h.state is GroupState.COMPLETING_REBALANCE
    sa = h.sync(a, 2, [(a, b"A"), (b, b"B")])
    assert (h.answers[sa].assignment, h.answers[sb].assignment) == (b"A", b"B")
    assert h.state is GroupState.STABLE


def test_the_initial_rebalance_delay_holds_the_first_join():
    h = Harness(delay=3_000)
    a = h.join_new()
    ta = h.join(a)
    h.tick(1_000)
    b = h.join_new()
    tb = h.join(b)
    h.tick(3_500)
    assert ta not in h.answers  # the delay restarted when b joined
    h.tick(4_000)
    assert h.answers[ta].generation_id == h.answers[tb].generation_id == 1


def test_a_member_that_stops_heartbeating_expires_and_the_group_rebalances():
    h = Harness()
    a, b = h.join_new(), h.join_new()
    ta, tb = h.join(a), h.join(b)
    assert h.answers[ta].generation_id == h.answers[tb].generation_id == 1
    h.sync(a, 1, [(a, b"A"), (b, b"B")])
    h.sync(b, 1)
    h.tick(SESSION - 1)
    assert h.coordinator.heartbeat(G, a, 1, h.now) == ErrorCode.NONE
    h.tick(SESSION)  # b never heartbeated
    assert h.state is GroupState.PREPARING_REBALANCE
    assert h.coordinator.heartbeat(G, b, 1, h.now) == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.coordinator.heartbeat(G, a, 1, h.now) == ErrorCode.REBALANCE_IN_PROGRESS
    rejoin = h.join(a)
    assert h.answers[rejoin].generation_id == 2 and len(h.answers[rejoin].members) == 1


def test_a_member_that_does_not_rejoin_is_dropped_at_the_rebalance_timeout():
    h = Harness()
    a, b = h.join_new(), h.join_new()
    h.join(a), h.join(b)
    h.sync(a, 1, [(a, b"A"), (b, b"B")]), h.sync(b, 1)
    c = h.join_new()
    tc = h.join(c)
    for t in range(2_000, REBALANCE, 2_000):  # a and b heartbeat but never rejoin
        h.now = t
        h.coordinator.heartbeat(G, a, 1, t), h.coordinator.heartbeat(G, b, 1, t)
        h.tick(t)
    assert tc not in h.answers
    h.tick(REBALANCE)
    assert h.answers[tc].generation_id == 2 and h.answers[tc].leader == c
    assert [m.member_id for m in h.coordinator.describe(G).members] == [c]


def test_leave_group_triggers_a_rebalance_and_an_unknown_member_is_reported():
    h = Harness()
    a, b = h.join_new(), h.join_new()
    h.join(a), h.join(b)
    h.sync(a, 1, [(a, b"A"), (b, b"B")]), h.sync(b, 1)
    errors, _ = h.coordinator.leave(G, [(b, None), ("nobody", None)], h.now)
    assert errors == [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID]
    assert h.state is GroupState.PREPARING_REBALANCE
    assert h.answers[h.join(a)].generation_id == 2
    errors, _ = h.coordinator.leave(G, [(a, None)], h.now)
    assert h.state is GroupState.EMPTY  # the last member left: an empty group at a new generation
    assert h.coordinator.group(G).generation_id == 3


def test_stale_generations_are_fenced():
    h = Harness()
    a = h.join_new()
    h.join(a)
    h.sync(a, 1, [(a, b"A")])
    assert h.answers[h.sync(a, 0)].error == ErrorCode.ILLEGAL_GENERATION
    assert h.coordinator.heartbeat(G, a, 7, h.now) == ErrorCode.ILLEGAL_GENERATION
    assert h.coordinator.validate_offset_commit(G, a, 0, h.now) == ErrorCode.ILLEGAL_GENERATION
    assert h.coordinator.validate_offset_commit(G, a, 1, h.now) == ErrorCode.NONE
    assert h.coordinator.validate_offset_commit(G, "x", 1, h.now) == ErrorCode.UNKNOWN_MEMBER_ID


def test_transactional_commits_follow_kafkas_rules_while_a_rebalance_completes():
    """Kafka's ClassicGroup.validateOffsetCommit: a TxnOffsetCommit of the current generation is taken
    while the group completes a rebalance (an OffsetCommit is told REBALANCE_IN_PROGRESS), and one
    naming no member is taken whatever the group's state; an unknown static member is UNKNOWN_MEMBER_ID."""
    h = Harness()
    a = h.join_new()
    h.join(a)
    assert h.state is GroupState.COMPLETING_REBALANCE
    validate = h.coordinator.validate_offset_commit
    assert validate(G, a, 1, h.now) == ErrorCode.REBALANCE_IN_PROGRESS
    assert validate(G, a, 1, h.now, transactional=True) == ErrorCode.NONE
    assert validate(G, a, 0, h.now, transactional=True) == ErrorCode.ILLEGAL_GENERATION
    assert validate(G, "", -1, h.now, transactional=True) == ErrorCode.NONE
    assert validate(G, "", -1, h.now) == ErrorCode.UNKNOWN_MEMBER_ID
    assert validate(G, a, 1, h.now, "no-such-instance", transactional=True) == ErrorCode.UNKNOWN_MEMBER_ID
    assert validate(G, "x", 1, h.now, transactional=True) == ErrorCode.UNKNOWN_MEMBER_ID


def test_an_offset_commit_keeps_the_session_but_a_transactional_one_does_not():
    """Kafka reschedules a member's heartbeat on an OffsetCommit in a Stable or PreparingRebalance
    group (OffsetMetadataManager.commitOffset), never on a TxnOffsetCommit."""
    h = Harness()
    a = h.join_new()
    h.join(a)
    h.sync(a, 1, [(a, b"A")])
    h.now = SESSION - 1
    assert h.coordinator.validate_offset_commit(G, a, 1, h.now, transactional=True) == ErrorCode.NONE
    h.tick(SESSION)
    assert h.state is GroupState.PREPARING_REBALANCE or h.state is GroupState.EMPTY  # expired
    h = Harness()
    a = h.join_new()
    h.join(a)
    h.sync(a, 1, [(a, b"A")])
    h.now = SESSION - 1
    assert h.coordinator.validate_offset_commit(G, a, 1, h.now) == ErrorCode.NONE
    h.tick(SESSION)
    assert h.state is GroupState.STABLE


def test_simple_consumers_commit_with_generation_minus_one_to_an_empty_or_new_group():
    h = Harness()
    assert h.coordinator.validate_offset_commit("simple", "", -1, 0) == ErrorCode.NONE
    assert [g.group_id for g in h.coordinator.list_groups()] == ["simple"]
    a = h.join_new()
    h.join(a)
    assert h.coordinator.validate_offset_commit(G, "", -1, 0) == ErrorCode.UNKNOWN_MEMBER_ID


def test_static_member_rejoining_with_a_new_id_keeps_its_assignment_and_fences_the_old_id():
    h = Harness()
    a = h.answers[h.join(instance="i-a")].member_id  # alone: generation 1 at once
    h.sync(a, 1, [(a, b"A")], instance="i-a")
    tb = h.join(instance="i-b")  # static members skip MEMBER_ID_REQUIRED
    h.join(a, instance="i-a")
    b = h.answers[tb].member_id
    assert h.answers[tb].generation_id == 2
    sb = h.sync(b, 2, instance="i-b")
    h.sync(a, 2, [(a, b"A"), (b, b"B")], instance="i-a")
    assert h.answers[sb].assignment == b"B" and h.state is GroupState.STABLE

    rejoined = h.answers[h.join(instance="i-b")]  # b restarts: no member id, same instance id
    assert rejoined.error == ErrorCode.NONE and rejoined.generation_id == 2  # no rebalance
    assert h.state is GroupState.STABLE
    new_b = rejoined.member_id
    assert new_b != b
    assert h.answers[h.sync(new_b, 2, instance="i-b")].assignment == b"B"
    assert h.coordinator.heartbeat(G, b, 2, h.now, "i-b") == ErrorCode.FENCED_INSTANCE_ID
    assert h.coordinator.heartbeat(G, a, 2, h.now, "i-a") == ErrorCode.NONE


def test_protocols_are_chosen_by_vote_and_inconsistent_ones_are_refused():
    h = Harness()
    a = h.join_new(protocols=(("cooperative", b""), ("range", b"")))
    b = h.join_new(protocols=(("range", b""), ("cooperative", b"")))
    ta = h.join(a, protocols=(("cooperative", b""), ("range", b"")))
    h.join(b, protocols=(("range", b""), ("cooperative", b"")))
    assert h.answers[ta].protocol_name in ("cooperative", "range")
    refused = h.answers[h.join(protocols=(("sticky", b""),))]
    assert refused.error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_unknown_member_and_bad_requests():
    h = Harness()
    assert h.answers[h.join("ghost")].error == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.answers[h.sync("ghost", 1)].error == ErrorCode.UNKNOWN_MEMBER_ID
    token = next(h._tokens)
    h._record(h.coordinator.join(JoinRequest("", "", "consumer", (Protocol("r", b""),), SESSION, REBALANCE), 0, token))
    assert h.answers[token].error == ErrorCode.INVALID_GROUP_ID
    token = next(h._tokens)
    h._record(h.coordinator.join(JoinRequest(G, "", "consumer", (Protocol("r", b""),), 10, REBALANCE), 0, token))
    assert h.answers[token].error == ErrorCode.INVALID_SESSION_TIMEOUT


def test_old_clients_join_without_member_id_required():
    h = Harness()
    joined = h.answers[h.join(known=False)]
    assert joined.error == ErrorCode.NONE and joined.member_id


def test_a_pending_member_that_never_returns_expires():
    h = Harness()
    h.join_new()
    assert h.coordinator.next_deadline() == SESSION
    h.tick(SESSION)
    assert h.coordinator.next_deadline() is None


def test_delete_only_empty_groups():
    h = Harness()
    a = h.join_new()
    h.join(a)
    assert h.coordinator.delete(G) == ErrorCode.NON_EMPTY_GROUP
    h.coordinator.leave(G, [(a, None)], 0)
    assert h.coordinator.delete(G) == ErrorCode.NONE
    assert h.coordinator.delete(G) == ErrorCode.GROUP_ID_NOT_FOUND
    assert h.coordinator.describe(G).state is GroupState.DEAD


def test_requests_without_an_instance_id_are_not_fenced_for_static_members():
    """Heartbeat v0-2 and old SyncGroup versions cannot carry group.instance.id (aiokafka sends them)."""
    h = Harness()
    a = h.answers[h.join(instance="i-a")].member_id
    assert h.answers[h.sync(a, 1, [(a, b"A")])].assignment == b"A"
    assert h.coordinator.heartbeat(G, a, 1, h.now) == ErrorCode.NONE
    assert h.coordinator.heartbeat(G, a, 1, h.now, "i-other") == ErrorCode.FENCED_INSTANCE_ID


def test_an_emptied_group_keeps_its_protocol_type():
    h = Harness()
    a = h.join_new()
    h.join(a)
    h.coordinator.leave(G, [(a, None)], h.now)
    assert h.coordinator.list_groups()[0].protocol_type == "consumer"
    assert h.coordinator.describe(G).protocol_type == "consumer"


# -- the incremental (cooperative, KIP-429) rebalance over the classic protocol -----------------------
#
# A cooperative-sticky member's metadata carries the partitions it owns. Revoking some changes it, and
# the member rejoins: Kafka then starts a new generation even though the group is Stable, and the leader
# hands the revoked partitions to the others in it.


def coop(*owned: int) -> tuple[tuple[str, bytes], ...]:
    return (("cooperative-sticky", bytes(owned) or b"-"),)


def _two_members_in_generation_2(h: Harness) -> tuple[str, str]:
    """a alone owns both partitions (generation 1), then b joins: generation 2, a the leader."""
    a = h.join_new(protocols=coop())
    h.join(a, protocols=coop())
    h.sync(a, 1, [(a, b"p0,p1")])
    b = h.join_new(protocols=coop())
    tb = h.join(b, protocols=coop())
    assert h.coordinator.heartbeat(G, a, 1, h.now) == ErrorCode.REBALANCE_IN_PROGRESS
    ta = h.join(a, protocols=coop(0, 1))  # now owning p0 and p1: its rejoin completes the round
    assert h.answers[ta].generation_id == h.answers[tb].generation_id == 2
    assert [m.metadata for m in h.answers[ta].members] == [bytes([0, 1]), b"-"]
    return a, b


def test_the_incremental_cycle_revokes_in_generation_2_and_reassigns_in_generation_3():
    h = Harness()
    a, b = _two_members_in_generation_2(h)
    sb = h.sync(b, 2)
    assert sb not in h.answers  # waits for the leader
    sa = h.sync(a, 2, [(a, b"p1"), (b, b"")])  # p0 may not move yet: a still owns it
    assert (h.answers[sa].assignment, h.answers[sb].assignment) == (b"p1", b"")
    assert h.state is GroupState.STABLE

    # a revokes p0 and rejoins owning p1 only: a rebalance, still in generation 2 until it completes.
    ta = h.join(a, protocols=coop(1))
    assert ta not in h.answers
    assert h.state is GroupState.PREPARING_REBALANCE
    assert h.coordinator.describe(G).state is GroupState.PREPARING_REBALANCE
    assert h.coordinator.heartbeat(G, b, 2, h.now) == ErrorCode.REBALANCE_IN_PROGRESS
    tb = h.join(b, protocols=coop())
    joined_a, joined_b = h.answers[ta], h.answers[tb]
    assert (joined_a.error, joined_b.error) == (ErrorCode.NONE, ErrorCode.NONE)
    assert joined_a.generation_id == joined_b.generation_id == 3
    assert joined_a.leader == a and [m.metadata for m in joined_a.members] == [bytes([1]), b"-"]
    assert joined_b.members == ()

    sb = h.sync(b, 3)
    sa = h.sync(a, 3, [(a, b"p1"), (b, b"p0")])
    assert (h.answers[sa].assignment, h.answers[sb].assignment) == (b"p1", b"p0")
    assert h.state is GroupState.STABLE
    for member in (a, b):
        assert h.coordinator.heartbeat(G, member, 3, h.now) == ErrorCode.NONE
        assert h.coordinator.heartbeat(G, member, 2, h.now) == ErrorCode.ILLEGAL_GENERATION
    assert h.answers[h.sync(b, 2)].error == ErrorCode.ILLEGAL_GENERATION


def test_a_follower_whose_owned_partitions_changed_rebalances_a_stable_group():
    h = Harness()
    a, b = _two_members_in_generation_2(h)
    h.sync(a, 2, [(a, b"p0"), (b, b"p1")])
    h.sync(b, 2)
    same = h.answers[h.join(b, protocols=coop())]  # unchanged: the current generation, no rebalance
    assert (same.error, same.generation_id, same.members) == (ErrorCode.NONE, 2, ())
    assert h.state is GroupState.STABLE
    tb = h.join(b, protocols=coop(1))  # changed: a new generation for everyone
    assert tb not in h.answers and h.state is GroupState.PREPARING_REBALANCE
    assert h.coordinator.heartbeat(G, a, 2, h.now) == ErrorCode.REBALANCE_IN_PROGRESS
    ta = h.join(a, protocols=coop(0))
    assert h.answers[ta].generation_id == h.answers[tb].generation_id == 3


def test_a_follower_that_syncs_after_the_leader_rejoined_is_told_to_rejoin():
    """The race in librdkafka's 0113 test: the leader syncs, revokes and rejoins before the follower's
    SyncGroup of the same generation arrives. Kafka answers it REBALANCE_IN_PROGRESS (the group is
    PreparingRebalance), so the follower never sees generation 2's empty assignment."""
    h = Harness()
    a, b = _two_members_in_generation_2(h)
    h.sync(a, 2, [(a, b"p1"), (b, b"")])
    ta = h.join(a, protocols=coop(1))
    late = h.answers[h.sync(b, 2)]
    assert late.error == ErrorCode.REBALANCE_IN_PROGRESS
    tb = h.join(b, protocols=coop())
    assert h.answers[ta].generation_id == h.answers[tb].generation_id == 3


def test_a_join_while_completing_rebalance_gets_the_current_generation_unless_its_metadata_changed():
    h = Harness()
    a, b = _two_members_in_generation_2(h)
    assert h.state is GroupState.COMPLETING_REBALANCE
    assert h.coordinator.heartbeat(G, b, 2, h.now) == ErrorCode.NONE  # Kafka: heartbeats are fine here
    again = h.answers[h.join(a, protocols=coop(0, 1))]  # a lost its answer and asks again
    assert (again.generation_id, len(again.members)) == (2, 2)
    assert h.state is GroupState.COMPLETING_REBALANCE
    sb = h.sync(b, 2)
    ta = h.join(a, protocols=coop(1))  # changed: the waiting SyncGroup is told to rejoin
    assert h.answers[sb].error == ErrorCode.REBALANCE_IN_PROGRESS
    assert ta not in h.answers and h.state is GroupState.PREPARING_REBALANCE
    tb = h.join(b, protocols=coop())
    assert h.answers[ta].generation_id == h.answers[tb].generation_id == 3


def test_a_follower_that_waited_for_the_leaders_sync_gets_a_whole_session_from_its_answer():
    """Kafka's propagateAssignment starts each member's session again when it answers its SyncGroup.
    A follower that synced at once and then waited for a slow leader (the leader syncing within its own
    session) must not lose its membership before its first heartbeat after the answer: counted from
    its SyncGroup, its session ran out at the next tick and that heartbeat was answered
    UNKNOWN_MEMBER_ID, as kgo's TestTxnEtl saw on a loaded machine."""
    h = Harness()
    a = h.join_new()
    h.join(a)
    h.sync(a, 1, [(a, b"A")])
    b = h.join_new()
    tb = h.join(b)
    h.join(a)  # the join completes at 0: both sessions count from there
    assert h.answers[tb].generation_id == 2
    h.now = 1_000
    sb = h.sync(b, 2)  # the follower syncs at once, then waits
    h.now = SESSION - 1_000
    h.sync(a, 2, [(a, b"A"), (b, b"B")])  # the leader, slow but within its session
    assert h.answers[sb].assignment == b"B"
    h.tick(1_000 + SESSION + 500)  # b's first heartbeat is due 3 s after its answer: not yet here
    assert h.state is GroupState.STABLE
    assert h.coordinator.heartbeat(G, b, 2, h.now) == ErrorCode.NONE
    assert h.coordinator.take_failed() == []


def test_a_sync_answered_rebalance_in_progress_leaves_the_member_a_whole_session_to_rejoin():
    """The same for a waiting SyncGroup that a new rebalance answers REBALANCE_IN_PROGRESS (Kafka's
    resetAndPropagateAssignmentWithError): the member's session counts from that answer."""
    h = Harness()
    a = h.join_new()
    h.join(a)
    h.sync(a, 1, [(a, b"A")])
    b = h.join_new()
    h.join(b)
    h.join(a)
    h.now = 1_000
    sb = h.sync(b, 2)
    h.now = SESSION - 2_000
    assert h.coordinator.heartbeat(G, a, 2, h.now) == ErrorCode.NONE  # the leader is alive
    h.now = SESSION - 1_000
    c = h.join_new(client="late")  # a new member: the group rebalances again, b's sync is answered
    h.join(c)
    assert h.answers[sb].error == ErrorCode.REBALANCE_IN_PROGRESS
    h.tick(1_000 + SESSION + 500)
    assert b in {m.member_id for m in h.coordinator.group(G).members.values()}
    assert h.coordinator.take_failed() == []
