"""StreamsGroupHeartbeat and StreamsGroupDescribe (KIP-1071) and the rooms that see streams groups
beside the others (ListGroups, DeleteGroups, OffsetCommit, OffsetFetch), on a memory-store broker:
a word count's topology (a repartition after `groupBy`, a changelog for `count`)."""

from __future__ import annotations

import argparse

import pytest
from kafka.protocol.admin import DeleteGroupsRequest, ListGroupsRequest
from kafka.protocol.consumer import OffsetCommitRequest, OffsetFetchRequest

from tests.kafka_python_messages import TxnOffsetCommitRequest
from trafka.adapters.kafka.apis import (
    delete_groups,
    list_groups,
    offset_commit,
    offset_fetch,
    streams_group_describe,
    streams_group_heartbeat,
)
from trafka.adapters.kafka.apis import txn_offset_commit as txn_offset_commit_room
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.app.config.settings import load_settings
from trafka.app.ops.dump_log import add_dump_log_parser, dump_segment
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.domain.groups.streams import StreamsStatus
from trafka.schema_codec.messages import StreamsGroupDescribeRequest, StreamsGroupHeartbeatRequest

CLIENT = ClientInfo("client-1", "127.0.0.1")
NO_DELAY = {"streams_initial_rebalance_delay_ms": 0}  # Kafka's 3 s initial rebalance delay, as trafka.Broker() has it
Req = StreamsGroupHeartbeatRequest
Sub = Req.Topology.Subtopology


@pytest.fixture
def ctx():
    settings = load_settings(overrides={"storage": {"kind": "memory"}, "groups": NO_DELAY})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("lines", 3, 1)
    return ctx


def word_count(epoch: int = 1) -> Req.Topology:
    info = Sub.TopicInfo
    return Req.Topology(
        epoch=epoch,
        subtopologies=[
            Sub(
                subtopology_id="0",
                source_topics=["lines"],
                source_topic_regex=[],
                state_changelog_topics=[],
                repartition_sink_topics=["app-counts-repartition"],
                repartition_source_topics=[],
                copartition_groups=[],
            ),
            Sub(
                subtopology_id="1",
                source_topics=[],
                source_topic_regex=[],
                state_changelog_topics=[
                    info(
                        name="app-counts-changelog",
                        partitions=0,
                        replication_factor=0,
                        topic_configs=[Sub.TopicInfo.KeyValue(key="cleanup.policy", value="compact")],
                    )
                ],
                repartition_sink_topics=[],
                repartition_source_topics=[
                    info(name="app-counts-repartition", partitions=0, replication_factor=0, topic_configs=[])
                ],
                copartition_groups=[],
            ),
        ],
    )


def heartbeat(ctx, member_id="m1", epoch=0, process="p1", active=None, **fields):
    joining = epoch == 0
    tasks = [Req.TaskIds(subtopology_id=s, partitions=ps) for s, ps in (active or {}).items()]
    request = Req(
        group_id="app",
        member_id=member_id,
        member_epoch=epoch,
        endpoint_information_epoch=0,
        rebalance_timeout_ms=30_000 if joining else -1,
        topology=word_count() if joining else None,
        process_id=process if joining else None,
        active_tasks=tasks if joining or active is not None else None,
        standby_tasks=[] if joining or active is not None else None,
        warmup_tasks=[] if joining or active is not None else None,
        **fields,
    )
    return streams_group_heartbeat.API.handle(ctx, request, 0, CLIENT)


def tasks(response) -> dict[str, list[int]]:
    return {t.subtopology_id: t.partitions for t in response.active_tasks}


def test_the_first_heartbeat_creates_the_internal_topics_with_the_derived_partition_counts(ctx):
    first = heartbeat(ctx)
    assert (first.error_code, first.member_epoch) == (ErrorCode.NONE, 2)  # Kafka 4.2: a new group starts at 2
    assert [s.status_code for s in first.status] == [StreamsStatus.MISSING_INTERNAL_TOPICS]
    assert first.active_tasks == []  # NOT_READY: nothing assigned yet
    assert ctx.services.catalog.get("app-counts-repartition").partition_count == 3
    changelog = ctx.services.catalog.get("app-counts-changelog")
    assert changelog.partition_count == 3 and changelog.configs["cleanup.policy"] == "compact"
    second = heartbeat(ctx, epoch=2, active={})
    assert (second.error_code, second.status, second.member_epoch) == (ErrorCode.NONE, [], 3)
    assert tasks(second) == {"0": [0, 1, 2], "1": [0, 1, 2]}


