"""A streams group's topology configured as Kafka's InternalTopicManager does it, and the sticky task
assignor: partition counts derived, copartition groups made equal or refused, the NOT_READY status of
each problem; active tasks balanced and sticky, standby tasks off the active task's process."""

from __future__ import annotations

from trafka.domain.groups.streams import (
    MemberSpec,
    StreamsStatus,
    Subtopology,
    TasksTuple,
    TopicInfo,
    Topology,
    assign,
    configure,
)

REPARTITION = "app-counts-repartition"
CHANGELOG = "app-counts-changelog"


def word_count(repartition_partitions: int = 0) -> Topology:
    return Topology(
        1,
        (
            Subtopology("0", source_topics=("lines",), repartition_sink_topics=(REPARTITION,)),
            Subtopology(
                "1",
                state_changelog_topics=(TopicInfo(CHANGELOG),),
                repartition_source_topics=(TopicInfo(REPARTITION, partitions=repartition_partitions),),
            ),
        ),
    )


def test_the_internal_topics_take_the_source_topics_partition_count():
    configured = configure(word_count(), {"lines": 4}.get)
    assert configured.problem is not None and configured.problem.code is StreamsStatus.MISSING_INTERNAL_TOPICS
    assert {t.name: t.partitions for t in configured.to_create} == {REPARTITION: 4, CHANGELOG: 4}
    assert configured.task_counts == {"0": 4, "1": 4}
    ready = configure(word_count(), {"lines": 4, REPARTITION: 4, CHANGELOG: 4}.get)
    assert ready.ready and ready.to_create == ()


def test_a_repartition_topic_with_a_fixed_count_keeps_it_and_its_changelog_follows():
    configured = configure(word_count(repartition_partitions=2), {"lines": 4}.get)
    assert {t.name: t.partitions for t in configured.to_create} == {REPARTITION: 2, CHANGELOG: 2}


def test_a_missing_source_topic_and_a_mispartitioned_internal_topic_are_each_their_status():
    missing = configure(word_count(), {}.get)
    assert missing.problem is not None and missing.problem.code is StreamsStatus.MISSING_SOURCE_TOPICS
    assert missing.problem.detail == "Source topics lines are missing."
    wrong = configure(word_count(), {"lines": 4, REPARTITION: 4, CHANGELOG: 3}.get)
    assert wrong.problem is not None and wrong.problem.code is StreamsStatus.INCORRECTLY_PARTITIONED_TOPICS
    assert "expected 4, found 3" in wrong.problem.detail


def join_topology() -> Topology:
    """A stream-table join: both sides must be copartitioned; the stream side is repartitioned."""
    return Topology(
        1,
        (
            Subtopology("0", source_topics=("clicks",), repartition_sink_topics=("app-rekeyed-repartition",)),
            Subtopology(
                "1",
                source_topics=("users",),
                repartition_source_topics=(TopicInfo("app-rekeyed-repartition"),),
                copartition_groups=(frozenset({"users", "app-rekeyed-repartition"}),),
            ),
        ),
    )


def test_a_copartitioned_repartition_topic_takes_its_groups_fixed_count():
    configured = configure(join_topology(), {"clicks": 8, "users": 3}.get)
    assert {t.name: t.partitions for t in configured.to_create} == {"app-rekeyed-repartition": 3}


def test_copartitioned_user_topics_of_different_counts_are_refused():
    topology = Topology(1, (Subtopology("0", source_topics=("a", "b"), copartition_groups=(frozenset({"a", "b"}),)),))
    configured = configure(topology, {"a": 2, "b": 3}.get)
    assert configured.problem is not None and configured.problem.code is StreamsStatus.INCORRECTLY_PARTITIONED_TOPICS
    assert configured.task_counts is None


TASKS = [("0", p) for p in range(4)] + [("1", p) for p in range(4)]
STATEFUL = ("0", "1")


def tasks_of(assignment: TasksTuple) -> set[tuple[str, int]]:
    return {(sid, p) for sid, ps in assignment.active.items() for p in ps}


