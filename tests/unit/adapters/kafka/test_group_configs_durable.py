"""The GROUP config resource's overrides are recorded in the GroupConfigStore and applied again when a
broker starts on the same store (two bootstraps sharing one memory store stand for a restart; the
integration test restarts a real broker on its data dir). As Kafka, they belong to the group id:
DeleteGroups leaves them."""

from __future__ import annotations

import logging

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trafka.adapters.kafka.apis import delete_groups, describe_configs, incremental_alter_configs
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.adapters.memory import MemoryGroupConfigStore
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.schema_codec.messages import DeleteGroupsRequest, DescribeConfigsRequest, IncrementalAlterConfigsRequest

CLIENT = ClientInfo("client-1", "127.0.0.1")
Resource = IncrementalAlterConfigsRequest.AlterConfigsResource
Config = Resource.AlterableConfig
SET, DELETE = 0, 1


def start(store, **groups):
    settings = load_settings(overrides={"storage": {"kind": "memory"}, "groups": groups})
    return bootstrap(settings, attrs.evolve(default_adapters(settings), group_config_store=store))


def alter(ctx, group, *changes, validate_only=False):
    configs = [Config(name=name, config_operation=op, value=value) for name, op, value in changes]
    request = IncrementalAlterConfigsRequest[1](
        resources=[Resource(resource_type=32, resource_name=group, configs=configs)], validate_only=validate_only
    )
    (result,) = incremental_alter_configs.API.handle(ctx, request, 1, CLIENT).responses
    return result.error_code


def describe(ctx, group):
    Describe = DescribeConfigsRequest.DescribeConfigsResource
    request = DescribeConfigsRequest[4](
        resources=[Describe(resource_type=32, resource_name=group, configuration_keys=None)],
        include_synonyms=False,
        include_documentation=False,
    )
    (result,) = describe_configs.API.handle(ctx, request, 4, CLIENT).results
    return {c.name: c.value for c in result.configs if c.config_source == 8}  # GROUP_CONFIG: the overrides


def test_overrides_survive_a_restart_and_the_coordinators_use_them():
    store = MemoryGroupConfigStore()
    ctx = start(store)
    changes = [
        ("consumer.session.timeout.ms", SET, "50000"),
        ("consumer.heartbeat.interval.ms", SET, "7000"),
        ("share.auto.offset.reset", SET, "earliest"),
        ("share.session.timeout.ms", SET, "50000"),
    ]
    assert alter(ctx, "g", *changes) == ErrorCode.NONE
    assert store.load() == {"g": {name: value for name, _, value in changes}}

    again = start(store)
    assert describe(again, "g") == {name: value for name, _, value in changes}
    consumer = again.services.groups.consumer
    assert consumer is not None and again.services.share is not None
    assert consumer.session_timeout_ms("g") == 50000
    assert consumer.heartbeat_interval_ms("g") == 7000
    assert again.services.share.groups.config("g", "share.auto.offset.reset") == "earliest"
    assert again.services.share.groups.coordinator.group_configs["g"]["share.session.timeout.ms"] == 50000


def test_a_removed_override_stays_removed_and_validate_only_records_nothing():
    store = MemoryGroupConfigStore()
    ctx = start(store)
    assert (
        alter(
            ctx, "g", ("consumer.heartbeat.interval.ms", SET, "7000"), ("share.isolation.level", SET, "read_committed")
        )
        == 0
    )
    assert alter(ctx, "g", ("consumer.heartbeat.interval.ms", DELETE, None)) == ErrorCode.NONE
    assert alter(ctx, "g", ("share.isolation.level", SET, "read_uncommitted"), validate_only=True) == ErrorCode.NONE
    assert alter(ctx, "g", ("consumer.session.timeout.ms", SET, "1")) == ErrorCode.INVALID_CONFIG  # below the min
    assert store.load() == {"g": {"share.isolation.level": "read_committed"}}
    assert describe(start(store), "g") == {"share.isolation.level": "read_committed"}
    assert alter(ctx, "g", ("share.isolation.level", DELETE, None)) == ErrorCode.NONE
    assert store.load() == {}
    assert describe(start(store), "g") == {}


