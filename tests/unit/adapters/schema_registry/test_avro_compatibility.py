"""Avro compatibility checked against fastavro's own schema resolution, on generated schema pairs.

Writer and reader schemas are drawn from one small grammar (few field names, few symbols, named
types named by their position) so that many pairs are related. If the registry says the reader can
read the writer's data, fastavro must read every generated datum; if it says it cannot, fastavro
must fail on at least one. The datums cover every union branch, enum symbol and field of the writer.
"""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trafka.adapters.schema_registry import AvroFormat
from trafka.domain.schema_registry import Schema

PRIMITIVES = ["null", "boolean", "int", "long", "float", "double", "string", "bytes"]
SAMPLE = {"null": None, "boolean": True, "int": 7, "long": 7, "float": 1.5, "double": 1.5, "string": "s", "bytes": b"b"}
FIELD_NAMES = ["a", "b", "c"]
SYMBOLS = ["X", "Y", "Z"]


def default_for(schema: Any) -> Any:
    if isinstance(schema, str):
        return SAMPLE[schema].decode() if schema == "bytes" else SAMPLE[schema]
    if isinstance(schema, list):
        return default_for(schema[0])
    kind = schema["type"]
    if kind == "record":
        return {f["name"]: default_for(f["type"]) for f in schema["fields"]}
    if kind == "enum":
        return schema["symbols"][0]
    if kind == "fixed":
        return "\u0000" * schema["size"]
    return [] if kind == "array" else {}


@st.composite
def schemas(draw, path: str = "t", depth: int = 2) -> Any:
    kinds = ["primitive", "primitive", "enum", "fixed", "union"]
    if depth > 0:
        kinds += ["record", "record", "array", "map"]
    kind = draw(st.sampled_from(kinds))
    if kind == "primitive":
        return draw(st.sampled_from(PRIMITIVES))
    if kind == "enum":
        enum = {
            "type": "enum",
            "name": f"E_{path}",
            "symbols": draw(st.lists(st.sampled_from(SYMBOLS), min_size=1, unique=True)),
        }
        if draw(st.booleans()):
            enum["default"] = enum["symbols"][0]
        return enum
    if kind == "fixed":
        return {"type": "fixed", "name": f"F_{path}", "size": draw(st.integers(1, 2))}
    if kind == "union":
        branches: list[Any] = draw(st.lists(st.sampled_from(PRIMITIVES), min_size=1, max_size=3, unique=True))
        if depth > 0 and draw(st.booleans()):
            branches.insert(draw(st.integers(0, len(branches))), draw(records(f"{path}_u", depth - 1)))
        return branches
    if kind == "array":
        return {"type": "array", "items": draw(schemas(f"{path}_i", depth - 1))}
    if kind == "map":
        return {"type": "map", "values": draw(schemas(f"{path}_v", depth - 1))}
    return draw(records(path, depth - 1))


@st.composite
def records(draw, path: str, depth: int) -> dict:
    fields = []
    for name in draw(st.lists(st.sampled_from(FIELD_NAMES), min_size=1, unique=True)):
        field_type = draw(schemas(f"{path}_{name}", depth))
        field: dict[str, Any] = {"name": name, "type": field_type}
        if draw(st.booleans()):
            field["default"] = default_for(field_type)
        fields.append(field)
    return {"type": "record", "name": f"R_{path}", "fields": fields}