def test_active_tasks_are_balanced_and_stay_where_they_were():
    first = assign({"a": MemberSpec("p1", TasksTuple()), "b": MemberSpec("p2", TasksTuple())}, TASKS, 0)
    assert [len(tasks_of(first[m])) for m in "ab"] == [4, 4]
    members = {m: MemberSpec(p, first[m]) for m, p in (("a", "p1"), ("b", "p2"))}
    members["c"] = MemberSpec("p3", TasksTuple())
    second = assign(members, TASKS, 0)
    assert sorted(len(tasks_of(second[m])) for m in "abc") == [2, 3, 3]
    assert tasks_of(second["a"]) <= tasks_of(first["a"]) and tasks_of(second["b"]) <= tasks_of(first["b"])


def test_standby_tasks_go_to_another_process_and_are_capped_by_the_processes():
    two_in_one = {"a": MemberSpec("p1", TasksTuple()), "b": MemberSpec("p1", TasksTuple())}
    assert all(not assign(two_in_one, TASKS, 1, STATEFUL)[m].standby for m in "ab")  # nowhere else to put them
    members = {"a": MemberSpec("p1", TasksTuple()), "b": MemberSpec("p2", TasksTuple())}
    result = assign(members, TASKS, 1, STATEFUL)
    for m, other in (("a", "b"), ("b", "a")):
        standby = {(sid, p) for sid, ps in result[m].standby.items() for p in ps}
        assert standby == tasks_of(result[other])


def standby_of(assignment: TasksTuple) -> set[tuple[str, int]]:
    return {(sid, p) for sid, ps in assignment.standby.items() for p in ps}


def test_only_stateful_subtopologies_get_standby_tasks():
    """Kafka 4.2's StickyTaskAssignor lists standby tasks of stateful subtopologies only (a subtopology
    with changelog topics): a stateless task has no state to keep warm."""
    members = {"a": MemberSpec("p1", TasksTuple()), "b": MemberSpec("p2", TasksTuple())}
    result = assign(members, TASKS, 1, stateful=("1",))
    standbys = standby_of(result["a"]) | standby_of(result["b"])
    assert standbys == {("1", p) for p in range(4)}


def test_no_standby_shares_a_process_with_its_active_task_across_many_members():
    """Three instances of two stream threads each (six members, three processes), two standby copies:
    every stateful task has its active and its two copies on three different processes."""
    members = {f"{p}-t{t}": MemberSpec(p, TasksTuple()) for p in ("p1", "p2", "p3") for t in (1, 2)}
    result = assign(members, TASKS, 2, STATEFUL)
    for task in TASKS:
        holders = [members[m].process_id for m in members if task in tasks_of(result[m]) | standby_of(result[m])]
        assert sorted(holders) == ["p1", "p2", "p3"], task
    loads = sorted(len(tasks_of(result[m])) + len(standby_of(result[m])) for m in members)
    assert loads[-1] - loads[0] <= 1  # 24 tasks over 6 members


def test_a_task_that_moves_leaves_its_standby_copy_on_the_member_that_ran_it():
    """Kafka's stickiness for standbys: the previous active owner keeps a standby copy when its task
    moves, so the state it built is not thrown away."""
    first = assign({"a": MemberSpec("p1", TasksTuple()), "b": MemberSpec("p2", TasksTuple())}, TASKS, 1, STATEFUL)
    members = {m: MemberSpec(p, first[m]) for m, p in (("a", "p1"), ("b", "p2"))}
    members["c"] = MemberSpec("p3", TasksTuple())
    second = assign(members, TASKS, 1, STATEFUL)
    moved = {t: m for m in "ab" for t in tasks_of(first[m]) if t not in tasks_of(second[m])}
    assert moved  # c took some
    for task, previous in moved.items():
        assert task in standby_of(second[previous])


def test_a_standby_becomes_the_active_task_when_its_owner_leaves():
    first = assign({"a": MemberSpec("p1", TasksTuple()), "b": MemberSpec("p2", TasksTuple())}, TASKS, 1, STATEFUL)
    second = assign({"b": MemberSpec("p2", first["b"])}, TASKS, 1, STATEFUL)
    assert tasks_of(second["b"]) == set(TASKS) and not second["b"].standby
