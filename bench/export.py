#!/usr/bin/env python3
"""Export throughput: rows/s for reading and exporting a 1,000,000-record topic through Spark.

1. Starts trafka (`python -m trafka serve`, filesystem store in a fresh temporary data dir) on a free
   loopback port, or uses `--bootstrap` + `--data-dir` of a broker already running.
2. Creates a topic (`--partitions`, default 3) and produces `--records` records with confluent-kafka:
   an 8-byte key, a 100-byte value (seeded, so the same bytes every run) and one header each.
3. Starts one local SparkSession (`--master`, default local[*]); its JVM start is reported apart.
4. For each source (`data_dir`: segment files; `bootstrap`: Fetch from the broker), `--runs` times:
   - **scan**: `spark.read.format("trafka")...write.format("noop")`, headers included: reading and
     decoding only;
   - **export**: `trafka export` in-process (`trafka.app.cli.export.run_export`) to Parquet (`--format`) in a
     temporary directory: plan, read, write, rename, summary, on the already warm JVM;
   - **command**: `trafka export` as a user runs it, a new process (`python -m trafka.app.cli.export`): Python
     and JVM start, a cold JVM's first job, and the same export, timed from outside.
   Each run's rows are checked against the records produced. The median run is reported.

Prints rows, seconds and rows/s per source and phase and a machine line; `--json` prints one JSON
object instead. Only ever talks to 127.0.0.1 (or the broker you name).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

LOOPBACK = "127.0.0.1"


def machine_line() -> str:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    import pyarrow
    import pyspark

    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()
    return (
        f"CPU: {cpu}; cores: {os.cpu_count()}; Python {platform.python_version()}; PySpark {pyspark.__version__}; "
        f"pyarrow {pyarrow.__version__}; {java[0] if java else 'java ?'}; {platform.system()} {platform.release()}"
    )


def spawn_trafka(data_dir: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "trafka", "serve", "--host", LOOPBACK, "--port", "0", "--data-dir", data_dir],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        match = re.search(r"trafka listening on (\S+):(\d+)", line)
        if match:
            import threading

            threading.Thread(target=proc.stdout.read, daemon=True).start()
            return proc, f"{LOOPBACK}:{match.group(2)}"
    raise SystemExit(f"trafka did not start (exit {proc.wait()})")


def produce(bootstrap: str, topic: str, partitions: int, records: int) -> float:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    payload = random.Random(42).randbytes(100)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "acks": 1, "batch.size": 1_000_000})
    started = time.monotonic()
    for n in range(records):
        while True:
            try:
                producer.produce(
                    topic, key=b"%08d" % n, value=payload, partition=n % partitions, headers=[("seq", b"%d" % n)]
                )
                break
            except BufferError:
                producer.poll(0.05)
        if n % 10_000 == 0:
            producer.poll(0)
    if producer.flush(120) != 0:
        raise SystemExit("not every record was delivered")
    return time.monotonic() - started


def scan(spark, options: dict[str, str]) -> tuple[int, float]:
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    observation = Observation("rows")
    started = time.monotonic()
    frame = spark.read.format("trafka").options(**options).load().observe(observation, F.count(F.lit(1)).alias("n"))
    frame.write.format("noop").mode("overwrite").save()
    return observation.get["n"], time.monotonic() - started


def export(argv: list[str]) -> tuple[int, float]:
    from trafka.app.cli.export import add_export_parser, run_export

    parser = argparse.ArgumentParser()
    add_export_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["export", *argv])
    out = io.StringIO()
    started = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        status = run_export(args)
    seconds = time.monotonic() - started
    if status != 0:
        raise SystemExit(f"export failed with status {status}")
    rows = int(re.search(r"exported ([\d,]+) records", out.getvalue()).group(1).replace(",", ""))
    return rows, seconds


def command(argv: list[str]) -> tuple[int, float]:
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "trafka.app.cli.export", *argv], capture_output=True, text=True)
    seconds = time.monotonic() - started
    if result.returncode != 0:
        raise SystemExit(f"trafka export failed with status {result.returncode}: {result.stderr}")
    rows = int(re.search(r"exported ([\d,]+) records", result.stdout).group(1).replace(",", ""))
    return rows, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--format", default="parquet", choices=("parquet", "json", "csv", "orc"))
    parser.add_argument("--sources", default="data_dir,bootstrap", help="comma-separated: data_dir, bootstrap")
    parser.add_argument("--bootstrap", help="use this running broker (with --data-dir: its log dir)")
    parser.add_argument("--data-dir", help="the running broker's log dir")
    parser.add_argument("--topic", default=f"bench-export-{int(time.time() * 1000)}")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="trafka-bench-export-")
    broker = None
    try:
        if args.bootstrap:
            bootstrap, data_dir = args.bootstrap, args.data_dir
        else:
            data_dir = os.path.join(workdir, "logdir")
            broker, bootstrap = spawn_trafka(data_dir)
        produce_seconds = produce(bootstrap, args.topic, args.partitions, args.records)

        from trafka.app.wiring.spark import build_session

        started = time.monotonic()
        spark = build_session(args.master, "trafka bench")
        session_seconds = time.monotonic() - started
        first = json.dumps({args.topic: {str(p): 100 for p in range(args.partitions)}})
        spark.read.format("trafka").options(topic=args.topic, bootstrap=bootstrap, endingOffsets=first).load().collect()

        results = {}
        for source in args.sources.split(","):
            if source == "data_dir" and not data_dir:
                continue
            options = {
                "topic": args.topic,
                "includeHeaders": "true",
                **({"data_dir": data_dir} if source == "data_dir" else {"bootstrap": bootstrap}),
            }
            source_flag = ["--data-dir", data_dir] if source == "data_dir" else ["--bootstrap", bootstrap]
            for phase in ("scan", "export", "command"):
                times = []
                for run in range(args.runs):
                    if phase == "scan":
                        rows, seconds = scan(
                            spark, {**options, "minPartitions": str(3 * spark.sparkContext.defaultParallelism)}
                        )
                    else:
                        output = os.path.join(workdir, f"{source}-{run}.{args.format}")
                        argv = ["--topic", args.topic, *source_flag, "--output", output, "--format", args.format]
                        if phase == "command":
                            rows, seconds = command([*argv, "--master", args.master])
                        else:
                            rows, seconds = export(argv)
                        shutil.rmtree(output)
                    if rows != args.records:
                        raise SystemExit(f"{source} {phase}: {rows} rows, expected {args.records}")
                    times.append(seconds)
                median = statistics.median(times)
                results[f"{source} {phase}"] = {
                    "rows": rows,
                    "seconds": round(median, 3),
                    "rows_per_s": round(rows / median),
                }
        spark.stop()
    finally:
        if broker is not None:
            os.killpg(broker.pid, signal.SIGTERM)
            broker.wait(60)
        shutil.rmtree(workdir, ignore_errors=True)

    report = {
        "records": args.records,
        "partitions": args.partitions,
        "format": args.format,
        "master": args.master,
        "runs": args.runs,
        "produce_seconds": round(produce_seconds, 2),
        "spark_session_seconds": round(session_seconds, 2),
        "results": results,
        "machine": machine_line(),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(
        f"{args.records:,} records in {args.partitions} partitions; produced in {produce_seconds:.1f} s; "
        f"SparkSession ({args.master}) started in {session_seconds:.1f} s; median of {args.runs} runs"
    )
    print(f"{'source and phase':<28} {'rows':>10} {'seconds':>8} {'rows/s':>10}")
    for name, r in results.items():
        label = name if name.endswith("scan") else f"{name} ({args.format})"
        print(f"{label:<28} {r['rows']:>10,} {r['seconds']:>8.2f} {r['rows_per_s']:>10,}")
    print(report["machine"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