@st.composite
def evolved(draw, schema: Any, path: str = "t") -> Any:
    """`schema` as a later version might change it: most parts kept, some promoted, widened,
    narrowed, dropped or added, so that compatible and incompatible pairs are both common."""
    change = draw(st.sampled_from(["keep"] * 7 + ["other"]))
    if change == "other":
        return draw(schemas(path, 1))
    if isinstance(schema, str):
        return draw(
            st.sampled_from(
                [schema] * 4 + ["long", "double", "string", "bytes", ["null", schema] if schema != "null" else "null"]
            )
        )
    if isinstance(schema, list):
        return [b for b in schema if isinstance(b, dict) or draw(st.integers(0, 4)) > 0] or ["null"]
    kind = schema["type"]
    if kind == "enum":
        symbols = draw(st.lists(st.sampled_from(SYMBOLS), min_size=1, unique=True))
        enum = {"type": "enum", "name": schema["name"], "symbols": symbols}
        return {**enum, "default": symbols[0]} if draw(st.booleans()) else enum
    if kind in ("array", "map"):
        inner = "items" if kind == "array" else "values"
        return {**schema, inner: draw(evolved(schema[inner], f"{path}_{inner[0]}"))}
    if kind == "fixed":
        return schema
    fields = []
    for field in schema["fields"]:
        if draw(st.integers(0, 5)) == 0:
            continue
        new_type = draw(evolved(field["type"], f"{path}_{field['name']}"))
        new_field: dict[str, Any] = {"name": field["name"], "type": new_type}
        if draw(st.booleans()):
            new_field["default"] = default_for(new_type)
        fields.append(new_field)
    for name in FIELD_NAMES:
        if name not in {f["name"] for f in fields} and draw(st.integers(0, 3)) == 0:
            new_type = draw(schemas(f"{path}_{name}", 0))
            with_default = draw(st.integers(0, 3)) > 0
            fields.append(
                {"name": name, "type": new_type, **({"default": default_for(new_type)} if with_default else {})}
            )
    return {**schema, "fields": fields or schema["fields"]}


@st.composite
def schema_pairs(draw) -> tuple[Any, Any]:
    first = draw(schemas())
    second = draw(st.one_of(schemas(), evolved(first)))
    return (first, second) if draw(st.booleans()) else (second, first)


def datums(schema: Any) -> list[Any]:
    """Values of `schema` that take every union branch, enum symbol and field at least once."""
    if isinstance(schema, str):
        return [SAMPLE[schema]]
    if isinstance(schema, list):
        # fastavro's tuple notation names the branch, so each one is written (7 fits int and long).
        return [(branch if isinstance(branch, str) else branch["name"], v) for branch in schema for v in datums(branch)]
    kind = schema["type"]
    if kind == "enum":
        return list(schema["symbols"])
    if kind == "fixed":
        return [b"\x00" * schema["size"]]
    if kind == "array":
        return [[]] + [[v] for v in datums(schema["items"])]
    if kind == "map":
        return [{}] + [{"k": v} for v in datums(schema["values"])]
    options = {f["name"]: datums(f["type"]) for f in schema["fields"]}
    base = {name: values[0] for name, values in options.items()}
    return [base] + [{**base, name: v} for name, values in options.items() for v in values[1:]]


def fastavro_reads(writer: Any, reader: Any, datum: Any) -> bool:
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, fastavro.parse_schema(writer), datum)
    buffer.seek(0)
    try:
        fastavro.schemaless_reader(buffer, fastavro.parse_schema(writer), fastavro.parse_schema(reader))
    except Exception:
        return False
    return True


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=schema_pairs())
def test_compatible_exactly_when_fastavro_resolves_every_datum(pair):
    writer, reader = pair
    fmt = AvroFormat()
    parsed_writer = fmt.parse(Schema(json.dumps(writer)), {})
    parsed_reader = fmt.parse(Schema(json.dumps(reader)), {})
    problems = fmt.incompatibilities(parsed_reader, parsed_writer)
    results = [fastavro_reads(writer, reader, d) for d in datums(writer)]
    if problems:
        assert not all(results), problems
    else:
        assert all(results)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas())
def test_a_schema_reads_its_own_data(schema):
    fmt = AvroFormat()
    parsed = fmt.parse(Schema(json.dumps(schema)), {})
    assert fmt.incompatibilities(parsed, parsed) == []
    assert all(fastavro_reads(schema, schema, d) for d in datums(schema))


def test_promotions_and_their_reverse():
    fmt = AvroFormat()

    def check(reader: str, writer: str) -> bool:
        return not fmt.incompatibilities(
            fmt.parse(Schema(json.dumps(reader)), {}), fmt.parse(Schema(json.dumps(writer)), {})
        )

    assert check("long", "int") and check("double", "float") and check("bytes", "string")
    assert not check("int", "long") and not check("float", "double") and not check("int", "string")
