"""Kafka 4.4's surface of streams groups on a memory-store broker: StreamsGroupTopologyDescriptionUpdate
(key 93, KIP-1331), StreamsGroupHeartbeat and StreamsGroupDescribe v1, the members' task offsets in
describe, and the `streams.*` GROUP configs through IncrementalAlterConfigs and DescribeConfigs."""

from __future__ import annotations

import pytest

from tests.unit.adapters.kafka.test_streams_group_rooms import CLIENT, Req, word_count
from trafka.adapters.kafka.apis import (
    describe_configs,
    incremental_alter_configs,
    streams_group_describe,
    streams_group_heartbeat,
    streams_group_topology_description_update,
)
from trafka.adapters.kafka.apis.streams_group_topology_description_update import NO_PLUGIN
from trafka.adapters.kafka.releases import api_versions
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.schema_codec.messages import (
    DescribeConfigsRequest,
    IncrementalAlterConfigsRequest,
    StreamsGroupDescribeRequest,
    StreamsGroupHeartbeatResponse,
    StreamsGroupTopologyDescriptionUpdateRequest,
)

PLUGIN = "org.apache.kafka.server.streams.InMemoryTopologyDescriptionPlugin"
Update = StreamsGroupTopologyDescriptionUpdateRequest
Desc = Update.TopologyDescription


def broker(**groups):
    overrides = {"storage": {"kind": "memory"}, "groups": {"streams_initial_rebalance_delay_ms": 0, **groups}}
    settings = load_settings(overrides=overrides)
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("lines", 3, 1)
    return ctx


def heartbeat(ctx, member_id="m1", epoch=0, version=1, **fields):
    joining = epoch == 0
    request = Req(
        group_id="app",
        member_id=member_id,
        member_epoch=epoch,
        endpoint_information_epoch=0,
        rebalance_timeout_ms=30_000 if joining else -1,
        topology=word_count() if joining else None,
        process_id="p1" if joining else None,
        active_tasks=[] if joining else None,
        standby_tasks=[] if joining else None,
        warmup_tasks=[] if joining else None,
        **fields,
    )
    return streams_group_heartbeat.API.handle(ctx, request, version, CLIENT)


def description() -> Update.TopologyDescription:
    Sub, Node = Desc.TopologyDescriptionSubtopology, Desc.TopologyDescriptionSubtopology.TopologyDescriptionNode
    Store = Desc.TopologyDescriptionGlobalStore
    return Desc(
        subtopologies=[
            Sub(
                subtopology_id="0",
                nodes=[
                    Node(name="KSTREAM-SOURCE-0000000000", node_type=1, source_topics=["lines"], sink_topic=None,
                         stores=[], successors=["KSTREAM-SINK-0000000001"]),
                    Node(name="KSTREAM-SINK-0000000001", node_type=3, source_topics=[],
                         sink_topic="app-counts-repartition", stores=[], successors=[]),
                ],
            )
        ],
        global_stores=[
            Store(
                source=Store.TopologyDescriptionNode(name="src", node_type=1, source_topics=["g"], sink_topic=None,
                                                     stores=[], successors=["proc"]),
                processor=Store.TopologyDescriptionNode(name="proc", node_type=2, source_topics=[], sink_topic=None,
                                                        stores=["gstore"], successors=[]),
            )
        ],
    )  # fmt: skip


def push(ctx, member_id="m1", epoch=1, group_id="app", what=None):
    request = Update(group_id=group_id, member_id=member_id, topology_epoch=epoch, topology_description=what)
    if what is None and member_id != "no-description":
        request.topology_description = description()
    return streams_group_topology_description_update.API.handle(ctx, request, 0, CLIENT)


def describe(ctx, version=1, include=True):
    request = StreamsGroupDescribeRequest(
        group_ids=["app"], include_authorized_operations=False, include_topology_description=include
    )
    (group,) = streams_group_describe.API.handle(ctx, request, version, CLIENT).groups
    return group


