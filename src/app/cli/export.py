"""`trafka export`: write a topic's records to Parquet, JSON, CSV or ORC files with Spark.

    trafka export --topic T (--data-dir D | --bootstrap HOST:PORT) --output PATH
                  [--format parquet|json|csv|orc] [--starting-offsets S] [--ending-offsets E]
                  [--no-headers] [--master local[*]] [-o OPTION=VALUE ...]
                  [--value-format raw|avro|json|protobuf] [--key-format raw|avro|json|protobuf] [--schema-registry URL]

How it goes:

1. Everything that can be checked before Spark starts is checked, each failure a one-line message
   and exit status 2: the output must not exist and its parent must; the options must parse; the
   source must open (the data dir is a log dir, the broker answers) and know the topic; the offsets
   must lie within each partition's log. That last step is the plan: an offset range per partition.
2. Spark reads exactly the planned ranges (passed as JSON offsets, so a log growing meanwhile does not
   change what is exported) with the `trafka` data source, in about three splits per core, and writes
   into a hidden temporary directory beside the output, showing progress on stderr.
3. Only a complete write is renamed to the output; on any failure (exit status 1) or interrupt the
   temporary directory is removed, so nothing partial is ever left at the output path.
4. A summary: records per partition, the offsets read and those found, the output.

Rows have Spark's Kafka source schema, headers included unless `--no-headers`; with
`--value-format avro|json|protobuf` (or `--key-format`) that column holds the decoded record, typed by its
subject's latest schema in the registry at `--schema-registry` (by default the `_schemas` topic of the
broker or data dir read; protobuf needs the URL) (Parquet, JSON and ORC only). CSV cannot hold
binary or array columns, so there `key`, `value` and header values are base64 text, `headers` is a
JSON array of {"key", "value"} objects (empty when a record has none), `timestamp` is ISO 8601 in UTC,
and a null is an empty field while an empty value is `""`. JSON holds binary as base64 too (Spark's
JSON writer) and writes nulls explicitly.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from typing import Any

import attrs

FORMATS = ("parquet", "json", "csv", "orc")
_MASTER = re.compile(r"local(\[(\d+|\*)(,\d+)?\])?|(spark|k8s)://\S+|yarn")


class ExportError(Exception):
    """Bad input, found before anything is written (exit status 2)."""


def add_export_parser(subcommands: Any) -> argparse.ArgumentParser:
    """Add `export` to the subcommands of `trafka`'s parser (`trafka.app.cli.main.build_parser`)."""
    export = subcommands.add_parser(
        "export",
        help="write a topic's records to Parquet, JSON, CSV or ORC files with Spark",
        description="Write a topic's records, with Spark's Kafka source schema, to files (needs the spark extra).",
    )
    export.add_argument("--topic", required=True, help="the topic to export")
    source = export.add_mutually_exclusive_group(required=True)
    source.add_argument("--data-dir", help="read segment files from this log dir (a broker may be running on it)")
    source.add_argument("--bootstrap", metavar="HOST:PORT", help="read from a running broker")
    export.add_argument("--output", required=True, help="directory to create; must not exist")
    export.add_argument("--format", choices=FORMATS, default="parquet", help="file format (default parquet)")
    export.add_argument(
        "--starting-offsets",
        default="earliest",
        help='earliest (default) or JSON per partition, e.g. \'{"T":{"0":23,"1":-2}}\' (-2 earliest)',
    )
    export.add_argument(
        "--ending-offsets",
        default="latest",
        help='latest (default) or JSON per partition, e.g. \'{"T":{"0":50,"1":-1}}\' (-1 latest), exclusive',
    )
    export.add_argument("--no-headers", action="store_true", help="leave out the headers column")
    for column in ("value", "key"):
        export.add_argument(
            f"--{column}-format",
            choices=("raw", "avro", "json", "protobuf"),
            default="raw",
            help=f"raw bytes (default), or the {column} decoded with its subject's latest schema (typed columns)",
        )
    export.add_argument(
        "--schema-registry",
        metavar="URL",
        help="the Schema Registry for --value-format/--key-format (default: the _schemas topic of the broker "
        "or data dir read; protobuf needs the URL)",
    )
    export.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    export.add_argument(
        "-o",
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="another option of the trafka data source, e.g. maxRecordsPerPartition=200000 or "
        "kafka.request.timeout.ms=5000 (repeatable)",
    )
    return export


def run_export(args: argparse.Namespace) -> int:
    """Run `trafka export`; returns the exit status (0 done, 1 failed while writing, 2 bad input)."""
    started = time.monotonic()
    try:
        plan = _prepare(args)
    except ExportError as exc:
        print(f"trafka export: {exc}", file=sys.stderr)
        return 2
    try:
        _write(plan, started)
    except KeyboardInterrupt:
        print("trafka export: interrupted; nothing was written", file=sys.stderr)
        return 130
    except ExportError as exc:
        print(f"trafka export: {exc}", file=sys.stderr)
        return 1
    return 0


# -- checking and planning (no Spark yet) ------------------------------------------------------------


@attrs.frozen
class _Plan:
    args: argparse.Namespace
    output: str  # absolute
    options: dict[str, str]  # the data source's, offsets resolved to the planned ranges
    ranges: list  # OffsetRange per partition, empty ones included


def _prepare(args: argparse.Namespace) -> _Plan:
    if not _MASTER.fullmatch(args.master):
        raise ExportError(f"--master {args.master!r} is not a Spark master URL (local[*], local[4], spark://host:7077)")
    output = os.path.abspath(args.output)
    if os.path.lexists(output):
        raise ExportError(f"output {output} already exists; choose a new path")
    parent = os.path.dirname(output)
    if not os.path.isdir(parent):
        raise ExportError(f"the directory of output {output} does not exist: {parent}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ExportError(f"output {output} cannot be created: {parent} is not writable")
    try:
        from trafka.adapters.spark import OptionError, SourceError, plan, read_options
        from trafka.adapters.spark.decode import record_decoder
        from trafka.adapters.spark.options import format_options

        from ..wiring.spark import open_log_dir
    except ImportError as exc:
        raise ExportError(f"export needs the spark extra (pip install 'trafka[spark]'): {exc}") from None

    options = {"topic": args.topic, "includeHeaders": "false" if args.no_headers else "true"}
    if args.data_dir is not None:
        options["data_dir"] = args.data_dir
    else:
        options["bootstrap"] = args.bootstrap
    for item in args.option:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ExportError(f"--option {item!r} is not NAME=VALUE")
        options[name.strip()] = value
    options["startingOffsets"] = args.starting_offsets
    options["endingOffsets"] = args.ending_offsets
    if args.value_format != "raw" or args.key_format != "raw":
        if args.format == "csv":
            raise ExportError(
                "--format csv cannot hold typed columns; use parquet, json or orc with --value-format/--key-format"
            )
        options.update(valueFormat=args.value_format, keyFormat=args.key_format)
        if args.schema_registry is not None:
            options["schemaRegistry"] = args.schema_registry
    try:
        read = read_options(options, streaming=False)
        ranges = plan(read, open_log_dir)
        record_decoder(format_options(options), read.topics, open_log_dir)  # the schemas are there
    except (OptionError, SourceError) as exc:
        raise ExportError(str(exc)) from None
    # Spark reads exactly the planned ranges, whatever is appended in the meantime
    topic = args.topic
    options["startingOffsets"] = _offsets_json(topic, {r.partition: r.from_offset for r in ranges})
    options["endingOffsets"] = _offsets_json(topic, {r.partition: r.until_offset for r in ranges})
    return _Plan(args, output, options, ranges)


def _offsets_json(topic: str, offsets: dict[int, int]) -> str:
    return json.dumps({topic: {str(p): o for p, o in sorted(offsets.items())}})


# -- writing -----------------------------------------------------------------------------------------


def _write(plan: _Plan, started: float) -> None:
    """Write the planned ranges; the summary's time runs from `started` (the command's start), so that
    it includes Spark's start-up, which it also names."""
    from pyspark.sql import Observation, SparkSession
    from pyspark.sql import functions as F

    from ..wiring.spark import build_session

    args = plan.args
    total = sum(r.size for r in plan.ranges)
    print(
        f"trafka export: topic {args.topic}, {len(plan.ranges)} partitions, {total:,} offsets "
        f"-> {plan.output} ({args.format})",
        file=sys.stderr,
    )
    owns_session = SparkSession.getActiveSession() is None
    starting = time.monotonic()
    try:
        spark = build_session(args.master, "trafka export")
    except Exception as exc:  # no Java, a bad --master: the JVM's own words
        raise ExportError(f"cannot start Spark with master {args.master}: {_one_line(exc)}") from None
    startup = time.monotonic() - starting
    temporary = os.path.join(
        os.path.dirname(plan.output), f".{os.path.basename(plan.output)}.trafka-export-{uuid.uuid4().hex[:12]}"
    )
    progress = _Progress(spark, sys.stderr)
    try:
        options = dict(plan.options)
        # several splits per core, so the last ones to finish are short and no core idles for long
        options.setdefault("minPartitions", str(3 * spark.sparkContext.defaultParallelism))
        frame = spark.read.format("trafka").options(**options).load()
        partitions = [r.partition for r in plan.ranges]
        observation = Observation("trafka_export")
        frame = frame.observe(observation, *_partition_stats(F, partitions))
        writer = _encoded(frame, args.format, F).write.format(args.format)
        if args.format == "csv":
            writer = writer.option("header", "true")
        elif args.format == "json":
            writer = writer.option("ignoreNullFields", "false")
        progress.start()
        writer.save(temporary)
        progress.stop()
        stats = observation.get
        if os.path.lexists(plan.output):
            raise ExportError(f"output {plan.output} appeared while exporting; the export was discarded")
        os.rename(temporary, plan.output)
    except BaseException as exc:
        progress.stop()
        shutil.rmtree(temporary, ignore_errors=True)
        if isinstance(exc, Exception) and not isinstance(exc, ExportError):
            raise ExportError(f"export failed, nothing was written: {_one_line(exc)}") from None
        raise
    finally:
        if owns_session:
            spark.stop()
    _print_summary(plan, stats, time.monotonic() - started, startup)


def _partition_stats(F: Any, partitions: list[int]) -> list:
    """Rows and first/last offset per partition, gathered while the rows are written (one pass)."""
    columns = [F.count(F.lit(1)).alias("rows")]
    for p in partitions:
        here = F.col("partition") == p
        columns += [
            F.count(F.when(here, 1)).alias(f"rows_{p}"),
            F.min(F.when(here, F.col("offset"))).alias(f"first_{p}"),
            F.max(F.when(here, F.col("offset"))).alias(f"last_{p}"),
        ]
    return columns


def _encoded(frame: Any, fmt: str, F: Any) -> Any:
    """CSV holds only text and numbers: binary as base64, headers as a JSON array, time as ISO 8601."""
    if fmt != "csv":
        return frame
    columns = [
        F.base64("key").alias("key"),
        F.base64("value").alias("value"),
        "topic",
        "partition",
        "offset",
        F.date_format("timestamp", "yyyy-MM-dd'T'HH:mm:ss.SSSXXX").alias("timestamp"),
        "timestampType",
    ]
    if "headers" in frame.columns:
        encoded = F.transform("headers", lambda h: F.struct(h["key"].alias("key"), F.base64(h["value"]).alias("value")))
        columns.append(F.to_json(encoded, {"ignoreNullFields": "false"}).alias("headers"))
    return frame.select(*columns)


def _one_line(exc: BaseException) -> str:
    """The useful line of an error raised inside Spark (a Python worker's traceback, or a JVM one)."""
    text = str(exc)
    found = re.findall(r"(?:SourceError|OptionError): (.+)", text)
    if found:
        return found[-1].strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    line = lines[0] if lines else type(exc).__name__
    return line if len(line) <= 300 else line[:297] + "..."


def _print_summary(plan: _Plan, stats: dict, seconds: float, startup: float) -> None:
    rows = stats["rows"]
    rate = rows / seconds if seconds > 0 else 0.0
    print(
        f"exported {rows:,} records of topic {plan.args.topic} to {plan.output} ({plan.args.format}) "
        f"in {seconds:.1f} s ({rate:,.0f} records/s; Spark's start-up {startup:.1f} s of it)"
    )
    print(f"  {'partition':>9}  {'records':>12}  {'offsets read':<24}  first..last")
    for r in plan.ranges:
        p = r.partition
        found = f"{stats[f'first_{p}']}..{stats[f'last_{p}']}" if stats[f"rows_{p}"] else "-"
        print(f"  {p:>9}  {stats[f'rows_{p}']:>12,}  {f'[{r.from_offset}, {r.until_offset})':<24}  {found}")


class _Progress:
    """Spark's task counts for the running write, on one rewritten line (a terminal) or on change."""

    def __init__(self, spark: Any, stream: Any) -> None:
        self._tracker = spark.sparkContext.statusTracker()
        self._stream = stream
        self._tty = stream.isatty()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="trafka-export-progress", daemon=True)
        self._started = 0.0
        self._last = ""

    def start(self) -> None:
        self._started = time.monotonic()
        self._thread.start()

    def stop(self) -> None:
        if not self._done.is_set():
            self._done.set()
            if self._thread.is_alive():
                self._thread.join()
            if self._tty and self._last:
                self._stream.write("\n")

    def _run(self) -> None:
        while not self._done.wait(0.5 if self._tty else 2.0):
            done = total = 0
            for stage in self._tracker.getActiveStageIds():
                info = self._tracker.getStageInfo(stage)
                if info is not None:
                    done += info.numCompletedTasks
                    total += info.numTasks
            if not total:
                continue
            line = f"  writing: {done}/{total} splits done, {time.monotonic() - self._started:.0f} s"
            if self._tty:
                self._stream.write("\r" + line)
                self._stream.flush()
            elif line.split(",")[0] != self._last.split(",")[0]:
                self._stream.write(line + "\n")
                self._stream.flush()
            self._last = line


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m trafka.app.cli.export ...`: the export command on its own."""
    parser = argparse.ArgumentParser(prog="trafka")
    add_export_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["export", *(sys.argv[1:] if argv is None else argv)])
    return run_export(args)


if __name__ == "__main__":
    sys.exit(main())
