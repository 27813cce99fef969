"""The `bootstrap` source: a topic read from a running broker with Fetch requests.

kafka-python's KafkaConsumer does the wire work: Metadata for the partition count, ListOffsets for
log start and end, then `assign` + `seek` and `poll` per offset range (no consumer group, nothing
committed, no topic auto-created). The consumer decompresses batches, checks CRCs, drops control
batches and the records of the first batch that lie before the fetch offset, as Spark's Kafka source
relies on its Java consumer to do.

`kafka.*` options become consumer settings (`kafka.request.timeout.ms=5000` ->
`request_timeout_ms=5000`), typed after kafka-python's defaults, as Spark passes `kafka.*` options
to its consumer; the settings that would break a fixed-range read are refused, as Spark refuses them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pyarrow as pa
from kafka import KafkaConsumer, TopicPartition
from kafka import errors as kafka_errors

from .errors import OptionError, SourceError
from .ranges import LogBounds, OffsetRange
from .schema import RecordColumns

ROWS_PER_ARROW_BATCH = 10_000
_POLL_MS = 500
_REFUSED = {
    "group.id": "reads need no consumer group",
    "auto.offset.reset": "set startingOffsets instead",
    "enable.auto.commit": "nothing is committed",
    "key.deserializer": "keys are read as bytes",
    "value.deserializer": "values are read as bytes",
}


def consumer_settings(settings: Mapping[str, str]) -> dict[str, Any]:
    """kafka-python consumer settings from `kafka.*` options (prefix already removed)."""
    out: dict[str, Any] = {}
    for name, raw in settings.items():
        if name in _REFUSED:
            raise OptionError(f"kafka.{name} is not supported: {_REFUSED[name]}")
        key = name.replace(".", "_")
        if key not in KafkaConsumer.DEFAULT_CONFIG:
            raise OptionError(f"kafka.{name} is not a Kafka consumer setting kafka-python knows")
        default = KafkaConsumer.DEFAULT_CONFIG[key]
        try:
            if isinstance(default, bool):
                if raw.lower() not in ("true", "false"):
                    raise ValueError(raw)
                out[key] = raw.lower() == "true"
            elif isinstance(default, int) or key.endswith("_ms"):
                out[key] = float(raw) if raw.lower() == "inf" else int(raw)
            elif isinstance(default, float):
                out[key] = float(raw)
            elif default is None or isinstance(default, str):
                out[key] = raw
            else:
                raise OptionError(f"kafka.{name} cannot be given as a string option")
        except ValueError:
            raise OptionError(f"kafka.{name} must be a {type(default).__name__}, got {raw!r}") from None
    return out


class BrokerSource:
    def __init__(self, bootstrap: str, settings: Mapping[str, str], poll_timeout_ms: int) -> None:
        self.bootstrap = bootstrap
        self._poll_timeout_ms = poll_timeout_ms
        config = {
            "bootstrap_servers": [s.strip() for s in bootstrap.split(",") if s.strip()],
            "client_id": "trafka-spark",
            "group_id": None,
            "enable_auto_commit": False,
            "allow_auto_create_topics": False,
            "auto_offset_reset": "none",
            "max_poll_records": ROWS_PER_ARROW_BATCH,
            "max_partition_fetch_bytes": 8 * 1024 * 1024,  # fewer, larger fetches of a backlog
            "bootstrap_timeout_ms": 10_000,
            **consumer_settings(settings),
        }
        try:
            self._consumer = KafkaConsumer(**config)
        except kafka_errors.KafkaError as exc:
            raise SourceError(f"cannot reach a broker at {bootstrap}: {exc}") from None

    def partition_count(self, topic: str) -> int:
        partitions = self._consumer.partitions_for_topic(topic)
        if not partitions:
            raise SourceError(f"topic {topic!r} does not exist on the broker at {self.bootstrap}")
        return max(partitions) + 1

    def bounds(self, topic: str, partitions: Iterable[int]) -> Mapping[int, LogBounds]:
        tps = [TopicPartition(topic, p) for p in partitions]
        try:
            starts = self._consumer.beginning_offsets(tps)
            ends = self._consumer.end_offsets(tps)
        except kafka_errors.KafkaError as exc:
            raise SourceError(f"cannot list the offsets of {topic!r} on {self.bootstrap}: {exc}") from None
        return {tp.partition: LogBounds(starts[tp], ends[tp]) for tp in tps}

    def read(self, offsets: OffsetRange, include_headers: bool, fail_on_data_loss: bool) -> Iterator[pa.RecordBatch]:
        tp = TopicPartition(offsets.topic, offsets.partition)
        consumer = self._consumer
        consumer.assign([tp])
        consumer.seek(tp, offsets.from_offset)
        columns = RecordColumns(offsets.topic, offsets.partition, include_headers)
        until = offsets.until_offset
        position = offsets.from_offset
        idle_since = time.monotonic()
        while position < until:
            try:
                polled = consumer.poll(timeout_ms=_POLL_MS, max_records=ROWS_PER_ARROW_BATCH)
            except kafka_errors.OffsetOutOfRangeError:
                if fail_on_data_loss:
                    raise SourceError(
                        f"offset {position} of {tp.topic}-{tp.partition} is no longer on {self.bootstrap}: "
                        "records were deleted while reading (failOnDataLoss=false skips them)"
                    ) from None
                consumer.seek_to_beginning(tp)
                continue
            for record in polled.get(tp, ()):
                if record.offset >= until:
                    break
                columns.append(
                    record.offset,
                    record.timestamp,
                    record.timestamp_type,
                    record.key,
                    record.value,
                    list(record.headers) if include_headers and record.headers else None,
                )
            reached = consumer.position(tp)
            if reached > position:
                position = reached
                idle_since = time.monotonic()
            elif (time.monotonic() - idle_since) * 1000 > self._poll_timeout_ms:
                raise SourceError(
                    f"no records from {tp.topic}-{tp.partition} at offset {position} on {self.bootstrap} "
                    f"for {self._poll_timeout_ms} ms (kafkaConsumer.pollTimeoutMs)"
                )
            if len(columns) >= ROWS_PER_ARROW_BATCH:
                yield columns.take_batch()
        if len(columns):
            yield columns.take_batch()

    def close(self) -> None:
        self._consumer.close(autocommit=False)
