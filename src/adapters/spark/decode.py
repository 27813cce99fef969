"""Decoding Confluent-framed keys and values (magic 0, schema id, payload) into typed columns.

The driver asks the registry (the `schemaRegistry` URL, or else the `_schemas` topic of the broker
or data dir read, `topic_schemas.py`) for the subject's latest schema (TopicNameStrategy: `<topic>-value`,
`<topic>-key`), which gives the column's Spark type; executors fetch each writer schema by the id in
the record (once per id) and decode with fastavro, resolving the writer's schema to the latest one,
so records written with older versions come out in the latest shape. JSON Schema payloads are
parsed JSON, shaped to the latest schema's type; Protobuf payloads are parsed with the latest
schema's message (`protobuf.py`; Protobuf needs the registry's URL: its decoder reads serialized
descriptors from the REST API, which turns the stored `.proto` text into them).

A record that cannot be decoded (no magic byte, an unknown id, bytes the schema cannot read, a
value of the wrong type) fails the read under `mode=FAILFAST`; under PERMISSIVE (the default, as in
Spark's readers) its column is null and `_corrupt` says why.
"""

from __future__ import annotations

import io
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Protocol

import attrs
import fastavro
import pyarrow as pa
from pyspark.sql.pandas.types import to_arrow_type
from pyspark.sql.types import DataType, StringType, StructField, StructType

from .errors import OptionError, SourceError
from .logdir import NO_LOG_DIR_READER, LogDirOpener
from .protobuf import ProtobufReader, SchemaFiles
from .topic_schemas import broker_schemas, log_dir_schemas
from .typed import avro_spark_type, conform, json_spark_type

CORRUPT = "_corrupt"
FORMATS = ("raw", "avro", "json", "protobuf")
SCHEMA_TYPES = {"avro": "AVRO", "json": "JSON", "protobuf": "PROTOBUF"}


class SchemaSource(Protocol):
    """Where a decoder finds schemas: (schemaType, schema text); raises SourceError if absent."""

    def latest(self, subject: str) -> tuple[str, str]: ...

    def by_id(self, schema_id: int) -> tuple[str, str]: ...


class RegistryClient:
    """The few reads of Confluent's REST API a reader needs, over urllib."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")

    def get(self, path: str) -> Any:
        try:
            with urllib.request.urlopen(self.url + path, timeout=30) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")
            raise SourceError(f"schema registry {self.url}{path}: HTTP {exc.code} {detail}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise SourceError(f"schema registry {self.url} unreachable: {exc}") from None

    def latest(self, subject: str) -> tuple[str, str]:
        """(schemaType, schema text) of the subject's latest version."""
        body = self.get(f"/subjects/{urllib.parse.quote(subject, safe='')}/versions/latest")
        return body.get("schemaType", "AVRO"), body["schema"]

    def by_id(self, schema_id: int) -> tuple[str, str]:
        body = self.get(f"/schemas/ids/{schema_id}")
        return body.get("schemaType", "AVRO"), body["schema"]


@attrs.define
class ColumnDecoder:
    """How one column (`key` or `value`) is decoded; pickled from the driver to executors."""

    column: str
    fmt: str
    registry: SchemaSource
    reader_schema: Any
    spark_type: DataType
    _writers: dict[int, Any] = attrs.field(factory=dict)

    @classmethod
    def for_subject(cls, column: str, fmt: str, registry: SchemaSource, subject: str) -> ColumnDecoder:
        schema_type, text = registry.latest(subject)
        if schema_type != SCHEMA_TYPES[fmt]:
            raise OptionError(f"{column}Format is {fmt} but subject {subject}'s latest schema is {schema_type}")
        if fmt == "protobuf":
            if not isinstance(registry, RegistryClient):
                raise OptionError(f"{column}Format protobuf needs the schemaRegistry option (the registry's URL)")
            latest = registry.get(f"/subjects/{urllib.parse.quote(subject, safe='')}/versions/latest?format=serialized")
            try:
                reader = ProtobufReader(SchemaFiles.fetch(registry.get, latest))
                return cls(column, fmt, registry, reader, reader.spark_type())
            except (ValueError, TypeError) as exc:
                raise OptionError(f"{column}Format protobuf: subject {subject}: {exc}") from None
        raw = json.loads(text)
        if fmt == "avro":
            parsed = fastavro.parse_schema(raw, _write_hint=False)
            try:
                return cls(column, fmt, registry, parsed, avro_spark_type(parsed))
            except ValueError as exc:
                raise OptionError(f"{column}Format avro: subject {subject}: {exc}") from None
        return cls(column, fmt, registry, raw, json_spark_type(raw))

    def decode(self, data: bytes | None) -> Any:
        """The value as its column holds it; ValueError when it cannot be decoded."""
        if data is None:
            return None
        if len(data) < 5 or data[0] != 0:
            raise ValueError("not in Confluent's wire format (magic byte 0 and a schema id)")
        schema_id = int.from_bytes(data[1:5], "big")
        if self.fmt == "protobuf":
            return conform(self.spark_type, self.reader_schema.decode(data, lambda: self._protobuf_writer(schema_id)))
        if self.fmt == "json":
            try:
                value = json.loads(data[5:])
            except ValueError as exc:
                raise ValueError(f"not JSON: {exc}") from None
            return conform(self.spark_type, value)
        writer = self._writer(schema_id)
        try:
            value = fastavro.schemaless_reader(io.BytesIO(data[5:]), writer, self.reader_schema)
        except Exception as exc:
            raise ValueError(f"schema id {schema_id}: {type(exc).__name__}: {exc}") from None
        return conform(self.spark_type, value)

    def _protobuf_writer(self, schema_id: int) -> SchemaFiles:
        client = self.registry
        assert isinstance(client, RegistryClient)
        try:
            body = client.get(f"/schemas/ids/{schema_id}?format=serialized")
            if body.get("schemaType") != "PROTOBUF":
                raise ValueError(f"schema id {schema_id} is {body.get('schemaType', 'AVRO')}, not PROTOBUF")
            return SchemaFiles.fetch(client.get, body)
        except SourceError as exc:
            raise ValueError(f"schema id {schema_id}: {exc}") from None

    def _writer(self, schema_id: int) -> Any:
        if schema_id not in self._writers:
            try:
                schema_type, text = self.registry.by_id(schema_id)
            except SourceError as exc:
                self._writers[schema_id] = ValueError(f"schema id {schema_id}: {exc}")  # asked once, not per record
            else:
                self._writers[schema_id] = (
                    fastavro.parse_schema(json.loads(text), _write_hint=False)
                    if schema_type == "AVRO"
                    else ValueError(f"schema id {schema_id} is {schema_type}, not AVRO")
                )
        writer = self._writers[schema_id]
        if isinstance(writer, ValueError):
            raise ValueError(str(writer))
        return writer


