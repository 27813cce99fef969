"""`trafka export`: files in four formats read back field by field, and bad input refused whole.

Successful exports run in-process on the suite's SparkSession (a JVM per export would dominate the
run time); one runs as a real command. Bad input is always checked through the real command: it must
fail before Spark starts, with one line on stderr and nothing at the output path.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import csv
import glob
import io
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from trafka.app.cli.export import add_export_parser, run_export

from .records import APPEND_TIME_TOPIC, TOPIC, collect


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="trafka")
    add_export_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["export", *argv])


def export_command() -> list[str]:
    """`python -m trafka export` once trafka.app.cli.main has the export command, else the module on its own."""
    from trafka.app.cli.main import build_parser

    with contextlib.redirect_stderr(io.StringIO()):
        try:
            build_parser().parse_args(["export", "--topic", "t", "--data-dir", "d", "--output", "o"])
            return [sys.executable, "-m", "trafka", "export"]
        except SystemExit:
            return [sys.executable, "-m", "trafka.app.cli.export"]


def leftovers(directory) -> list[str]:
    return [name for name in os.listdir(directory) if "trafka-export" in name]


def decode(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def iso_millis(text: str) -> int:
    from datetime import datetime

    return round(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def test_parquet_from_the_data_dir(spark, broker, produced, tmp_path, capsys):
    output = tmp_path / "records.parquet"
    assert run_export(parse("--topic", TOPIC, "--data-dir", broker.data_dir, "--output", str(output))) == 0
    assert collect(spark.read.parquet(str(output))) == produced.rows
    assert leftovers(tmp_path) == []
    summary = capsys.readouterr().out
    assert f"exported {len(produced.rows):,} records of topic {TOPIC} to {output} (parquet)" in summary
    for partition, end in produced.end_offsets().items():
        rows = len(produced.of(partition, 0, end))
        assert f"{partition:>9}  {rows:>12,}  {f'[0, {end})':<24}  0..{end - 1}" in summary


def test_json_from_the_broker(broker, produced, tmp_path):
    output = tmp_path / "records.json"
    assert (
        run_export(
            parse("--topic", TOPIC, "--bootstrap", broker.bootstrap, "--output", str(output), "--format", "json")
        )
        == 0
    )
    rows = set()
    for path in glob.glob(str(output / "part-*.json")):
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                headers = None if r["headers"] is None else tuple((h["key"], decode(h["value"])) for h in r["headers"])
                rows.add(
                    (
                        r["topic"],
                        r["partition"],
                        r["offset"],
                        decode(r["key"]),
                        decode(r["value"]),
                        iso_millis(r["timestamp"]),
                        r["timestampType"],
                        headers,
                    )
                )
    assert rows == produced.rows


def test_csv_from_the_data_dir(broker, produced, tmp_path):
    output = tmp_path / "records.csv"
    assert (
        run_export(parse("--topic", TOPIC, "--data-dir", broker.data_dir, "--output", str(output), "--format", "csv"))
        == 0
    )
    rows = set()
    for path in glob.glob(str(output / "part-*.csv")):
        with open(path, newline="") as f:
            reader = csv.reader(f, escapechar="\\")
            assert next(reader) == [
                "key",
                "value",
                "topic",
                "partition",
                "offset",
                "timestamp",
                "timestampType",
                "headers",
            ]
            for key, value, topic, partition, offset, timestamp, timestamp_type, headers in reader:
                parsed = None if not headers else tuple((h["key"], decode(h["value"])) for h in json.loads(headers))
                rows.add(
                    (
                        topic,
                        int(partition),
                        int(offset),
                        decode(key or None),
                        decode(value or None),
                        iso_millis(timestamp),
                        int(timestamp_type),
                        parsed,
                    )
                )
    # csv.reader reads a null and an empty value both as '', but the file tells them apart
    assert rows == {r[:3] + (r[3] or None, r[4] or None) + r[5:] for r in produced.rows}
    text = "".join(open(path).read() for path in glob.glob(str(output / "part-*.csv")))
    for topic, partition, offset, _, value, *_ in produced.rows:
        if value is None:
            assert f",,{topic},{partition},{offset}," in text
        elif value == b"":
            assert f',"",{topic},{partition},{offset},' in text


def test_orc_offset_range_without_headers(spark, broker, produced, tmp_path):
    output = tmp_path / "range.orc"
    argv = [
        "--topic",
        TOPIC,
        "--bootstrap",
        broker.bootstrap,
        "--output",
        str(output),
        "--format",
        "orc",
        "--no-headers",
        "--starting-offsets",
        f'{{"{TOPIC}":{{"0":3,"1":-2,"2":10}}}}',
        "--ending-offsets",
        f'{{"{TOPIC}":{{"0":30,"1":-1,"2":11}}}}',
    ]
    assert run_export(parse(*argv)) == 0
    ends = produced.end_offsets()
    expected = produced.of(0, 3, 30) | produced.of(1, 0, ends[1]) | produced.of(2, 10, 11)
    assert collect(spark.read.orc(str(output))) == {r[:7] + (None,) for r in expected}


def test_a_failure_while_writing_leaves_nothing(broker, produced, tmp_path, capsys):
    data_dir = tmp_path / "corrupt"
    shutil.copytree(broker.data_dir, data_dir)
    segments = sorted(glob.glob(str(data_dir / f"{TOPIC}-0" / "*.log")))
    assert len(segments) > 1, "the topic's small segment.bytes should have rolled partition 0"
    with open(segments[0], "r+b") as f:  # a byte inside the first batch's records: its CRC fails
        f.seek(100)
        byte = f.read(1)
        f.seek(100)
        f.write(bytes([byte[0] ^ 0xFF]))
    output = tmp_path / "out"
    assert run_export(parse("--topic", TOPIC, "--data-dir", str(data_dir), "--output", str(output))) == 1
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("trafka export: export failed, nothing was written: segment ")
    assert "is corrupt at position 0: batch at offset 0 fails its CRC check" in error
    assert not output.exists()
    assert leftovers(tmp_path) == []


def test_the_command(broker, produced, tmp_path):
    output = tmp_path / "appendtime"
    result = subprocess.run(
        [
            *export_command(),
            "--topic",
            APPEND_TIME_TOPIC,
            "--bootstrap",
            broker.bootstrap,
            "--output",
            str(output),
            "--format",
            "json",
            "--master",
            "local[1]",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    assert f"exported 20 records of topic {APPEND_TIME_TOPIC} to {output} (json)" in result.stdout
    assert "0..19" in result.stdout
    # The time is the command's, Spark's start-up included (it is most of a small export's) and named.
    timed = re.search(r"\) in (\d+\.\d) s \(.*records/s; Spark's start-up (\d+\.\d) s of it\)", result.stdout)
    assert timed is not None, result.stdout
    assert float(timed.group(1)) >= float(timed.group(2)) > 0
    assert f"topic {APPEND_TIME_TOPIC}, 1 partitions, 20 offsets" in result.stderr
    lines = [json.loads(line) for path in glob.glob(str(output / "part-*.json")) for line in open(path)]
    assert sorted(r["offset"] for r in lines) == list(range(20))
    assert leftovers(tmp_path) == []


BAD_INPUT = {
    "unknown topic in the data dir": (
        ["--topic", "nope", "--data-dir", "{data_dir}"],
        "topic 'nope' does not exist in data dir",
    ),
    "unknown topic on the broker": (
        ["--topic", "nope", "--bootstrap", "{bootstrap}"],
        "topic 'nope' does not exist on the broker",
    ),
    "missing data dir": (["--topic", TOPIC, "--data-dir", "{tmp}/missing"], "data dir {tmp}/missing does not exist"),
    "not a log dir": (["--topic", TOPIC, "--data-dir", "{tmp}"], "data dir {tmp} is not a Kafka or trafka log dir"),
    "unreachable broker": (
        ["--topic", TOPIC, "--bootstrap", "127.0.0.1:9", "-o", "kafka.bootstrap.timeout.ms=1000"],
        "cannot reach a broker at 127.0.0.1:9",
    ),
    "offsets that are not JSON": (
        ["--topic", TOPIC, "--data-dir", "{data_dir}", "--starting-offsets", '{{"records":'],
        "startingOffsets must be earliest, latest or JSON",
    ),
    "offsets missing partitions": (
        ["--topic", TOPIC, "--data-dir", "{data_dir}", "--ending-offsets", '{{"records":{{"0":3}}}}'],
        "endingOffsets misses partitions [1, 2] of topic 'records'",
    ),
    "offsets past the end": (
        [
            "--topic",
            TOPIC,
            "--bootstrap",
            "{bootstrap}",
            "--starting-offsets",
            '{{"records":{{"0":1,"1":99999,"2":0}}}}',
        ],
        "startingOffsets 99999 of records-1 is past its log end offset",
    ),
    "output that exists": (
        ["--topic", TOPIC, "--data-dir", "{data_dir}", "--output", "{tmp}"],
        "output {tmp} already exists",
    ),
    "a bad master": (
        ["--topic", TOPIC, "--data-dir", "{data_dir}", "--master", "bogus"],
        "--master 'bogus' is not a Spark",
    ),
    "an option out of range": (
        ["--topic", TOPIC, "--data-dir", "{data_dir}", "-o", "minPartitions=0"],
        "minPartitions must be positive",
    ),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input(broker, produced, tmp_path, case):
    argv, message = BAD_INPUT[case]
    values = {"data_dir": broker.data_dir, "bootstrap": broker.bootstrap, "tmp": str(tmp_path)}
    argv = [a.format(**values) for a in argv]
    output = tmp_path / "out"
    if "--output" not in argv:
        argv += ["--output", str(output)]
    before = sorted(os.listdir(tmp_path))
    result = subprocess.run([*export_command(), *argv], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("trafka export: ")
    assert message.format(**values) in result.stderr
    assert sorted(os.listdir(tmp_path)) == before
