"""Broker-side schema validation on a broker installed without the `registry` extra (issue 39's risk):
a topic config that turns it on is refused at create and alter time with what to install, and a produce
to a topic configured for it earlier (by a full install) answers INVALID_RECORD with the same advice,
instead of failing inside the produce path."""

from __future__ import annotations

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from trafka.app import extras
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.catalog import AlterOp
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.topics import TopicPartition

VALIDATED = {"confluent.value.schema.validation": "true"}


def _without_registry(monkeypatch):
    real = extras.missing
    monkeypatch.setattr(extras, "missing", lambda extra: ["fastavro"] if extra == "registry" else real(extra))


def _ctx():
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    return bootstrap(settings, default_adapters(settings))


def _batch() -> bytes:
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
    builder.append(0, timestamp=0, key=None, value=b"\x00\x00\x00\x00\x01payload", headers=[])
    return bytes(builder.build())


def test_a_topic_config_turning_validation_on_is_refused_with_what_to_install(monkeypatch):
    _without_registry(monkeypatch)
    ctx = _ctx()
    with pytest.raises(KafkaError) as refused:
        ctx.services.catalog.create("orders", 1, configs=VALIDATED)
    assert refused.value.code is ErrorCode.INVALID_CONFIG
    assert "pip install 'trafka[registry]'" in refused.value.message
    ctx.services.catalog.create("orders", 1)
    with pytest.raises(KafkaError) as refused:
        ctx.services.catalog.alter_configs("orders", {"confluent.value.schema.validation": (AlterOp.SET, "true")})
    assert refused.value.code is ErrorCode.INVALID_CONFIG
    ctx.services.catalog.alter_configs("orders", {"retention.ms": (AlterOp.SET, "60000")})  # other configs still alter


def test_a_produce_to_a_validated_topic_answers_invalid_record(monkeypatch):
    ctx = _ctx()  # installed with the registry: the topic is configured for validation
    ctx.services.catalog.create("orders", 1, configs=VALIDATED)
    _without_registry(monkeypatch)  # served by a broker without it, before the registry was first built
    result = ctx.services.replicas.produce(TopicPartition("orders", 0), _batch(), 0)
    assert result.error is ErrorCode.INVALID_RECORD
    assert "pip install 'trafka[registry]'" in result.message
    assert ctx.services.replicas.produce(TopicPartition("orders", 0), _batch(), 0).error is ErrorCode.INVALID_RECORD