@attrs.define
class RecordDecoder:
    """The decoded columns of a read, and what to do with a record that does not decode."""

    columns: list[ColumnDecoder]
    fail_fast: bool

    def output_schema(self, kafka: StructType) -> StructType:
        types = {c.column: c.spark_type for c in self.columns}
        fields = [StructField(f.name, types.get(f.name, f.dataType), True) for f in kafka.fields]
        if not self.fail_fast:
            fields.append(StructField(CORRUPT, StringType(), True))
        return StructType(fields)

    def apply(self, batch: pa.RecordBatch, schema: StructType) -> pa.RecordBatch:
        arrays = {name: batch.column(name) for name in batch.schema.names}
        corrupt: list[str | None] = [None] * batch.num_rows
        for decoder in self.columns:
            decoded = []
            for row, data in enumerate(arrays[decoder.column].to_pylist()):
                try:
                    decoded.append(decoder.decode(data))
                except ValueError as exc:
                    if self.fail_fast:
                        raise SourceError(f"{decoder.column} of a record (mode=FAILFAST): {exc}") from None
                    decoded.append(None)
                    corrupt[row] = f"{decoder.column}: {exc}"
            arrays[decoder.column] = pa.array(decoded, to_arrow_type(decoder.spark_type, timezone="UTC"))
        if not self.fail_fast:
            arrays[CORRUPT] = pa.array(corrupt, pa.string())
        arrow = pa.schema([pa.field(f.name, to_arrow_type(f.dataType, timezone="UTC")) for f in schema.fields])
        return pa.RecordBatch.from_arrays([arrays[f.name] for f in schema.fields], schema=arrow)


def record_decoder(
    options: Any, topics: tuple[str, ...], open_log_dir: LogDirOpener | None = None
) -> RecordDecoder | None:
    """The decoder the options ask for, or None for raw keys and values (the default).

    Schemas come from `schemaRegistry`, or without it from the `_schemas` topic of the broker or data dir read."""
    formats = {"key": options.key_format, "value": options.value_format}
    if all(fmt == "raw" for fmt in formats.values()):
        return None
    registry: SchemaSource
    if options.schema_registry is not None:
        registry = RegistryClient(options.schema_registry)
    elif "protobuf" in formats.values():
        column = next(c for c, fmt in formats.items() if fmt == "protobuf")
        raise OptionError(
            f"{column}Format protobuf needs the schemaRegistry option (the registry's URL): its decoder reads "
            "the schemas' serialized descriptors from the registry's REST API"
        )
    elif options.data_dir is None:
        registry = broker_schemas(options.bootstrap, options.client_settings, options.poll_timeout_ms)
    elif open_log_dir is None:
        raise OptionError(NO_LOG_DIR_READER)
    else:
        registry = log_dir_schemas(options.data_dir, open_log_dir)
    if len(topics) != 1:
        raise OptionError(
            "keyFormat/valueFormat avro, json and protobuf read one topic (the output schema is its subject's)"
        )
    columns = [
        ColumnDecoder.for_subject(column, fmt, registry, f"{topics[0]}-{column}")
        for column, fmt in formats.items()
        if fmt != "raw"
    ]
    return RecordDecoder(columns, options.fail_fast)
