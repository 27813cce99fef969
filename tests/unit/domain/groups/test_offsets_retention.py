"""offsets.retention.minutes: committed offsets of groups Empty for the retention are removed (with
tombstones, by the store), standalone commits expire by their commit time, active groups keep theirs,
and a month of 10,000 churning groups leaves the offsets store bounded."""

from __future__ import annotations

from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.groups.group_metadata import CommittedOffset, snapshot
from trafka.domain.groups.offsets import CommitRequest
from trafka.domain.groups.state import GroupState
from trafka.domain.topics import TopicPartition

WEEK = 7 * 24 * 3_600_000
TP = TopicPartition("t", 0)


def _offsets():
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("t", 1, 1)
    return ctx.services.groups.offsets, ctx.services.groups.coordinator


def _commit(offsets, group: str, offset: int, now: int) -> None:
    offsets.commit(CommitRequest(group, "", -1, None, ((TP, CommittedOffset(offset)),)), now)


def test_standalone_commits_expire_by_their_commit_time_and_the_group_goes():
    offsets, coordinator = _offsets()
    _commit(offsets, "standalone", 5, now=1_000)
    assert offsets.expire(1_000 + WEEK - 1, WEEK) == 0
    assert offsets.fetch("standalone", None) == {TP: CommittedOffset(5, commit_timestamp_ms=1_000)}
    assert offsets.expire(1_000 + WEEK, WEEK) == 1
    assert offsets.fetch("standalone", None) == {}
    assert coordinator.group("standalone") is None


def test_an_empty_consumer_group_keeps_its_offsets_for_the_retention_after_it_empties():
    offsets, coordinator = _offsets()
    _commit(offsets, "consumers", 7, now=0)
    group = coordinator.group("consumers")
    group.protocol_type = "consumer"  # as after members joined and left at 10 weeks
    group.state_timestamp_ms = 10 * WEEK
    assert offsets.expire(11 * WEEK - 1, WEEK) == 0  # Kafka counts from the state timestamp
    assert offsets.expire(11 * WEEK, WEEK) == 1
    assert coordinator.group("consumers") is None


def test_without_a_state_timestamp_an_empty_groups_offsets_expire_by_commit_time():
    """A group loaded from a GroupMetadataValue v0/v1 (no currentStateTimestamp), as in Kafka."""
    offsets, coordinator = _offsets()
    _commit(offsets, "old", 7, now=5)
    coordinator.group("old").protocol_type = "consumer"
    assert offsets.expire(5 + WEEK - 1, WEEK) == 0
    assert offsets.expire(5 + WEEK, WEEK) == 1
    assert coordinator.group("old") is None


def test_an_empty_group_without_offsets_is_deleted_with_a_tombstone_at_the_next_sweep():
    offsets, coordinator = _offsets()
    coordinator.ensure_group("left")
    coordinator.group("left").protocol_type = "consumer"
    offsets._store.store_group("left", snapshot(coordinator.group("left")))
    assert offsets.expire(1, WEEK) == 0
    assert coordinator.group("left") is None
    assert "left" not in offsets._store.group_metadata()


def test_a_group_with_an_open_transaction_stays():
    offsets, coordinator = _offsets()
    offsets.stage_transactional(9, 0, "txn", {TP: CommittedOffset(4)}, now=0)
    assert offsets.expire(100 * WEEK, WEEK) == 0
    assert coordinator.group("txn") is not None


def test_a_group_with_members_keeps_its_offsets():
    offsets, coordinator = _offsets()
    _commit(offsets, "busy", 3, now=0)
    coordinator.group("busy").state = GroupState.STABLE
    assert offsets.expire(100 * WEEK, WEEK) == 0
    assert offsets.fetch("busy", None)[TP].offset == 3


def test_a_month_of_churning_groups_stays_bounded():
    """10,000 groups, each committing once, over 30 simulated days with a check every 6 hours: never
    more than a week and one interval's worth of groups hold offsets (the bound: 7/30 of them, plus
    6 hours' worth)."""
    offsets, _ = _offsets()
    day = 24 * 3_600_000
    check_every = day // 4
    next_check = check_every
    largest = 0
    for n in range(10_000):
        now = n * (30 * day // 10_000)
        _commit(offsets, f"g{n}", n, now)
        if now >= next_check:
            largest = max(largest, len(list(offsets._store.groups())))
            offsets.expire(now, WEEK)
            next_check = now + check_every
    bound = 10_000 * 7 // 30
    assert bound <= largest <= bound + 10_000 // 30 // 4 + 10
