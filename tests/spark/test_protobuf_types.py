"""Spark types of Protobuf messages (as `from_protobuf` maps them) and Confluent's message indexes."""

from __future__ import annotations

import pickle

import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DayTimeIntervalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructType,
    TimestampType,
)

from tests.protobuf_classes import compile_files, message_classes
from trafka.adapters.spark.protobuf import ProtobufReader, SchemaFiles, read_indexes, spark_type

SCALARS = """
syntax = "proto3";
package t;
import "google/protobuf/duration.proto";
message S {
  int32 a = 1; sint32 b = 2; sfixed32 c = 3; uint32 d = 4; fixed32 e = 5;
  int64 f = 6; sint64 g = 7; sfixed64 h = 8; uint64 i = 9; fixed64 j = 10;
  float k = 11; double l = 12; bool m = 13; string n = 14; bytes o = 15;
  google.protobuf.Duration p = 16; repeated S.Inner q = 17; map<int32, bytes> r = 18;
  message Inner { oneof x { string s = 1; int32 i = 2; } }
}
message Tree { repeated Tree children = 1; }
"""


def test_scalars_repeated_maps_and_well_known_types():
    struct = spark_type(message_classes({"t.proto": SCALARS})["t.S"].DESCRIPTOR)
    types = {f.name: f.dataType for f in struct.fields}
    assert [types[n] for n in "abcde"] == [IntegerType()] * 5
    assert [types[n] for n in "fghij"] == [LongType()] * 5
    assert [types[n] for n in "klmno"] == [FloatType(), DoubleType(), BooleanType(), StringType(), BinaryType()]
    assert types["p"] == DayTimeIntervalType()
    assert types["q"] == ArrayType(StructType().add("s", StringType()).add("i", IntegerType()), False)
    assert types["r"] == MapType(IntegerType(), BinaryType(), True)


def test_a_recursive_message_is_refused_as_spark_refuses_it():
    with pytest.raises(ValueError, match="recursive reference"):
        spark_type(message_classes({"t.proto": SCALARS})["t.Tree"].DESCRIPTOR)


@pytest.mark.parametrize(
    "encoded, indexes",
    [
        (b"\x00", [0]),
        (b"\x02\x02", [1]),
        (b"\x04\x02\x06", [1, 3]),
        (b"\x02\x80\x01", [64]),
    ],
)
def test_message_indexes(encoded, indexes):
    assert read_indexes(b"\x00\x00\x00\x00\x01" + encoded + b"payload", 5) == (indexes, 5 + len(encoded))


@pytest.mark.parametrize("encoded", [b"", b"\x02", b"\x80", b"\x7f"])
def test_bad_message_indexes_are_refused(encoded):
    with pytest.raises(ValueError):
        read_indexes(b"\x00\x00\x00\x00\x01" + encoded, 5)


def test_the_reader_pickles_without_its_classes_and_decodes_after():
    file = [f for f in compile_files({"t.proto": SCALARS}).file if f.name == "t.proto"][0]
    reader = ProtobufReader(SchemaFiles([file.SerializeToString()]))
    S = message_classes({"t.proto": SCALARS})["t.S"]
    data = b"\x00\x00\x00\x00\x07\x00" + S(a=-5, n="x", r={1: b"y"}).SerializeToString()
    assert reader.decode(data, lambda: reader.latest)["a"] == -5
    copy = pickle.loads(pickle.dumps(reader))
    decoded = copy.decode(data, lambda: copy.latest)
    assert (decoded["a"], decoded["n"], decoded["r"], decoded["b"], decoded["q"]) == (-5, "x", {1: b"y"}, None, [])
    with pytest.raises(ValueError, match="not a t.S"):
        copy.decode(b"\x00\x00\x00\x00\x07\x00\xff\xff", lambda: copy.latest)


def test_references_are_fetched_by_subject_and_version_and_named_by_their_import():
    import base64

    files = {
        f.name: f
        for f in compile_files(
            {
                "common/money.proto": 'syntax = "proto3";\npackage common;\nmessage Money { int64 units = 1; }\n',
                "shop/order.proto": 'syntax = "proto3";\npackage shop;\nimport "common/money.proto";\n'
                'import "google/protobuf/timestamp.proto";\n'
                "message Order { common.Money total = 1; google.protobuf.Timestamp at = 2; }\n",
            }
        ).file
    }
    encoded = {name: base64.b64encode(f.SerializeToString()).decode() for name, f in files.items()}
    asked = []

    def get(path):
        asked.append(path)
        assert path == "/subjects/common%2Fmoney.proto/versions/4?deleted=true&format=serialized"
        return {"schema": encoded["common/money.proto"]}

    body = {
        "schema": encoded["shop/order.proto"],
        "references": [
            {"name": "common/money.proto", "subject": "common/money.proto", "version": 4},
            {"name": "google/protobuf/timestamp.proto", "subject": "google/protobuf/timestamp.proto", "version": 1},
        ],
    }
    reader = ProtobufReader(SchemaFiles.fetch(get, body))
    assert len(asked) == 1 and reader.message == "shop.Order"
    assert reader.spark_type() == StructType().add("total", StructType().add("units", LongType())).add(
        "at", TimestampType()
    )


def test_google_types_are_structs_from_the_readers_own_pool():
    text = 'syntax = "proto3";\npackage t;\nimport "google/type/money.proto";\nmessage P { google.type.Money amount = 1; }\n'
    file = [f for f in compile_files({"t.proto": text}).file if f.name == "t.proto"][0]
    reader = ProtobufReader(SchemaFiles([file.SerializeToString()]))
    assert reader.spark_type() == StructType().add(
        "amount", StructType().add("currency_code", StringType()).add("units", LongType()).add("nanos", IntegerType())
    )
