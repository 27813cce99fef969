"""JSON Schema registration and Confluent's compatibility rules (STRICT policy), in the domain."""

from __future__ import annotations

import json

import pytest

from trafka.adapters.schema_registry import AvroFormat, JsonSchemaFormat
from trafka.domain.schema_registry import RegistryError, Schema, SchemaRegistry, SchemaType

FORMAT = JsonSchemaFormat()


def js(body: dict) -> Schema:
    return Schema(json.dumps(body), SchemaType.JSON)


def closed(properties: dict, required: list[str] = ()) -> dict:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


def backward(new: dict, old: dict) -> list[str]:
    """What stops `new` from reading data valid against `old`."""
    return FORMAT.incompatibilities(FORMAT.parse(js(new), {}), FORMAT.parse(js(old), {}))


def test_invalid_schemas_are_refused():
    with pytest.raises(ValueError):
        FORMAT.parse(js({"type": "nonsense"}), {})
    with pytest.raises(ValueError):
        FORMAT.parse(Schema("[1, 2]", SchemaType.JSON), {})
    with pytest.raises(ValueError):
        FORMAT.parse(Schema("{", SchemaType.JSON), {})


def test_same_schema_same_canonical_form():
    a = FORMAT.parse(Schema('{"type": "string", "maxLength": 3}', SchemaType.JSON), {})
    b = FORMAT.parse(Schema('{"maxLength":3,"type":"string"}', SchemaType.JSON), {})
    assert a.canonical == b.canonical


@pytest.mark.parametrize(
    "new, old, compatible",
    [
        ({"type": "number"}, {"type": "integer"}, True),  # TYPE_EXTENDED
        ({"type": "integer"}, {"type": "number"}, False),  # narrowed
        ({"type": ["string", "null"]}, {"type": "string"}, True),
        ({"type": "string"}, {"type": ["string", "null"]}, False),
        ({"type": "string"}, {"type": "integer"}, False),  # TYPE_CHANGED
        ({"enum": ["a", "b", "c"]}, {"enum": ["a", "b"]}, True),
        ({"enum": ["a"]}, {"enum": ["a", "b"]}, False),
        ({"type": "string", "maxLength": 10}, {"type": "string", "maxLength": 5}, True),
        ({"type": "string", "maxLength": 5}, {"type": "string", "maxLength": 10}, False),
        ({"type": "string", "maxLength": 5}, {"type": "string"}, False),
        ({"type": "array", "items": {"type": "number"}}, {"type": "array", "items": {"type": "integer"}}, True),
        ({"type": "array", "items": {"type": "integer"}}, {"type": "array", "items": {"type": "number"}}, False),
        # Objects, closed content model: adding an optional property is compatible, removing one is not.
        (closed({"a": {"type": "string"}, "b": {"type": "string"}}), closed({"a": {"type": "string"}}), True),
        (closed({"a": {"type": "string"}}), closed({"a": {"type": "string"}, "b": {"type": "string"}}), False),
        (closed({"a": {"type": "string"}, "b": {"type": "string"}}, ["b"]), closed({"a": {"type": "string"}}), False),
        (
            closed({"a": {"type": "string"}, "b": {"type": "string", "default": "x"}}, ["b"]),
            closed({"a": {"type": "string"}}),
            True,
        ),
        # Open content model: removing a property is compatible, adding a typed one is not (STRICT).
        (
            {"type": "object", "properties": {"a": {"type": "string"}}},
            {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}},
            True,
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}},
            {"type": "object", "properties": {"a": {"type": "string"}}},
            False,
        ),
        (
            closed({"a": {"type": "string"}}, ["a"]),
            closed({"a": {"type": "string"}}),
            False,
        ),  # REQUIRED_ATTRIBUTE_ADDED
        (
            closed({"a": {"type": "string"}}),
            closed({"a": {"type": "string"}}, ["a"]),
            True,
        ),  # REQUIRED_ATTRIBUTE_REMOVED
        (closed({"a": {"type": "integer"}}), closed({"a": {"type": "string"}}), False),  # nested change
        (closed({"a": {"type": "string"}}), {"type": "object", "properties": {"a": {"type": "string"}}}, False),
    ],
)
def test_confluents_rules(new, old, compatible):
    assert (backward(new, old) == []) is compatible, backward(new, old)


def test_registry_registers_json_and_checks_its_level():
    registry = SchemaRegistry({SchemaType.AVRO: AvroFormat(), SchemaType.JSON: FORMAT})
    first, entries = registry.register("j-value", js(closed({"a": {"type": "string"}})))
    for entry in entries:
        registry.apply(entry)
    assert entries[0].value["schemaType"] == "JSON"
    with pytest.raises(RegistryError) as refused:
        registry.register("j-value", js(closed({"a": {"type": "integer"}})))
    assert refused.value.error_code == 40901
    second, _ = registry.register("j-value", js(closed({"a": {"type": "string"}, "b": {"type": "number"}})))
    assert (first.schema_id, second.schema_id) == (1, 2)
    # An Avro schema with the same text is another schema (type is part of a schema's identity).
    with pytest.raises(RegistryError) as mixed:
        registry.register("j-value", Schema('"string"'))
    assert mixed.value.error_code == 40901
