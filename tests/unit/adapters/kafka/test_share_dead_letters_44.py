"""KIP-1191's dead-letter queue as Kafka 4.4 writes it (ADR 86, read from the 4.4.0 jars): gated by
`share.version` 2; a copy carries Kafka's context headers only, and the original key and value only with
the group's `errors.deadletterqueue.copy.record.enable`; a missing topic is created only with the
broker's `errors.deadletterqueue.auto.create.topics.enable`; a name starting with `__` is refused."""

from __future__ import annotations

import pytest
from kafka.protocol.admin import UpdateFeaturesRequest
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from trafka.adapters.kafka.apis import update_features
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.adapters.kafka.runtime.share_dead_letters import dead_letter_writer
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.groups.share.configs import alter
from trafka.domain.groups.share.partition import Archived
from trafka.domain.topics import TopicPartition

SOURCE = TopicPartition("jobs", 1)
NOW = 1_700_000_000_000
OPTED_IN = {"errors.deadletterqueue.group.enable": "true"}


def _ctx(**groups):
    settings = load_settings(overrides={"storage": {"kind": "memory"}, "groups": groups})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("jobs", 2)
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
    for i in range(3):
        builder.append(i, timestamp=1000 + i, key=b"k%d" % i, value=b"v%d" % i, headers=[("orig", b"h")])
    assert ctx.services.replicas.produce(SOURCE, bytes(builder.build()), 0).error is ErrorCode.NONE
    return ctx


def _copied(ctx, topic="dlq.jobs", partition=1):
    fetched = ctx.services.replicas.fetch(TopicPartition(topic, partition), 0, 1 << 20, min_one_batch=True)
    records = MemoryRecords(fetched.records or b"")
    out = []
    while records.has_next():
        out += list(records.next_batch())
    return out


def _writer(ctx, group_configs, auto_create=False):
    def config(group_id, name):
        return group_configs.get(name, {"errors.deadletterqueue.copy.record.enable": "false"}.get(name, ""))

    return dead_letter_writer(ctx.services.catalog, ctx.services.replicas, config, lambda: NOW, "dlq.", auto_create)


def test_a_copy_carries_kafkas_context_headers_only_and_no_record_by_default():
    ctx = _ctx()
    ctx.services.catalog.create("dlq.jobs", 2, configs=OPTED_IN)
    write = _writer(ctx, {"errors.deadletterqueue.topic.name": "dlq.jobs"})
    assert write([("g", SOURCE, Archived(0, 0, 1, "reject")), ("g", SOURCE, Archived(2, 2, 5, "limit"))]) == 2
    rejected, limited = _copied(ctx)
    assert (rejected.key, rejected.value, rejected.timestamp) == (None, None, NOW)
    assert [(k, v.decode()) for k, v in rejected.headers] == [
        ("__dlq.errors.topic", "jobs"),
        ("__dlq.errors.partition", "1"),
        ("__dlq.errors.offset", "0"),
        ("__dlq.errors.group", "g"),
        ("__dlq.errors.delivery.count", "1"),
        ("__dlq.errors.message", "Offset rejected by client."),
    ]
    assert dict(limited.headers)["__dlq.errors.message"] == b"Offset delivery count exceeded the threshold."


def test_copy_record_enable_copies_the_key_and_value_but_not_the_headers():
    ctx = _ctx()
    ctx.services.catalog.create("dlq.jobs", 2, configs=OPTED_IN)
    configs = {"errors.deadletterqueue.topic.name": "dlq.jobs", "errors.deadletterqueue.copy.record.enable": "true"}
    assert _writer(ctx, configs)([("g", SOURCE, Archived(1, 2, 1, "reject"))]) == 2
    copies = _copied(ctx)
    assert [(c.key, c.value) for c in copies] == [(b"k1", b"v1"), (b"k2", b"v2")]
    assert all("orig" not in dict(c.headers) for c in copies)


