"""JSON Schema: checked as a schema by `jsonschema`, compared by Confluent's rules (`SchemaDiff`).

`parse` accepts a JSON object (or boolean) that `jsonschema` finds valid against its `$schema`'s
meta-schema (draft 7 when absent, as Confluent); the canonical form is the JSON with keys sorted.

`incompatibilities(reader, writer)` runs Confluent's diff of the writer's schema (the original)
against the reader's (the update) under its default STRICT policy, for the common keywords: `type`
(extending it is compatible, narrowing or changing is not), objects (a property removed from an
open content model or added to a closed one is compatible; removed from a closed model, or added to
an open one, is not; `required` added without a default is not; `additionalProperties` turned off
is not), `enum` (extended, not narrowed), array `items`, string lengths and numeric bounds
(relaxed, not tightened), recursing through `properties` and `items`. Other keywords (combined
schemas, `$ref` between subjects, dependencies, patterns) are not compared.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError

from trafka.domain.schema_registry import ParsedSchema, Schema, SchemaType

RELAXING = {  # keyword: (larger is looser?)
    "maxLength": True,
    "minLength": False,
    "maximum": True,
    "minimum": False,
    "exclusiveMaximum": True,
    "exclusiveMinimum": False,
    "maxItems": True,
    "minItems": False,
    "maxProperties": True,
    "minProperties": False,
}


class JsonSchemaFormat:
    schema_type = SchemaType.JSON

    def parse(self, schema: Schema, references: Mapping[str, ParsedSchema]) -> ParsedSchema:
        try:
            raw = json.loads(schema.text)
        except ValueError as exc:
            raise ValueError(f"not JSON: {exc}") from None
        if not isinstance(raw, (dict, bool)):
            raise ValueError("a JSON Schema is an object or a boolean")
        try:
            jsonschema.validators.validator_for(raw, default=jsonschema.Draft7Validator).check_schema(raw)
        except SchemaError as exc:
            raise ValueError(exc.message) from None
        return ParsedSchema(schema, json.dumps(raw, sort_keys=True, separators=(",", ":")), raw)

    def formatted(self, parsed: ParsedSchema, fmt: str) -> str:
        return parsed.schema.text

    def incompatibilities(self, reader: ParsedSchema, writer: ParsedSchema) -> list[str]:
        return compare(writer.parsed, reader.parsed, "#")


def _types(schema: dict) -> set[str] | None:
    kind = schema.get("type")
    if kind is None:
        return None
    return {kind} if isinstance(kind, str) else set(kind)


def compare(original: Any, update: Any, path: str) -> list[str]:
    """Why data valid against `original` may not be valid against `update` (Confluent's names)."""
    if update is True or update == {}:
        return []
    if original is True or original == {}:
        return [f"{path}: TYPE_NARROWED"]
    if isinstance(update, bool) or isinstance(original, bool):
        return [] if original is False else [f"{path}: TYPE_CHANGED"]
    messages: list[str] = []
    old_types, new_types = _types(original), _types(update)
    if new_types is not None:
        accepted = new_types | ({"integer"} if "number" in new_types else set())  # number takes integers
        if old_types is None:
            messages.append(f"{path}: TYPE_NARROWED")
        elif not old_types <= accepted:
            messages.append(f"{path}: TYPE_CHANGED" if not old_types & new_types else f"{path}: TYPE_NARROWED")
    if "enum" in update:
        if "enum" not in original or not set(map(json.dumps, original["enum"])) <= set(map(json.dumps, update["enum"])):
            messages.append(f"{path}: ENUM_ARRAY_NARROWED" if "enum" in original else f"{path}: ENUM_ARRAY_CHANGED")
    for keyword, larger_is_looser in RELAXING.items():
        old, new = original.get(keyword), update.get(keyword)
        if new is None or old == new:
            continue
        if (
            old is None
            or not isinstance(old, (int, float))
            or not isinstance(new, (int, float))
            or (new < old if larger_is_looser else new > old)
        ):
            messages.append(f"{path}: {keyword.upper()}_{'ADDED' if old is None else 'TIGHTENED'}")
    if "items" in original or "items" in update:
        old_items, new_items = original.get("items", True), update.get("items", True)
        if isinstance(old_items, (dict, bool)) and isinstance(new_items, (dict, bool)):
            messages += compare(old_items, new_items, f"{path}/items")
    if (old_types is None or "object" in old_types) and ("properties" in original or "properties" in update):
        messages += _compare_object(original, update, path)
    return messages


def _open(schema: dict) -> bool:
    extra = schema.get("additionalProperties", True)
    return (extra is True or extra == {}) and not schema.get("patternProperties")


def _compare_object(original: dict, update: dict, path: str) -> list[str]:
    messages: list[str] = []
    old_props, new_props = original.get("properties", {}), update.get("properties", {})
    old_required, new_required = set(original.get("required", ())), set(update.get("required", ()))
    for name in sorted(set(old_props) | set(new_props)):
        where = f"{path}/properties/{name}"
        if name not in new_props:
            if not _open(update) and old_props[name] is not False:
                messages.append(f"{where}: PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL")
        elif name not in old_props:
            if _open(original) and new_props[name] not in (True, {}):
                messages.append(f"{where}: PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL")
            elif name in new_required and not (isinstance(new_props[name], dict) and "default" in new_props[name]):
                messages.append(f"{where}: REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL")
        else:
            if (
                name in new_required
                and name not in old_required
                and not (isinstance(new_props[name], dict) and "default" in new_props[name])
            ):
                messages.append(f"{path}/required/{name}: REQUIRED_ATTRIBUTE_ADDED")
            messages += compare(old_props[name], new_props[name], where)
    if _open(original) and update.get("additionalProperties", True) is False:
        messages.append(f"{path}/additionalProperties: ADDITIONAL_PROPERTIES_REMOVED")
    return messages
