"""Share groups as Kafka 4.2 has them where librdkafka's suite found trafka differing (issue 44):
the group config `share.record.lock.duration.ms` within the broker's min and max (0173), on a
memory-store broker."""

from __future__ import annotations

import pytest

from tests.unit.adapters.kafka.test_share_group_rooms import fetch, heartbeat, produce
from trafka.app.config.kafka_keys import KafkaConfigError, map_kafka_configs
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.topics import TopicPartition

SET = 0
LOCK = "share.record.lock.duration.ms"


def broker(**groups):
    settings = load_settings(overrides={"storage": {"kind": "memory"}, "groups": groups})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.catalog.create("t", 1, 1)
    ctx.share.groups.configs["g"] = {"share.auto.offset.reset": "earliest"}
    return ctx


def test_a_groups_record_lock_duration_sets_its_locks_and_the_answers_timeout():
    ctx = broker()
    ctx.share.groups.alter_configs("g", {LOCK: (SET, "20000")}, False)
    heartbeat(ctx)
    produce(ctx, 2)
    now = ctx.share.clock_ms()
    answer = fetch(ctx)
    assert answer.acquisition_lock_timeout_ms == 20000
    deadline = ctx.share.groups.partitions[("g", TopicPartition("t", 0))].state_of(0).deadline
    assert now + 20000 <= deadline <= ctx.share.clock_ms() + 20000
    assert (LOCK, "20000", False) in ctx.share.groups.describe_configs("g")
    assert (LOCK, "30000", True) in ctx.share.groups.describe_configs("other")  # the broker's default


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("14999", f"{LOCK} must be greater than or equal to group.share.min.record.lock.duration.ms"),
        ("60001", f"{LOCK} must be less than or equal to group.share.max.record.lock.duration.ms"),
        ("soon", f"Invalid value soon for configuration {LOCK}: Not a number of type INT"),
    ],
)
def test_a_lock_duration_outside_the_brokers_bounds_is_refused_as_kafka_refuses_it(value, message):
    ctx = broker()
    with pytest.raises(KafkaError) as refused:
        ctx.share.groups.alter_configs("g", {LOCK: (SET, value)}, False)
    assert (refused.value.code, refused.value.message) == (ErrorCode.INVALID_CONFIG, message)


def test_librdkafkas_ci_lowers_the_minimum_to_have_three_second_locks():
    settings = map_kafka_configs({"group.share.min.record.lock.duration.ms": "1000"})
    assert settings.overrides["groups"]["share_min_record_lock_duration_ms"] == 1000
    ctx = broker(share_min_record_lock_duration_ms=1000)
    ctx.share.groups.alter_configs("g", {LOCK: (SET, "3000")}, False)
    heartbeat(ctx)
    produce(ctx, 1)
    assert fetch(ctx).acquisition_lock_timeout_ms == 3000
    with pytest.raises(KafkaConfigError, match="group.share.min.record.lock.duration.ms"):
        map_kafka_configs({"group.share.min.record.lock.duration.ms": "999"})  # Kafka's range: 1000-30000