def test_a_missing_topic_is_created_only_with_auto_create():
    ctx = _ctx()
    configs = {"errors.deadletterqueue.topic.name": "dlq.jobs"}
    assert _writer(ctx, configs)([("g", SOURCE, Archived(0, 0, 1, "reject"))]) == 0
    assert ctx.services.catalog.get("dlq.jobs") is None
    assert _writer(ctx, configs, auto_create=True)([("g", SOURCE, Archived(0, 0, 1, "reject"))]) == 1
    created = ctx.services.catalog.get("dlq.jobs")
    assert created.configs["errors.deadletterqueue.group.enable"] == "true"
    assert created.configs["message.timestamp.type"] == "CreateTime"
    assert created.partition_count == ctx.services.policy.num_partitions


def test_the_broker_setting_names_kafkas_key():
    settings = load_settings(overrides={"groups": {"share_dead_letter_auto_create_topics_enable": True}})
    assert settings.groups.share_dead_letter_auto_create_topics_enable is True


def test_a_group_may_not_name_an_internal_looking_topic_nor_a_bad_boolean():
    with pytest.raises(KafkaError) as refused:
        alter({}, {"errors.deadletterqueue.topic.name": (0, "__dlq")})
    assert refused.value.message == "errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'"
    with pytest.raises(KafkaError):
        alter({}, {"errors.deadletterqueue.copy.record.enable": (0, "yes")})
    assert alter({}, {"errors.deadletterqueue.copy.record.enable": (0, "TRUE")})


def test_copies_wait_for_share_version_2():
    """As Kafka 4.4's SharePartitionManager: no copy while share.version is below 2 (a new 4.2-format
    log dir finalizes 1); `kafka-features upgrade --feature share.version=2` turns them on."""
    ctx = _ctx()
    assert ctx.services.share.dead_letters_enabled() is False
    update = UpdateFeaturesRequest.FeatureUpdateKey(feature="share.version", max_version_level=2, upgrade_type=1)
    request = UpdateFeaturesRequest[1](feature_updates=[update], validate_only=False)
    response = update_features.handle_update_features(
        ctx.view(update_features.Uses), request, 1, ClientInfo("t", "127.0.0.1")
    )
    assert response.error_code == 0, response.error_message
    assert ctx.services.share.dead_letters_enabled() is True


def test_the_writer_tells_the_partitions_it_wrote_once_per_call():
    ctx = _ctx()
    ctx.services.catalog.create("dlq.jobs", 2, configs=OPTED_IN)
    told = []

    def config(group_id, name):
        return {"errors.deadletterqueue.topic.name": "dlq.jobs"}.get(name, "false")

    write = dead_letter_writer(
        ctx.services.catalog, ctx.services.replicas, config, lambda: NOW, "dlq.", appended=told.append
    )
    archived = [("g", SOURCE, Archived(0, 0, 1, "reject")), ("g", SOURCE, Archived(2, 2, 5, "limit"))]
    assert write(archived) == 2
    assert told == [[TopicPartition("dlq.jobs", 1)]]  # two copies to one partition: told once
    assert write([("g", SOURCE, Archived(0, 0, 1, "gap"))]) == 0  # nothing copied, nothing told
    assert told == [[TopicPartition("dlq.jobs", 1)]]


def test_a_fetch_parked_on_the_dead_letter_topic_wakes_when_a_copy_is_written():
    """As a Produce's append: the wired writer notifies the purgatory (a Fetch parked there would
    otherwise wait its max_wait_ms) and drops the append's bytes kept for parked Fetches."""
    ctx = _ctx()
    ctx.services.catalog.create("dlq.jobs", 2, configs=OPTED_IN)
    share = ctx.services.share
    share.groups.alter_configs("g", {"errors.deadletterqueue.topic.name": (0, "dlq.jobs")}, False)
    parked = ctx.services.appends.waiter([TopicPartition("dlq.jobs", 1)])
    elsewhere = ctx.services.appends.waiter([TopicPartition("dlq.jobs", 0)])
    assert share.writes.dead_letters([("g", SOURCE, Archived(0, 0, 1, "reject"))]) == 1
    assert parked.is_set()
    assert not elsewhere.is_set()
    assert ctx.services.replicas._appended == {}
