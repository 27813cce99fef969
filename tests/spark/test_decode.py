"""Decoding stored batches into Arrow columns: every codec, control batches, LogAppendTime, ranges."""

from __future__ import annotations

import struct

import pytest

from trafka.adapters.spark import SourceError, arrow_schema, kafka_schema
from trafka.adapters.spark.record_columns import append_batch
from trafka.adapters.spark.schema import RecordColumns

from .batches import CODECS, build_batch, commit_marker

RECORDS = [
    (1_700_000_000_000, b"k0", b"v0" * 300, [("a", b"1"), ("nul", None)]),
    (1_700_000_000_005, None, b"", []),
    (1_699_999_999_000, b"", None, [("ünïcode", b"\x00\xff")]),
    (1_700_000_000_010, b"k3", b"x" * 70_000, []),
]


def decode(batch: bytes, first: int = 0, until: int = 2**62, headers: bool = True) -> list[dict]:
    columns = RecordColumns("t", 4, headers)
    append_batch(batch, columns, first, until)
    table = columns.take_batch()
    assert len(columns) == 0
    return table.to_pylist()


@pytest.mark.parametrize("codec", list(CODECS))
def test_every_codec(codec):
    rows = decode(build_batch(1000, RECORDS, codec))
    assert [(r["offset"], r["key"], r["value"], r["headers"]) for r in rows] == [
        (1000 + i, key, value, [{"key": k, "value": v} for k, v in headers] or None)
        for i, (_, key, value, headers) in enumerate(RECORDS)
    ]
    assert [round(r["timestamp"].timestamp() * 1000) for r in rows] == [r[0] for r in RECORDS]
    assert {(r["topic"], r["partition"], r["timestampType"]) for r in rows} == {("t", 4, 0)}


def test_snappy_framings_differ_in_the_stored_bytes():
    xerial, raw = build_batch(0, RECORDS, "snappy"), build_batch(0, RECORDS, "snappy-raw")
    assert xerial[61:69] == b"\x82SNAPPY\x00" and raw[61:69] != xerial[61:69]


def test_control_batches_hold_no_rows():
    assert decode(commit_marker(7, 1_700_000_000_000)) == []


def test_log_append_time_is_the_batch_max_timestamp():
    rows = decode(build_batch(0, RECORDS, "lz4", log_append_time=1_800_000_000_000))
    assert {(round(r["timestamp"].timestamp() * 1000), r["timestampType"]) for r in rows} == {(1_800_000_000_000, 1)}


def test_only_offsets_in_range_and_headers_on_request():
    rows = decode(build_batch(10, RECORDS, "gzip"), first=11, until=13, headers=False)
    assert [r["offset"] for r in rows] == [11, 12]
    assert "headers" not in rows[0]


def test_malformed_records_are_a_source_error():
    batch = bytearray(build_batch(0, RECORDS[:2]))
    struct.pack_into(">i", batch, 57, 5)  # more records than the batch holds
    with pytest.raises(SourceError, match="holds a malformed record"):
        decode(bytes(batch))
    with pytest.raises(SourceError, match="cannot decompress"):
        decode(build_batch(0, RECORDS, "zstd")[:-20] + b"\x00" * 20)


def test_arrow_schema_is_what_pyspark_expects():
    from pyspark.sql.pandas.types import to_arrow_schema

    for headers in (False, True):
        assert arrow_schema(headers).equals(to_arrow_schema(kafka_schema(headers), timezone="UTC"))
