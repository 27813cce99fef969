"""DescribeClientQuotas and AlterClientQuotas through their handlers and refusals on a memory-store
broker: entities with default names as null, validate_only, Kafka's errors for bad filters and keys."""

from __future__ import annotations

import pytest

from trafka.adapters.kafka.apis import client_quotas
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.schema_codec.messages import AlterClientQuotasRequest, DescribeClientQuotasRequest

CLIENT = ClientInfo("test", "127.0.0.1")
Entry = AlterClientQuotasRequest.EntryData


@pytest.fixture
def ctx():
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    return bootstrap(settings, default_adapters(settings))


def _alter(ctx, entries, validate_only=False, version=1):
    request = AlterClientQuotasRequest[version](
        entries=[
            Entry(
                entity=[Entry.EntityData(entity_type=t, entity_name=n) for t, n in entity],
                ops=[Entry.OpData(key=k, value=0.0 if v is None else v, remove=v is None) for k, v in ops],
            )
            for entity, ops in entries
        ],
        validate_only=validate_only,
    )
    response = client_quotas.ALTER_CLIENT_QUOTAS.handle(ctx, request, version, CLIENT)
    return [
        ([(e.entity_type, e.entity_name) for e in r.entity], r.error_code, r.error_message) for r in response.entries
    ]


def _describe(ctx, components=(), strict=False, version=1):
    Component = DescribeClientQuotasRequest.ComponentData
    request = DescribeClientQuotasRequest[version](
        components=[Component(entity_type=t, match_type=m, match=n) for t, m, n in components], strict=strict
    )
    return client_quotas.DESCRIBE_CLIENT_QUOTAS.handle(ctx, request, version, CLIENT)


def _entries(response):
    found = [
        (tuple((e.entity_type, e.entity_name) for e in entry.entity), tuple((v.key, v.value) for v in entry.values))
        for entry in response.entries
    ]
    return sorted(found, key=repr)  # names may be None: sorted by repr


@pytest.mark.parametrize("version", [0, 1])
def test_altered_quotas_are_described_with_defaults_as_null(ctx, version):
    assert _alter(
        ctx,
        [
            ([("user", "alice"), ("client-id", None)], [("producer_byte_rate", 1024.0)]),
            ([("client-id", "app")], [("consumer_byte_rate", 2048.0), ("request_percentage", 50.0)]),
        ],
        version=version,
    ) == [
        ([("client-id", None), ("user", "alice")], ErrorCode.NONE, None),
        ([("client-id", "app")], ErrorCode.NONE, None),
    ]
    response = _describe(ctx, version=version)
    assert response.error_code == ErrorCode.NONE and response.error_message == ""  # as Kafka
    assert _entries(response) == [
        ((("client-id", "app"),), (("consumer_byte_rate", 2048.0), ("request_percentage", 50.0))),
        ((("client-id", None), ("user", "alice")), (("producer_byte_rate", 1024.0),)),
    ]
    assert _entries(_describe(ctx, [("user", 0, "alice")], strict=True)) == []
    assert len(_entries(_describe(ctx, [("client-id", 2, None)], strict=True))) == 1


def test_validate_only_and_removal(ctx):
    _alter(ctx, [([("user", "bob")], [("consumer_byte_rate", 10.0)])], validate_only=True)
    assert _entries(_describe(ctx)) == []
    _alter(ctx, [([("user", "bob")], [("consumer_byte_rate", 10.0)])])
    _alter(ctx, [([("user", "bob")], [("consumer_byte_rate", None)])])
    assert _entries(_describe(ctx)) == []


def test_unknown_keys_and_bad_entities_are_refused_as_kafka(ctx):
    assert _alter(ctx, [([("user", "bob")], [("producer_byte_rate_typo", 1.0)]), ([("group", "g")], [("x", 1.0)])]) == [
        ([("user", "bob")], ErrorCode.INVALID_REQUEST, "Invalid configuration key producer_byte_rate_typo"),
        ([("group", "g")], ErrorCode.INVALID_REQUEST, "Unhandled client quota entity type: group"),
    ]


def test_a_bad_filter_is_the_responses_error(ctx):
    response = _describe(ctx, [("topic", 0, "x")])
    assert (response.error_code, response.error_message, response.entries) == (
        ErrorCode.UNSUPPORTED_VERSION,
        "Unsupported entity type topic",
        None,
    )


def test_refusals_answer_as_kafkas_get_error_response(ctx):
    describe = client_quotas.DESCRIBE_CLIENT_QUOTAS
    refused = describe.refusal(describe, DescribeClientQuotasRequest[1](components=[], strict=False), 1, 31)
    assert (refused.error_code, refused.error_message, refused.entries) == (
        31,
        "Cluster authorization failed.",
        None,
    )
    alter = client_quotas.ALTER_CLIENT_QUOTAS
    request = AlterClientQuotasRequest[1](
        entries=[Entry(entity=[Entry.EntityData(entity_type="user", entity_name=None)], ops=[])], validate_only=False
    )
    (entry,) = alter.refusal(alter, request, 1, 31).entries
    assert (entry.error_code, [(e.entity_type, e.entity_name) for e in entry.entity]) == (31, [("user", None)])