def test_key_93_is_served_unpinned_and_to_4_4_only():
    assert api_versions("4.4")[93] == (0, 0)
    assert 93 not in api_versions("4.3") and 93 not in api_versions("4.2")
    assert api_versions("4.4")[88] == (0, 1) and api_versions("4.2")[88] == (0, 0)
    assert streams_group_topology_description_update.API.versions == (0, 0)
    assert streams_group_heartbeat.API.versions == (0, 1) and streams_group_describe.API.versions == (0, 1)


def test_without_a_plugin_the_push_is_refused_and_never_asked_for():
    ctx = broker()
    assert not heartbeat(ctx).topology_description_required
    answer = push(ctx)
    assert (answer.error_code, answer.error_message) == (ErrorCode.UNSUPPORTED_VERSION, NO_PLUGIN)


def test_with_the_in_memory_plugin_a_member_is_asked_pushes_and_describe_returns_it():
    ctx = broker(streams_topology_description_plugin_class=PLUGIN)
    first = heartbeat(ctx)
    assert first.topology_description_required
    assert describe(ctx).topology_description_status == 1  # NOT_STORED
    assert (push(ctx).error_code, push(ctx).error_message) == (ErrorCode.NONE, None)
    assert not heartbeat(ctx, epoch=first.member_epoch).topology_description_required
    group = describe(ctx)
    assert (group.topology_description_status, group.assignor_name) == (3, "sticky")  # AVAILABLE
    wire = group.topology_description
    assert [s.subtopology_id for s in wire.subtopologies] == ["0"]
    source, sink = wire.subtopologies[0].nodes
    assert (source.name, source.node_type, source.source_topics, source.successors) == (
        "KSTREAM-SOURCE-0000000000",
        1,
        ["lines"],
        ["KSTREAM-SINK-0000000001"],
    )
    assert (sink.sink_topic, sink.node_type) == ("app-counts-repartition", 3)
    (store,) = wire.global_stores
    assert (store.source.name, store.processor.stores) == ("src", ["gstore"])
    not_asked = describe(ctx, include=False)
    assert (not_asked.topology_description_status, not_asked.topology_description) == (0, None)
    v0 = describe(ctx, version=0)
    assert v0.error_code == ErrorCode.NONE  # v0 has neither field
    encoded = streams_group_describe.API.response(version=0, throttle_time_ms=0, groups=[v0]).encode()
    assert encoded


def test_a_push_from_no_member_or_for_no_group_is_refused():
    ctx = broker(streams_topology_description_plugin_class=PLUGIN)
    assert push(ctx).error_code == ErrorCode.GROUP_ID_NOT_FOUND
    heartbeat(ctx)
    assert push(ctx, member_id="ghost").error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert push(ctx, member_id="").error_code == ErrorCode.INVALID_REQUEST
    assert push(ctx, member_id="no-description").error_code == ErrorCode.INVALID_REQUEST


def test_the_recovery_lag_and_task_offset_interval_are_answered_as_each_release_does():
    ctx = broker()  # Kafka 4.4: the lag in v1's int64 field, v0's legacy field never set
    for version in (0, 1):
        answer = heartbeat(ctx, member_id=f"v{version}", version=version)
        decoded = StreamsGroupHeartbeatResponse.decode(answer.encode(version), version)
        assert decoded.task_offset_interval_ms == 60_000
        if version:
            assert decoded.acceptable_recovery_lag == 10_000
        else:
            assert decoded.acceptable_recovery_lag_legacy == 0
    pinned = load_settings(overrides={"storage": {"kind": "memory"}, "broker": {"kafka_version": "4.2"}})
    ctx = bootstrap(pinned, default_adapters(pinned))
    answer = heartbeat(ctx, version=0)  # Kafka 4.2 sets neither
    assert (answer.acceptable_recovery_lag_legacy, answer.task_offset_interval_ms) == (0, 0)


