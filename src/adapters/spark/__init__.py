"""Topic partitions as Spark DataFrames: the `trafka` PySpark data source (batch and streaming).

Rows have Spark's Kafka source schema. Two sources: `data_dir` reads segment files through a
`LogDirReader` the composition root supplies, `bootstrap` fetches from a running broker. Needs the
`spark` extra (PySpark 4, pyarrow).
"""

from .errors import OptionError, SourceError
from .logdir import LogDirOpener, LogDirReader
from .options import OffsetSpec, ReadOptions, parse_offsets, read_options
from .ranges import OffsetRange, split_ranges
from .schema import arrow_schema, kafka_schema
from .source import TrafkaDataSource, plan

__all__ = [
    "LogDirOpener",
    "LogDirReader",
    "OffsetRange",
    "OffsetSpec",
    "OptionError",
    "ReadOptions",
    "SourceError",
    "TrafkaDataSource",
    "arrow_schema",
    "kafka_schema",
    "parse_offsets",
    "plan",
    "read_options",
    "split_ranges",
]