def test_a_second_member_gets_tasks_only_once_the_first_revoked_them(ctx):
    heartbeat(ctx)
    heartbeat(ctx, epoch=2, active={})
    joined = heartbeat(ctx, member_id="m2", process="p2")
    assert joined.member_epoch == 4 and tasks(joined) == {}  # its tasks are still the first member's
    revoke = heartbeat(ctx, epoch=3, active={"0": [0, 1, 2], "1": [0, 1, 2]})
    assert revoke.member_epoch == 3  # must revoke first: told what it keeps, at its epoch
    kept = tasks(revoke)
    assert sum(len(ps) for ps in kept.values()) == 3
    done = heartbeat(ctx, epoch=3, active=kept)
    assert done.member_epoch == 4
    second = heartbeat(ctx, member_id="m2", epoch=4, active={})
    mine = tasks(second)
    assert sum(len(ps) for ps in mine.values()) == 3
    for sid, ps in mine.items():
        assert not set(ps) & set(kept.get(sid, []))


def test_describe_shows_the_topology_the_members_and_their_tasks(ctx):
    heartbeat(ctx)
    heartbeat(ctx, epoch=2, active={})
    request = StreamsGroupDescribeRequest(group_ids=["app", "nope"], include_authorized_operations=False)
    response = streams_group_describe.API.handle(ctx, request, 0, CLIENT)
    app, nope = response.groups
    assert (app.error_code, app.group_state, app.group_epoch, app.assignment_epoch) == (0, "Stable", 3, 3)
    assert [s.subtopology_id for s in app.topology.subtopologies] == ["0", "1"]
    (member,) = app.members
    assert (member.member_id, member.process_id, member.member_epoch) == ("m1", "p1", 3)
    assert {t.subtopology_id: t.partitions for t in member.assignment.active_tasks} == {"0": [0, 1, 2], "1": [0, 1, 2]}
    assert nope.error_code == ErrorCode.GROUP_ID_NOT_FOUND


def test_list_groups_offsets_and_delete_see_the_streams_group(ctx):
    heartbeat(ctx)
    heartbeat(ctx, epoch=2, active={})
    listed = list_groups.API.handle(ctx, ListGroupsRequest[5](states_filter=[], types_filter=["streams"]), 5, CLIENT)
    assert [(g.group_id, g.group_type, g.group_state) for g in listed.groups] == [("app", "streams", "Stable")]
    Topic = OffsetCommitRequest.OffsetCommitRequestTopic

    def commit(epoch: int) -> int:
        request = OffsetCommitRequest[9](
            group_id="app",
            generation_id_or_member_epoch=epoch,
            member_id="m1",
            topics=[
                Topic(
                    name="lines", partitions=[Topic.OffsetCommitRequestPartition(partition_index=0, committed_offset=5)]
                )
            ],
        )
        return offset_commit.API.handle(ctx, request, 9, CLIENT).topics[0].partitions[0].error_code

    assert commit(2) == ErrorCode.STALE_MEMBER_EPOCH
    assert commit(3) == ErrorCode.NONE
    Group = OffsetFetchRequest.OffsetFetchRequestGroup
    fetch = OffsetFetchRequest[9](
        groups=[Group(group_id="app", member_id="m1", member_epoch=3, topics=None)], require_stable=False
    )
    fetched = offset_fetch.API.handle(ctx, fetch, 9, CLIENT)
    assert fetched.groups[0].topics[0].partitions[0].committed_offset == 5
    deleting = delete_groups.API.handle(ctx, DeleteGroupsRequest[2](groups_names=["app"]), 2, CLIENT)
    assert deleting.results[0].error_code == ErrorCode.NON_EMPTY_GROUP
    heartbeat(ctx, epoch=-1)
    deleted = delete_groups.API.handle(ctx, DeleteGroupsRequest[2](groups_names=["app"]), 2, CLIENT)
    assert deleted.results[0].error_code == ErrorCode.NONE


def test_a_restart_keeps_the_group_its_epochs_and_assignment(tmp_path):
    """The streams group records in `__consumer_offsets` (Kafka's StreamsGroup* keys 17-23) bring the
    group back: topology, epochs, members and their tasks; the member heartbeats on at its epoch."""
    settings = load_settings(
        overrides={"storage": {"kind": "filesystem", "data_dir": str(tmp_path)}, "groups": NO_DELAY}
    )
    adapters = default_adapters(settings)
    ctx = bootstrap(settings, adapters)
    ctx.services.catalog.create("lines", 3, 1)
    heartbeat(ctx)
    before = heartbeat(ctx, epoch=2, active={})
    adapters.stop()
    # `trafka dump-log --offsets-decoder` prints them as Kafka's tools do
    parser = argparse.ArgumentParser()
    add_dump_log_parser(parser.add_subparsers())
    records = []
    for segment in sorted((tmp_path / "__consumer_offsets-0").glob("*.log")):
        args = parser.parse_args(["dump-log", str(segment), "--print-data-log", "--offsets-decoder"])
        records += [r for b in dump_segment(str(segment), args)["batches"] for r in b.get("records", [])]
    by_type = {r["key"]["type"]: r for r in records}
    assert {"17", "19", "20", "21", "22", "23"} <= by_type.keys()
    assert (
        by_type["23"]["payload"]["data"]["subtopologies"][1]["state_changelog_topics"][0]["name"]
        == "app-counts-changelog"
    )
    assert by_type["19"]["payload"]["data"]["process_id"] == "p1"

    adapters = default_adapters(settings)
    again = bootstrap(settings, adapters)
    try:
        group = again.services.groups.streams.groups["app"]
        assert (group.group_epoch, group.assignment_epoch) == (3, 3)
        assert group.last_assignment_configs == (("num.standby.replicas", "0"),)  # Kafka's LastAssignmentConfigs
        assert group.topology is not None and [s.subtopology_id for s in group.topology.subtopologies] == ["0", "1"]
        (member,) = group.members.values()
        assert (member.member_id, member.member_epoch, member.process_id) == ("m1", 3, "p1")
        assert {sid: sorted(ps) for sid, ps in member.assigned.active.items()} == tasks(before)
        on = heartbeat(again, epoch=3, active=tasks(before))
        assert (on.error_code, on.member_epoch, on.status) == (ErrorCode.NONE, 3, [])
        listed = list_groups.API.handle(again, ListGroupsRequest[5](states_filter=[], types_filter=[]), 5, CLIENT)
        assert [(g.group_id, g.group_type) for g in listed.groups] == [("app", "streams")]
    finally:
        adapters.stop()


def test_exactly_once_v2_commits_offsets_in_the_transaction_checked_against_the_member_epoch(ctx):
    """Kafka Streams under `exactly_once_v2` commits its offsets with TxnOffsetCommit carrying its streams
    member id and member epoch. Kafka checks them against the streams group (StreamsGroup.
    validateOffsetCommit, transactional); trafka checked them against the classic groups, which know
    no such member (ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID): every transaction of the application aborted."""
    joined = heartbeat(ctx)
    txn = ctx.services.transactions.init_producer_id("app-tid", 60_000, ctx.services.clock_ms())
    pid, epoch = txn.producer_id, txn.producer_epoch
    assert (
        ctx.services.transactions.add_offsets("app-tid", pid, epoch, "app", ctx.services.clock_ms()) is ErrorCode.NONE
    )

    def commit(member_id: str, member_epoch: int) -> int:
        Topic = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
        Partition = Topic.TxnOffsetCommitRequestPartition
        request = TxnOffsetCommitRequest[4](
            transactional_id="app-tid",
            group_id="app",
            producer_id=pid,
            producer_epoch=epoch,
            generation_id=member_epoch,
            member_id=member_id,
            group_instance_id=None,
            topics=[
                Topic(
                    name="lines",
                    partitions=[
                        Partition(
                            partition_index=0, committed_offset=5, committed_leader_epoch=-1, committed_metadata=""
                        )
                    ],
                )
            ],
        )
        return txn_offset_commit_room.API.handle(ctx, request, 4, CLIENT).topics[0].partitions[0].error_code

    assert commit("m1", joined.member_epoch) == ErrorCode.NONE
    assert commit("m1", joined.member_epoch + 1) == ErrorCode.STALE_MEMBER_EPOCH
    assert commit("nobody", joined.member_epoch) == ErrorCode.UNKNOWN_MEMBER_ID
    assert commit("", -1) == ErrorCode.NONE  # a producer outside the group
