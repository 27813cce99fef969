"""Avro schemas: parsed by fastavro, canonicalised, and checked with Avro's schema resolution rules.

`parse` accepts what fastavro's `parse_schema` accepts (named types from references included), so a
schema the registry takes is one fastavro can write and read. The canonical form is the schema's
JSON with keys sorted and no whitespace: two texts of the same schema (spacing, key order) get the
same id, while a changed default or doc is a new schema, as Confluent's `Schema.toString()` does.

`incompatibilities(reader, writer)` follows Avro's `SchemaCompatibility` (the rules of the
specification's "Schema Resolution"): numeric promotions and string/bytes; records by name, each
reader field found in the writer (by name or alias) or given a default; enums by name, writer
symbols known to the reader unless it has a default; fixed by name and size; arrays and maps by
their items and values; a writer union readable branch by branch; a reader union reading the writer
with one of its branches. Logical types do not matter, as in Avro.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import fastavro
from fastavro.schema import SchemaParseException, UnknownType

from trafka.domain.schema_registry import ParsedSchema, Schema, SchemaType

PROMOTIONS = {
    "int": {"long", "float", "double"},
    "long": {"float", "double"},
    "float": {"double"},
    "string": {"bytes"},
    "bytes": {"string"},
}
PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


class AvroFormat:
    schema_type = SchemaType.AVRO

    def parse(self, schema: Schema, references: Mapping[str, ParsedSchema]) -> ParsedSchema:
        try:
            raw = json.loads(schema.text)
        except ValueError as exc:
            raise ValueError(f"not JSON: {exc}") from None
        named: dict[str, Any] = {}
        for ref in references.values():
            ref_parsed = ref.parsed
            assert isinstance(ref_parsed, AvroParsed)
            named.update(ref_parsed.named)
        try:
            parsed = fastavro.parse_schema(raw, named_schemas=named, _write_hint=False)
        except (SchemaParseException, UnknownType, KeyError, TypeError, AttributeError, ValueError) as exc:
            raise ValueError(str(exc) or type(exc).__name__) from None
        canonical = json.dumps(raw, sort_keys=True, separators=(",", ":"))
        return ParsedSchema(schema, canonical, AvroParsed(raw, parsed, named))

    def formatted(self, parsed: ParsedSchema, fmt: str) -> str:
        return parsed.schema.text

    def incompatibilities(self, reader: ParsedSchema, writer: ParsedSchema) -> list[str]:
        r, w = reader.parsed, writer.parsed
        assert isinstance(r, AvroParsed) and isinstance(w, AvroParsed)
        return Resolution(r.named, w.named).check(r.parsed, w.parsed, "")


class AvroParsed:
    """fastavro's parsed schema and the named types it defines (full name -> definition)."""

    def __init__(self, raw: Any, parsed: Any, named: dict[str, Any]) -> None:
        self.raw = raw
        self.parsed = parsed
        self.named = named


def _type_of(schema: Any) -> str:
    if isinstance(schema, list):
        return "union"
    if isinstance(schema, dict):
        return schema["type"] if isinstance(schema["type"], str) else _type_of(schema["type"])
    return schema


class Resolution:
    """One reader/writer pair's check; named types are followed through each side's definitions."""

    def __init__(self, reader_named: dict[str, Any], writer_named: dict[str, Any]) -> None:
        self.reader_named = reader_named
        self.writer_named = writer_named
        self.in_progress: set[tuple[str, str]] = set()

    def _deref(self, schema: Any, named: dict[str, Any]) -> Any:
        while isinstance(schema, str) and schema not in PRIMITIVES and schema in named:
            schema = named[schema]
        if isinstance(schema, dict) and isinstance(schema["type"], (dict, list)):
            return self._deref(schema["type"], named)
        if isinstance(schema, dict) and schema["type"] in PRIMITIVES:
            return schema["type"]
        return schema

    def check(self, reader: Any, writer: Any, path: str) -> list[str]:
        reader = self._deref(reader, self.reader_named)
        writer = self._deref(writer, self.writer_named)
        w_type, r_type = _type_of(writer), _type_of(reader)
        if w_type == "union":
            return [m for branch in writer for m in self.check(reader, branch, path)]
        if r_type == "union":
            if any(not self.check(branch, writer, path) for branch in reader):
                return []
            return [f"{path or '/'}: reader union lacks writer type {_describe(writer)}"]
        if w_type != r_type:
            if r_type in PROMOTIONS.get(w_type, ()):
                return []
            return [f"{path or '/'}: reader type {r_type} not compatible with writer type {w_type}"]
        if w_type in PRIMITIVES:
            return []
        if w_type in ("record", "error", "enum", "fixed"):
            if not _names_match(reader, writer):
                return [f"{path or '/'}: expected name {writer['name']}, found {reader['name']}"]
        if w_type == "array":
            return self.check(reader["items"], writer["items"], f"{path}/items")
        if w_type == "map":
            return self.check(reader["values"], writer["values"], f"{path}/values")
        if w_type == "fixed":
            if reader["size"] != writer["size"]:
                return [f"{path or '/'}: expected size {writer['size']}, found {reader['size']}"]
            return []
        if w_type == "enum":
            missing = [s for s in writer["symbols"] if s not in reader["symbols"]]
            if missing and reader.get("default") is None:
                return [f"{path or '/'}: reader enum {reader['name']} lacks symbols {missing}"]
            return []
        return self._check_record(reader, writer, path)

    def _check_record(self, reader: dict, writer: dict, path: str) -> list[str]:
        pair = (reader["name"], writer["name"])
        if pair in self.in_progress:
            return []
        self.in_progress.add(pair)
        try:
            messages: list[str] = []
            by_name = {f["name"]: f for f in writer["fields"]}
            for field in reader["fields"]:
                names = [field["name"], *field.get("aliases", ())]
                found = next((by_name[n] for n in names if n in by_name), None)
                if found is None:
                    if "default" not in field:
                        messages.append(f"{path}/{field['name']}: reader field has no default and the writer lacks it")
                    continue
                messages += self.check(field["type"], found["type"], f"{path}/{field['name']}")
            return messages
        finally:
            self.in_progress.discard(pair)


def _names_match(reader: dict, writer: dict) -> bool:
    r_name, w_name = reader["name"], writer["name"]
    aliases = reader.get("aliases", ())
    return r_name.split(".")[-1] == w_name.split(".")[-1] or w_name in aliases or w_name.split(".")[-1] in aliases


def _describe(schema: Any) -> str:
    if isinstance(schema, dict):
        return f"{schema['type']} {schema.get('name', '')}".strip()
    return str(schema)
