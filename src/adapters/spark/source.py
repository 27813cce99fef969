"""The `trafka` PySpark data source: `spark.read.format("trafka")` and `spark.readStream.format("trafka")`.

Spark plans on the driver and reads on executors, each side in its own Python worker: `partitions()`
opens the source, resolves offsets and returns `OffsetRange`s; `read()` opens the source again on an
executor and yields Arrow batches of one range. Everything a reader holds is pickled to get there,
including the log dir opener, so the opener must be a module-level function.

The opener comes from `log_dir_opener()`, which returns None here: this adapter cannot import the
filesystem adapter, so the composition root subclasses the source and supplies it
(`trafka.app.wiring.spark.TrafkaSource`). Without it, only `bootstrap` reads work.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.types import StructType

from .broker import BrokerSource
from .decode import RecordDecoder, record_decoder
from .errors import OptionError
from .logdir import NO_LOG_DIR_READER, LogDirOpener, LogDirSource
from .options import ReadOptions, format_options, read_options
from .ranges import (
    OffsetRange,
    current_bounds,
    flatten,
    initial_stream_offset,
    plan_batch,
    rate_limited,
    split_ranges,
    stream_offset,
)
from .schema import kafka_schema

try:  # PySpark 4.2+: admission control (maxOffsetsPerTrigger) and Trigger.AvailableNow
    from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows, SupportsTriggerAvailableNow

    _StreamBases: tuple[type, ...] = (DataSourceStreamReader, SupportsTriggerAvailableNow)
except ImportError:  # PySpark 4.0 and 4.1 call latestOffset() without arguments
    # With PySpark installed these names are classes (assignment, misc); without it, Any (unused-ignore).
    ReadAllAvailable = ReadMaxRows = None  # type: ignore[assignment,misc,unused-ignore]
    _StreamBases = (DataSourceStreamReader,)


@contextlib.contextmanager
def open_source(options: ReadOptions, open_log_dir: LogDirOpener | None) -> Iterator[LogDirSource | BrokerSource]:
    """The source the options name, closed on exit."""
    if options.data_dir is not None:
        if open_log_dir is None:
            raise OptionError(NO_LOG_DIR_READER)
        source: LogDirSource | BrokerSource = LogDirSource(open_log_dir(options.data_dir))
    else:
        assert options.bootstrap is not None
        source = BrokerSource(options.bootstrap, options.client_settings, options.poll_timeout_ms)
    try:
        yield source
    finally:
        source.close()


def plan(options: ReadOptions, open_log_dir: LogDirOpener | None) -> list[OffsetRange]:
    """The batch read's range per topic partition (empty ones included), resolved now."""
    with open_source(options, open_log_dir) as source:
        return plan_batch(source, options.topics, options.starting, options.ending, options.fail_on_data_loss)


def _read(
    options: ReadOptions,
    open_log_dir: LogDirOpener | None,
    partition: InputPartition,
    decoder: RecordDecoder | None = None,
) -> Iterator[pa.RecordBatch]:
    assert isinstance(partition, OffsetRange)
    with open_source(options, open_log_dir) as source:
        batches = source.read(partition, options.include_headers, options.fail_on_data_loss)
        if decoder is None:
            yield from batches
            return
        schema = decoder.output_schema(kafka_schema(options.include_headers))
        for batch in batches:
            yield decoder.apply(batch, schema)


class TrafkaBatchReader(DataSourceReader):
    def __init__(
        self, options: ReadOptions, open_log_dir: LogDirOpener | None, decoder: RecordDecoder | None = None
    ) -> None:
        self.options = options
        self.open_log_dir = open_log_dir
        self.decoder = decoder

    def partitions(self) -> Sequence[InputPartition]:
        ranges = plan(self.options, self.open_log_dir)
        return split_ranges(ranges, self.options.min_partitions, self.options.max_records_per_partition)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return _read(self.options, self.open_log_dir, partition, self.decoder)


