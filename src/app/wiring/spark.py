"""Wiring the Spark adapter to the filesystem store: a read-only log dir reader, and a session.

The Spark adapter declares the `LogDirReader` port and cannot import the filesystem adapter; this
module binds the filesystem adapter's read-only view (`trafka.adapters.filesystem.read_only`) into the data
source Spark pickles to executors: `TrafkaSource.log_dir_opener()` returns the module-level
`open_log_dir`, which executors import here.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator

import crc32c

from trafka.adapters.filesystem.layout import DataDirError
from trafka.adapters.filesystem.read_only import ReadOnlyLogDir
from trafka.adapters.spark import SourceError, TrafkaDataSource
from trafka.adapters.spark.logdir import LogDirOpener


class _SparkLogDir:
    """The read-only log dir as the Spark adapter's `LogDirReader`: its errors become `SourceError`s."""

    def __init__(self, path: str) -> None:
        self.path = path
        with _as_source_errors():
            self._reader = ReadOnlyLogDir(path, crc32c.crc32c)

    def partition_count(self, topic: str) -> int | None:
        with _as_source_errors():
            return self._reader.partition_count(topic)

    def log_start_offset(self, topic: str, partition: int) -> int:
        with _as_source_errors():
            return self._reader.log_start_offset(topic, partition)

    def log_end_offset(self, topic: str, partition: int) -> int:
        with _as_source_errors():
            return self._reader.log_end_offset(topic, partition)

    def batches(self, topic: str, partition: int, offset: int) -> Iterator[bytes]:
        with _as_source_errors():
            yield from self._reader.batches(topic, partition, offset)

    def close(self) -> None:
        self._reader.close()


@contextlib.contextmanager
def _as_source_errors() -> Iterator[None]:
    try:
        yield
    except DataDirError as exc:
        raise SourceError(str(exc)) from None


def open_log_dir(path: str) -> _SparkLogDir:
    """The log dir opener handed to Spark: module-level, so executors import it by name."""
    return _SparkLogDir(path)


class TrafkaSource(TrafkaDataSource):
    """The `trafka` data source with the filesystem store's reader wired in for `data_dir`."""

    @classmethod
    def log_dir_opener(cls) -> LogDirOpener:
        return open_log_dir


def register(spark) -> None:
    """Make `spark.read.format("trafka")` and `spark.readStream.format("trafka")` available."""
    spark.dataSource.register(TrafkaSource)


_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex
logger.spark.name = org.apache.spark
logger.spark.level = error
"""
# Spark prints a notice at startup unless the level of the logger configured for its classes equals
# the root level: hence the org.apache.spark logger, at the root's level.


def _log4j2_file() -> str:
    """A log4j2 configuration that lets only errors through, removed when the process exits."""
    fd, path = tempfile.mkstemp(prefix="trafka-log4j2-", suffix=".properties")
    with os.fdopen(fd, "w") as f:
        f.write(_LOG4J2)
    atexit.register(os.remove, path)
    return path


def build_session(master: str = "local[*]", app_name: str = "trafka"):
    """A local SparkSession for trafka: Python workers run this interpreter, everything binds to the
    loopback address, timestamps are UTC, the JVM logs only errors, and `trafka` is registered.

    If a session is already running it is reused as it is (with `trafka` registered on it).
    """
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    if SparkSession.getActiveSession() is None:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        builder = builder.config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{_log4j2_file()}")
    spark = (
        builder.master(master)
        .appName(app_name)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark
