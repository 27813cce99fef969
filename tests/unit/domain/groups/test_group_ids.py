"""One namespace of group ids: `ClassicOrShareGroupIds` answers the KIP-848 coordinator for the
classic coordinator and for share groups, so a share group's id is taken for a consumer group."""

from __future__ import annotations

from tests.unit.domain.groups.consumer_harness import FakeTopics
from trafka.domain.groups import GroupCoordinator, GroupSettings
from trafka.domain.groups.group_ids import ClassicOrShareGroupIds
from trafka.domain.groups.share import ShareGroupCoordinator, ShareGroupSettings, ShareHeartbeat


def test_a_share_groups_id_is_taken_and_is_no_classic_group_to_migrate():
    classic = GroupCoordinator(GroupSettings(initial_rebalance_delay_ms=0), lambda client: f"{client}-new")
    ids = ClassicOrShareGroupIds(classic)
    assert not ids.is_classic_group("jobs") and ids.group("jobs") is None
    share = ShareGroupCoordinator(ShareGroupSettings(), FakeTopics(t=1), ids.is_classic_group)
    ids.share = share
    share.heartbeat(ShareHeartbeat("jobs", "m1", 0, subscribed_topic_names=("t",)), 0)
    assert ids.is_classic_group("jobs")  # taken: a consumer heartbeat for it is refused
    assert not ids.is_empty_classic_group("jobs")  # and never upgraded to a consumer group
    assert ids.group("jobs") is None  # nothing to migrate
    assert not ids.is_classic_group("other")