class TrafkaStreamReader(*_StreamBases):  # type: ignore[misc]  # bases chosen at import, by PySpark version
    """Micro-batches over Spark's Kafka offsets, `{"topic": {"partition": next offset}}`.

    Partitions that appear while the stream runs are read from their log start, as Spark does.
    """

    def __init__(
        self, options: ReadOptions, open_log_dir: LogDirOpener | None, decoder: RecordDecoder | None = None
    ) -> None:
        self.options = options
        self.open_log_dir = open_log_dir
        self.decoder = decoder
        self._previous: dict | None = None  # what latestOffset last returned (PySpark 4.0/4.1 give no start)
        self._available_now: dict[tuple[str, int], int] | None = None

    def initialOffset(self) -> dict:
        with open_source(self.options, self.open_log_dir) as source:
            return initial_stream_offset(
                source, self.options.topics, self.options.starting, self.options.fail_on_data_loss
            )

    def getDefaultReadLimit(self):
        if self.options.max_offsets_per_trigger is not None:
            return ReadMaxRows(self.options.max_offsets_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Trigger.AvailableNow: read up to the offsets current now, then stop."""
        with open_source(self.options, self.open_log_dir) as source:
            bounds = current_bounds(source, self.options.topics)
        self._available_now = {tp: b.log_end_offset for tp, b in bounds.items()}

    def latestOffset(self, start: dict | None = None, limit: object = None) -> dict:
        with open_source(self.options, self.open_log_dir) as source:
            bounds = current_bounds(source, self.options.topics)
        if start is None:
            start = self._previous if self._previous is not None else self.initialOffset()
        begin = flatten(start)
        for tp, b in bounds.items():
            begin.setdefault(tp, b.log_start_offset)
        latest = {tp: b.log_end_offset for tp, b in bounds.items()}
        if self._available_now is not None:
            latest = {tp: min(end, self._available_now.get(tp, begin[tp])) for tp, end in latest.items()}
        if ReadMaxRows is not None and isinstance(limit, ReadMaxRows):
            cap: int | None = limit.max_rows
        elif limit is None:
            cap = self.options.max_offsets_per_trigger
        else:
            cap = None
        end = stream_offset(rate_limited(begin, latest, cap))
        self._previous = end
        return end

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        begin, until = flatten(start), flatten(end)
        missing = {topic for (topic, p) in until if (topic, p) not in begin}
        if missing:
            with open_source(self.options, self.open_log_dir) as source:
                for topic in missing:
                    partitions = [p for (t, p) in until if t == topic and (t, p) not in begin]
                    for p, b in source.bounds(topic, partitions).items():
                        begin[(topic, p)] = b.log_start_offset
        ranges = [OffsetRange(t, p, begin[(t, p)], u) for (t, p), u in sorted(until.items()) if u > begin[(t, p)]]
        return split_ranges(ranges, self.options.min_partitions, self.options.max_records_per_partition)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return _read(self.options, self.open_log_dir, partition, self.decoder)

    def commit(self, end: dict) -> None:
        """Nothing to do: the source keeps no state between micro-batches."""


def _include_headers(options: Mapping[str, str]) -> bool:
    raw = {k.lower(): v for k, v in options.items()}.get("includeheaders", "false")
    if raw.strip().lower() not in ("true", "false"):
        raise OptionError(f"includeHeaders must be true or false, got {raw!r}")
    return raw.strip().lower() == "true"


class TrafkaDataSource(DataSource):
    """Format `trafka`: a topic's records with Spark's Kafka source schema."""

    @classmethod
    def name(cls) -> str:
        return "trafka"

    @classmethod
    def log_dir_opener(cls) -> LogDirOpener | None:
        """The function that opens a data dir read-only; the composition root's subclass supplies it."""
        return None

    def _decoder(self) -> RecordDecoder | None:
        """The keyFormat/valueFormat decoder (asks the registry for the latest schemas), or None."""
        given = {key.lower(): value.strip().lower() for key, value in self.options.items()}
        if given.get("keyformat", "raw") == "raw" and given.get("valueformat", "raw") == "raw":
            return None
        options = format_options(self.options)
        return record_decoder(options, options.topics, self.log_dir_opener())

    def schema(self) -> StructType:
        kafka = kafka_schema(_include_headers(self.options))
        decoder = self._decoder()
        return kafka if decoder is None else decoder.output_schema(kafka)

    def _check_schema(self, schema: StructType) -> None:
        if schema != self.schema():
            raise OptionError("the trafka source has a fixed schema (Spark's Kafka source schema); do not set one")

    def reader(self, schema: StructType) -> DataSourceReader:
        self._check_schema(schema)
        return TrafkaBatchReader(read_options(self.options, streaming=False), self.log_dir_opener(), self._decoder())

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        self._check_schema(schema)
        # The decoder, and so the columns' types, are fixed here, at query start, from the latest schemas.
        return TrafkaStreamReader(read_options(self.options, streaming=True), self.log_dir_opener(), self._decoder())
