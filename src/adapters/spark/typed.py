"""Spark types for Avro and JSON Schema values, as Spark's `from_avro` derives them.

Avro (Spark's `SchemaConverters`): records are structs, arrays arrays, maps `map<string, _>`, enums
strings, bytes and fixed binary; `date` is a date, `timestamp-millis`/`-micros` timestamps,
`local-timestamp-*` timestamps without time zone, `decimal` a decimal; a union with null is its
other branch, nullable; a union of int and long is a long, of float and double a double; any other
union is a struct of `member0`, `member1`, ... with the value in its branch's field.

JSON Schema (no Spark equivalent; the obvious mapping): objects with `properties` are structs,
arrays arrays, `integer` long, `number` double, `boolean` boolean, `string` string, a type list with
null its other type; anything else (free-form objects, mixed types) is the value's JSON text.

`conform` turns a decoded value (fastavro's Python objects, or parsed JSON) into what Arrow builds
the column from, raising ValueError when the value does not have the column's type.
"""

from __future__ import annotations

import datetime
import decimal
import json
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

AVRO_PRIMITIVES: dict[str, DataType] = {
    "null": NullType(),
    "boolean": BooleanType(),
    "int": IntegerType(),
    "long": LongType(),
    "float": FloatType(),
    "double": DoubleType(),
    "bytes": BinaryType(),
    "string": StringType(),
}
LOGICAL = {
    "date": DateType(),
    "timestamp-millis": TimestampType(),
    "timestamp-micros": TimestampType(),
    "local-timestamp-millis": TimestampNTZType(),
    "local-timestamp-micros": TimestampNTZType(),
}


def avro_spark_type(schema: Any, named: dict[str, Any] | None = None, path: tuple[str, ...] = ()) -> DataType:
    """The Spark type of a fastavro-parsed schema (named types referenced by full name); a
    recursive record raises ValueError, as Spark's `from_avro` refuses one."""
    named = {} if named is None else named
    if isinstance(schema, str):
        if schema in AVRO_PRIMITIVES:
            return AVRO_PRIMITIVES[schema]
        return avro_spark_type(named[schema], named, path)
    if isinstance(schema, list):
        branches = [b for b in schema if b != "null"]
        types = [avro_spark_type(b, named, path) for b in branches]
        if len(types) == 1:
            return types[0]
        if {type(t) for t in types} <= {IntegerType, LongType}:
            return LongType()
        if {type(t) for t in types} <= {FloatType, DoubleType}:
            return DoubleType()
        return StructType([StructField(f"member{i}", t, True) for i, t in enumerate(types)])
    kind = schema["type"]
    logical = schema.get("logicalType")
    if logical == "decimal":
        return DecimalType(schema["precision"], schema.get("scale", 0))
    if logical in LOGICAL:
        return LOGICAL[logical]
    if kind == "record" or kind == "error":
        if schema["name"] in path:
            raise ValueError(
                f"Found recursive reference in Avro schema ({schema['name']}), which Spark cannot represent"
            )
        named[schema["name"]] = schema
        inner = (*path, schema["name"])
        return StructType(
            [
                StructField(f["name"], avro_spark_type(f["type"], named, inner), _nullable(f["type"]))
                for f in schema["fields"]
            ]
        )
    if kind == "enum":
        return StringType()
    if kind == "fixed":
        return BinaryType()
    if kind == "array":
        return ArrayType(avro_spark_type(schema["items"], named, path), _nullable(schema["items"]))
    if kind == "map":
        return MapType(StringType(), avro_spark_type(schema["values"], named, path), _nullable(schema["values"]))
    return avro_spark_type(kind, named, path)


def _nullable(schema: Any) -> bool:
    return schema == "null" or (isinstance(schema, list) and "null" in schema)


def json_spark_type(schema: Any) -> DataType:
    if not isinstance(schema, dict):
        return StringType()
    kind = schema.get("type")
    if isinstance(kind, list):
        others = [k for k in kind if k != "null"]
        kind = others[0] if len(others) == 1 else None
    if kind == "object" and isinstance(schema.get("properties"), dict):
        return StructType([StructField(name, json_spark_type(sub), True) for name, sub in schema["properties"].items()])
    if kind == "array" and isinstance(schema.get("items"), dict):
        return ArrayType(json_spark_type(schema["items"]), True)
    return {"integer": LongType(), "number": DoubleType(), "boolean": BooleanType()}.get(kind or "", StringType())


def conform(spark_type: DataType, value: Any) -> Any:
    """`value` as Arrow builds a `spark_type` column from it; ValueError if it is not one."""
    if value is None:
        return None
    if isinstance(spark_type, StructType):
        if not isinstance(value, dict):
            return _member(spark_type, value)
        return {f.name: conform(f.dataType, value.get(f.name)) for f in spark_type.fields}
    if isinstance(spark_type, ArrayType):
        if not isinstance(value, list):
            raise ValueError(f"expected an array, got {type(value).__name__}")
        return [conform(spark_type.elementType, v) for v in value]
    if isinstance(spark_type, MapType):
        if not isinstance(value, dict):
            raise ValueError(f"expected a map, got {type(value).__name__}")
        return [(str(k), conform(spark_type.valueType, v)) for k, v in value.items()]
    if isinstance(spark_type, StringType):
        return value if isinstance(value, str) else json.dumps(value)
    if isinstance(spark_type, BooleanType):
        if not isinstance(value, bool):
            raise ValueError(f"expected a boolean, got {value!r}")
        return value
    if isinstance(spark_type, (IntegerType, LongType)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected an integer, got {value!r}")
        return value
    if isinstance(spark_type, (FloatType, DoubleType)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"expected a number, got {value!r}")
        return float(value)
    if isinstance(spark_type, BinaryType):
        return bytes(value) if isinstance(value, (bytes, bytearray)) else str(value).encode()
    if isinstance(spark_type, (DateType, TimestampType, TimestampNTZType, DecimalType)):
        if not isinstance(value, (datetime.date, decimal.Decimal)):
            raise ValueError(f"expected a {spark_type.simpleString()}, got {value!r}")
        return value
    return value


PYTHON_TYPES: dict[type, type | tuple[type, ...]] = {
    StringType: str,
    BooleanType: bool,
    IntegerType: int,
    LongType: int,
    FloatType: float,
    DoubleType: float,
    BinaryType: (bytes, bytearray),
    ArrayType: list,
}


def _member(spark_type: StructType, value: Any) -> dict[str, Any]:
    """A value of a general union, in the first `memberN` whose type it has (fastavro does not say
    which branch it read; records are dicts and handled by the caller)."""
    for field in spark_type.fields:
        expected = PYTHON_TYPES.get(type(field.dataType))
        if expected is not None and isinstance(value, expected) and not (isinstance(value, bool) and expected is int):
            return {f.name: conform(f.dataType, value) if f is field else None for f in spark_type.fields}
    raise ValueError(f"no union branch holds {value!r}")
