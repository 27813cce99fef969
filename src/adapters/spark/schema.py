"""The rows a topic partition turns into: Spark's Kafka source schema, column by column.

Spark's `kafka` source reads `key binary, value binary, topic string, partition int, offset long,
timestamp timestamp, timestampType int`, plus `headers array<struct<key string, value binary>>` with
`includeHeaders=true` (null for a record without headers, as Spark's KafkaRecordToRowConverter
does). Every field is nullable there, so here too.

Records are gathered into Arrow columns (`RecordColumns`) and handed to Spark as `pyarrow.RecordBatch`
objects, which skips PySpark's per-row conversion of tuples.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

HEADERS_TYPE = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))

_BASE_FIELDS = [
    StructField("key", BinaryType()),
    StructField("value", BinaryType()),
    StructField("topic", StringType()),
    StructField("partition", IntegerType()),
    StructField("offset", LongType()),
    StructField("timestamp", TimestampType()),
    StructField("timestampType", IntegerType()),
]

_ARROW_HEADERS = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
_ARROW_FIELDS = [
    pa.field("key", pa.binary()),
    pa.field("value", pa.binary()),
    pa.field("topic", pa.string()),
    pa.field("partition", pa.int32()),
    pa.field("offset", pa.int64()),
    pa.field("timestamp", pa.timestamp("us", tz="UTC")),
    pa.field("timestampType", pa.int32()),
]


def kafka_schema(include_headers: bool) -> StructType:
    """Spark's Kafka source schema, with the headers column when `include_headers`."""
    fields = list(_BASE_FIELDS)
    if include_headers:
        fields.append(StructField("headers", HEADERS_TYPE))
    return StructType(fields)


def arrow_schema(include_headers: bool) -> pa.Schema:
    """The same schema as Arrow types, as PySpark converts `kafka_schema` (timestamps in UTC)."""
    fields = list(_ARROW_FIELDS)
    if include_headers:
        fields.append(pa.field("headers", _ARROW_HEADERS))
    return pa.schema(fields)


Header = tuple[str, "bytes | None"]


class RecordColumns:
    """Records of one topic partition, gathered column by column until `take_batch`."""

    def __init__(self, topic: str, partition: int, include_headers: bool) -> None:
        self.topic = topic
        self.partition = partition
        self.include_headers = include_headers
        self._schema = arrow_schema(include_headers)
        self._clear()

    def _clear(self) -> None:
        self.keys: list[bytes | None] = []
        self.values: list[bytes | None] = []
        self.offsets: list[int] = []
        self.timestamps: list[int] = []  # milliseconds since the epoch, as Kafka stores them
        self.timestamp_types: list[int] = []
        self.headers: list[list[Header] | None] = []

    def __len__(self) -> int:
        return len(self.offsets)

    def append(
        self,
        offset: int,
        timestamp_ms: int,
        timestamp_type: int,
        key: bytes | None,
        value: bytes | None,
        headers: list[Header] | None,
    ) -> None:
        self.offsets.append(offset)
        self.timestamps.append(timestamp_ms)
        self.timestamp_types.append(timestamp_type)
        self.keys.append(key)
        self.values.append(value)
        if self.include_headers:
            self.headers.append(headers or None)

    def take_batch(self) -> pa.RecordBatch:
        """The gathered records as one Arrow batch; the columns start empty again."""
        count = len(self.offsets)
        millis = pa.array(self.timestamps, pa.int64())
        columns = [
            pa.array(self.keys, pa.binary()),
            pa.array(self.values, pa.binary()),
            pa.array([self.topic] * count, pa.string()),
            pa.array([self.partition] * count, pa.int32()),
            pa.array(self.offsets, pa.int64()),
            pc.multiply(millis, 1000).cast(pa.timestamp("us", tz="UTC")),
            pa.array(self.timestamp_types, pa.int32()),
        ]
        if self.include_headers:
            columns.append(pa.array(self.headers, _ARROW_HEADERS))
        self._clear()
        return pa.RecordBatch.from_arrays(columns, schema=self._schema)
