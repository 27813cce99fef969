"""Avro and JSON Schema to Spark types, as `from_avro` maps them, and values shaped to them."""

from __future__ import annotations

import datetime
import decimal

import fastavro
import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from trafka.adapters.spark.typed import avro_spark_type, conform, json_spark_type


def test_avro_types_as_from_avro_maps_them():
    schema = fastavro.parse_schema(
        {
            "type": "record",
            "name": "R",
            "fields": [
                {"name": "i", "type": "int"},
                {"name": "opt", "type": ["null", "string"]},
                {"name": "wide", "type": ["int", "long"]},
                {"name": "mixed", "type": ["string", "int", "null"]},
                {"name": "tags", "type": {"type": "array", "items": "string"}},
                {"name": "attrs", "type": {"type": "map", "values": "double"}},
                {"name": "color", "type": {"type": "enum", "name": "C", "symbols": ["RED"]}},
                {"name": "hash", "type": {"type": "fixed", "name": "H", "size": 2}},
                {"name": "day", "type": {"type": "int", "logicalType": "date"}},
                {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
                {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
            ],
        },
        _write_hint=False,
    )
    spark = avro_spark_type(schema)
    assert [(f.name, f.dataType, f.nullable) for f in spark.fields] == [
        ("i", IntegerType(), False),
        ("opt", StringType(), True),
        ("wide", LongType(), False),
        ("mixed", StructType([StructField("member0", StringType()), StructField("member1", IntegerType())]), True),
        ("tags", ArrayType(StringType(), False), False),
        ("attrs", MapType(StringType(), DoubleType(), False), False),
        ("color", StringType(), False),
        ("hash", BinaryType(), False),
        ("day", DateType(), False),
        ("at", TimestampType(), False),
        ("price", DecimalType(9, 2), False),
    ]


def test_a_recursive_record_is_refused_as_spark_refuses_it():
    linked = fastavro.parse_schema(
        {"type": "record", "name": "Node", "fields": [{"name": "next", "type": ["null", "Node"], "default": None}]},
        _write_hint=False,
    )
    with pytest.raises(ValueError, match="recursive"):
        avro_spark_type(linked)


def test_values_are_shaped_to_their_columns():
    union = StructType([StructField("member0", StringType()), StructField("member1", IntegerType())])
    assert conform(union, 7) == {"member0": None, "member1": 7}
    assert conform(MapType(StringType(), LongType()), {"a": 1}) == [("a", 1)]
    assert conform(DateType(), datetime.date(2024, 1, 2)) == datetime.date(2024, 1, 2)
    assert conform(DecimalType(9, 2), decimal.Decimal("1.50")) == decimal.Decimal("1.50")
    assert conform(StringType(), {"free": "form"}) == '{"free": "form"}'
    for column, bad in ((LongType(), "seven"), (ArrayType(LongType()), 1), (LongType(), True), (union, 1.5)):
        with pytest.raises(ValueError):
            conform(column, bad)


def test_json_schema_types():
    schema = {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "score": {"type": "number"},
            "ok": {"type": "boolean"},
            "name": {"type": ["string", "null"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "extra": {"type": "object"},
        },
    }
    assert json_spark_type(schema) == StructType(
        [
            StructField("id", LongType()),
            StructField("score", DoubleType()),
            StructField("ok", BooleanType()),
            StructField("name", StringType()),
            StructField("tags", ArrayType(StringType())),
            StructField("extra", StringType()),
        ]
    )
