"""The schema codec resolves each struct's fields once per version (ADR 117): encoding or decoding a
message with many elements asks a field's versions once, not once per element, and a plan never
outlives the fields it was made for (a new schema with the same shape gets its own)."""

from __future__ import annotations

from pathlib import Path

import pytest

import trafka.kafka_schemas as kafka_schemas
import trafka.schema_codec as schema_codec
from trafka.schema_codec import Schema, Versions

SCHEMAS = Path(kafka_schemas.__file__).parent


def _api_versions(count: int) -> dict:
    return {
        "ErrorCode": 0,
        "ApiKeys": [{"ApiKey": i, "MinVersion": 0, "MaxVersion": 9} for i in range(count)],
        "ThrottleTimeMs": 0,
    }


@pytest.mark.parametrize("version", [0, 3])
def test_a_fields_versions_are_looked_up_once_per_struct_not_per_element(version, monkeypatch):
    schema = Schema.load(SCHEMAS / "ApiVersionsResponse.json")
    asked = []
    contains = Versions.__contains__
    monkeypatch.setattr(Versions, "__contains__", lambda self, v: asked.append(v) or contains(self, v))
    schema.encode(_api_versions(2), version)
    after_small = len(asked)
    large = schema.encode(_api_versions(500), version)
    # the second encode asked only the message's own valid and flexible versions: the plans were made
    assert len(asked) - after_small == 2
    asked.clear()
    assert schema.decode(large, version)["ApiKeys"][499]["ApiKey"] == 499
    assert len(asked) == 2  # the same for a decode of 500 elements: its plans are the encoder's


def test_a_plan_belongs_to_its_fields():
    first = Schema.load(SCHEMAS / "HeartbeatRequest.json")
    second = Schema.load(SCHEMAS / "HeartbeatRequest.json")
    value = {"GroupId": "g", "GenerationId": 3, "MemberId": "m", "GroupInstanceId": None}
    assert first.encode(value, 3) == second.encode(value, 3)
    plans = {id(fields) for fields, _ in schema_codec._PLANS.values()}
    assert id(first.fields) in plans and id(second.fields) in plans
    assert all(key[0] == id(fields) for key, (fields, _) in schema_codec._PLANS.items())
