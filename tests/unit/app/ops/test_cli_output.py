"""Tables for people: aligned, the widest column cut to fit a terminal, JSON for scripts."""

from __future__ import annotations

import io
import json

from trafka.app.ops.output import format_table, print_rows

ROWS = [{"topic": "a", "partitions": 1, "note": None}, {"topic": "x" * 40, "partitions": 12, "note": True}]


def test_columns_are_aligned_and_values_whole_without_a_width():
    assert format_table(ROWS, ["topic", "partitions", "note"]).splitlines() == [
        "TOPIC" + " " * 37 + "PARTITIONS  NOTE",
        "a" + " " * 41 + "1           -",
        "x" * 40 + "  12          true",
    ]


def test_the_widest_column_is_cut_to_fit_the_width():
    lines = format_table(ROWS, ["topic", "partitions", "note"], width=30).splitlines()
    assert all(len(line) <= 30 for line in lines)
    assert lines[2].startswith("x" * 11 + "…")


def test_json_output_is_the_rows():
    out = io.StringIO()
    print_rows(ROWS, ["topic"], "json", out)
    assert json.loads(out.getvalue()) == ROWS