def test_deleting_the_group_leaves_its_configs_as_kafka():
    store = MemoryGroupConfigStore()
    ctx = start(store)
    assert ctx.services.share is not None
    ctx.services.share.groups.coordinator.create_empty("s")  # an empty share group
    assert alter(ctx, "s", ("share.auto.offset.reset", SET, "earliest")) == ErrorCode.NONE
    assert alter(ctx, "s", ("share.heartbeat.interval.ms", SET, "7000")) == ErrorCode.NONE
    (result,) = delete_groups.API.handle(ctx, DeleteGroupsRequest[2](groups_names=["s"]), 2, CLIENT).results
    assert result.error_code == ErrorCode.NONE
    assert "s" not in ctx.services.share.groups.coordinator.groups
    kept = {"share.auto.offset.reset": "earliest", "share.heartbeat.interval.ms": "7000"}
    assert describe(ctx, "s") == kept
    assert ctx.services.share.groups.config("s", "share.auto.offset.reset") == "earliest"
    assert ctx.services.share.groups.coordinator.heartbeat_interval_ms("s") == 7000  # what a new member is given
    assert describe(start(store), "s") == kept


def test_a_recorded_value_the_broker_now_refuses_is_logged_and_the_rest_applied(caplog):
    store = MemoryGroupConfigStore()
    store.group_configs_changed(
        "g",
        {
            "consumer.session.timeout.ms": "50000",
            "consumer.heartbeat.interval.ms": "7000",
            "share.isolation.level": "read_committed",
        },
    )
    with caplog.at_level(logging.WARNING):
        ctx = start(store, consumer_max_heartbeat_interval_ms=6000)  # the broker's bound moved below 7000
    assert describe(ctx, "g") == {"consumer.session.timeout.ms": "50000", "share.isolation.level": "read_committed"}
    assert "consumer.heartbeat.interval.ms=7000 not applied" in caplog.text
    assert store.load()["g"]["consumer.heartbeat.interval.ms"] == "7000"  # kept: the bound may move back


def test_list_config_resources_lists_the_groups_with_configs_existing_or_not():
    from trafka.adapters.kafka.apis import list_config_resources
    from trafka.schema_codec.messages import ListConfigResourcesRequest

    store = MemoryGroupConfigStore()
    ctx = start(store)
    assert alter(ctx, "later", ("share.auto.offset.reset", SET, "earliest")) == ErrorCode.NONE  # no such group yet
    assert alter(ctx, "gone", ("share.isolation.level", SET, "read_committed")) == ErrorCode.NONE
    assert alter(ctx, "gone", ("share.isolation.level", DELETE, None)) == ErrorCode.NONE

    def listed(ctx):
        request = ListConfigResourcesRequest[1](resource_types=[32])
        response = list_config_resources.API.handle(ctx, request, 1, CLIENT)
        return [(r.resource_name, r.resource_type) for r in response.config_resources]

    assert listed(ctx) == [("later", 32)]
    assert listed(start(store)) == [("later", 32)]


def test_the_default_group_resource_is_refused_and_nothing_recorded():
    store = MemoryGroupConfigStore()
    ctx = start(store)
    assert alter(ctx, "", ("share.auto.offset.reset", SET, "earliest")) == ErrorCode.INVALID_REQUEST
    assert store.load() == {} and ctx.services.share.groups.config("", "share.auto.offset.reset") == "latest"


def test_a_consumer_group_loaded_at_start_gets_its_recorded_session_timeout():
    from trafka.adapters.kafka.apis import consumer_group_heartbeat
    from trafka.adapters.memory import MemoryOffsetStore
    from trafka.schema_codec.messages import ConsumerGroupHeartbeatRequest

    store, offsets = MemoryGroupConfigStore(), MemoryOffsetStore()

    def boot():
        groups = {"consumer_max_heartbeat_interval_ms": 55000}
        settings = load_settings(overrides={"storage": {"kind": "memory"}, "groups": groups})
        adapters = attrs.evolve(default_adapters(settings), group_config_store=store, offset_store=offsets)
        return bootstrap(settings, adapters)

    ctx = boot()
    ctx.services.catalog.create("t", 1, 1)
    # heartbeat 50 s, session 60 s: valid together only (each alone clashes with the other's default)
    changes = [("consumer.session.timeout.ms", SET, "60000"), ("consumer.heartbeat.interval.ms", SET, "50000")]
    assert alter(ctx, "g", *changes) == ErrorCode.NONE
    request = ConsumerGroupHeartbeatRequest[1](
        group_id="g",
        member_id="m1",
        member_epoch=0,
        rebalance_timeout_ms=30_000,
        subscribed_topic_names=["t"],
        topic_partitions=[],
    )
    assert consumer_group_heartbeat.API.handle(ctx, request, 1, CLIENT).error_code == ErrorCode.NONE

    again = boot()
    member = again.services.groups.consumer.groups["g"].members["m1"]
    assert member.session_deadline_ms - again.services.clock_ms() > 50_000  # 60 s from the load, not the default 45 s
    assert again.services.groups.consumer.heartbeat_interval_ms("g") == 50000