def test_describe_shows_the_task_offsets_members_report():
    ctx = broker()
    T = Req.TaskOffset
    first = heartbeat(ctx)
    heartbeat(
        ctx,
        epoch=first.member_epoch,
        task_offsets=[T(subtopology_id="0", partition=1, offset=40)],
        task_end_offsets=[T(subtopology_id="0", partition=1, offset=100)],
    )
    (member,) = describe(ctx).members
    assert [(t.subtopology_id, t.partition, t.offset) for t in member.task_offsets] == [("0", 1, 40)]
    assert [(t.subtopology_id, t.partition, t.offset) for t in member.task_end_offsets] == [("0", 1, 100)]
    twice = [T(subtopology_id="0", partition=1, offset=1), T(subtopology_id="0", partition=1, offset=2)]
    refused = heartbeat(ctx, epoch=first.member_epoch, task_offsets=twice)
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.INVALID_REQUEST,
        "Task offsets contain a duplicate entry for subtopology 0 and partition 1.",
    )


def test_a_broker_pinned_to_4_2_refuses_task_offsets_as_kafka_4_2():
    settings = load_settings(overrides={"storage": {"kind": "memory"}, "broker": {"kafka_version": "4.2"}})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("lines", 3, 1)
    assert ctx.registry.get(93) is None and ctx.registry.get(88).max_version == 0
    first = heartbeat(ctx, version=0)
    T = Req.TaskOffset
    offsets = [T(subtopology_id="0", partition=1, offset=40)]
    for field, message in (
        ("task_offsets", "TaskOffsets are not supported yet."),
        ("task_end_offsets", "TaskEndOffsets are not supported yet."),
    ):
        refused = heartbeat(ctx, epoch=first.member_epoch, version=0, **{field: offsets})
        assert (refused.error_code, refused.error_message, refused.member_id) == (
            ErrorCode.INVALID_REQUEST,
            message,
            "",
        )
    (member,) = describe(ctx, version=0).members
    assert member.task_offsets == []


def test_static_members_and_source_regexes_are_refused_as_kafka_refuses_them():
    ctx = broker()
    refused = heartbeat(ctx, instance_id="i-1")
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.INVALID_REQUEST,
        "Static membership is not yet supported.",
    )


def alter(ctx, **configs):
    R = IncrementalAlterConfigsRequest.AlterConfigsResource
    resource = R(
        resource_type=32,
        resource_name="app",
        configs=[R.AlterableConfig(name=k.replace("_", "."), config_operation=0, value=v) for k, v in configs.items()],
    )
    request = IncrementalAlterConfigsRequest(resources=[resource], validate_only=False)
    (answer,) = incremental_alter_configs.API.handle(ctx, request, 1, CLIENT).responses
    return answer


@pytest.mark.parametrize(
    ("configs", "message"),
    [
        ({"streams_session_timeout_ms": "1000"}, "streams.session.timeout.ms must be greater than or equal to group.streams.min.session.timeout.ms"),
        ({"streams_num_standby_replicas": "5"}, "streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas"),
    ],
)  # fmt: skip
def test_streams_group_configs_out_of_the_brokers_bounds_are_refused(configs, message):
    answer = alter(broker(), **configs)
    assert (answer.error_code, answer.error_message) == (ErrorCode.INVALID_CONFIG, message)


def test_streams_group_configs_are_set_described_and_applied():
    ctx = broker()
    assert alter(ctx, streams_heartbeat_interval_ms="7000").error_code == ErrorCode.NONE
    assert heartbeat(ctx).heartbeat_interval_ms == 7000
    R = DescribeConfigsRequest.DescribeConfigsResource
    request = DescribeConfigsRequest(
        resources=[R(resource_type=32, resource_name="app", configuration_keys=None)],
        include_synonyms=False,
        include_documentation=False,
    )
    (result,) = describe_configs.API.handle(ctx, request, 4, CLIENT).results
    configs = {c.name: c.value for c in result.configs}
    assert configs["streams.heartbeat.interval.ms"] == "7000"
    assert configs["streams.session.timeout.ms"] == "45000"
    assert configs["streams.num.standby.replicas"] == "0"
    assert configs["streams.initial.rebalance.delay.ms"] == "0"