def test_the_legacy_alter_configs_replaces_a_groups_overrides():
    from trafka.adapters.kafka.apis import alter_configs
    from trafka.schema_codec.messages import AlterConfigsRequest

    store = MemoryGroupConfigStore()
    ctx = start(store)
    assert (
        alter(ctx, "g", ("share.isolation.level", SET, "read_committed"), ("consumer.session.timeout.ms", SET, "50000"))
        == 0
    )
    Legacy = AlterConfigsRequest.AlterConfigsResource

    def replace(*configs, validate_only=False):
        resource = Legacy(
            resource_type=32,
            resource_name="g",
            configs=[Legacy.AlterableConfig(name=n, value=v) for n, v in configs],
        )
        request = AlterConfigsRequest[2](resources=[resource], validate_only=validate_only)
        (result,) = alter_configs.API.handle(ctx, request, 2, CLIENT).responses
        return result.error_code

    assert replace(("share.auto.offset.reset", "earliest"), validate_only=True) == ErrorCode.NONE
    assert describe(ctx, "g") == {"share.isolation.level": "read_committed", "consumer.session.timeout.ms": "50000"}
    assert (
        replace(("share.auto.offset.reset", "earliest"), ("share.auto.offset.reset", "latest")) == 42
    )  # INVALID_REQUEST
    assert replace(("share.auto.offset.reset", "sometime")) == ErrorCode.INVALID_CONFIG
    assert describe(ctx, "g") == {"share.isolation.level": "read_committed", "consumer.session.timeout.ms": "50000"}
    assert replace(("share.auto.offset.reset", "earliest")) == ErrorCode.NONE
    assert describe(ctx, "g") == {"share.auto.offset.reset": "earliest"}
    assert store.load() == {"g": {"share.auto.offset.reset": "earliest"}}
    assert replace() == ErrorCode.NONE
    assert store.load() == {} and describe(start(store), "g") == {}


def test_a_change_is_recorded_before_it_is_applied_and_as_it_is_served():
    class FailingStore(MemoryGroupConfigStore):
        fail = False

        def group_configs_changed(self, group_id, changes):
            if self.fail:
                raise OSError("disk full")
            super().group_configs_changed(group_id, changes)

    store = FailingStore()
    ctx = start(store)
    assert alter(ctx, "g", ("consumer.session.timeout.ms", SET, "050000")) == ErrorCode.NONE
    assert store.load() == {"g": {"consumer.session.timeout.ms": "50000"}}  # as DescribeConfigs serves it
    store.fail = True
    with pytest.raises(OSError):
        alter(ctx, "g", ("share.auto.offset.reset", SET, "earliest"))
    assert ctx.services.share.groups.config("g", "share.auto.offset.reset") == "latest"  # not applied: not durable


_VALUES = {
    "consumer.session.timeout.ms": ["45000", "50000", "060000", "1", "x"],
    "consumer.heartbeat.interval.ms": ["5000", "7000", "15000", "50000"],
    "share.auto.offset.reset": ["earliest", "latest", "by_duration:PT1H", "sometime"],
    "share.isolation.level": ["read_committed", "read_uncommitted", "dirty"],
    "share.session.timeout.ms": ["20000", "45000", "-3"],
}
_CHANGE = st.sampled_from(sorted(_VALUES)).flatmap(
    lambda name: st.one_of(
        st.sampled_from(_VALUES[name]).map(lambda v: (name, SET, v)),
        st.just((name, DELETE, None)),
    )
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["g", "h"]),
            st.lists(_CHANGE, min_size=1, max_size=3, unique_by=lambda c: c[0]),
            st.booleans(),
        ),
        max_size=8,
    )
)
def test_any_sequence_of_alterations_describes_the_same_after_a_restart(steps):
    store = MemoryGroupConfigStore()
    ctx = start(store)
    for group, changes, validate_only in steps:
        alter(ctx, group, *changes, validate_only=validate_only)
    again = start(store)
    for group in ("g", "h"):
        assert describe(again, group) == describe(ctx, group)
        assert again.services.groups.consumer.session_timeout_ms(
            group
        ) == ctx.services.groups.consumer.session_timeout_ms(group)
        assert again.services.share.groups.config(group, "share.auto.offset.reset") == ctx.services.share.groups.config(
            group, "share.auto.offset.reset"
        )
