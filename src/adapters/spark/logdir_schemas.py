"""A data dir's own `_schemas` topic as the registry of a typed read (no `schemaRegistry` option).

The broker keeps its Schema Registry in `_schemas` (ADR 21), so a data dir carries the schemas its
topics were written with. This replays that topic read-only through the same `LogDirReader` the
read uses, applying each entry with the domain's `SchemaRegistry` rules (soft and hard deletes,
versions, ids), and answers the two questions a `ColumnDecoder` asks: the subject's latest schema,
and a schema by id. No schema format is parsed here: the decoder parses what it is given.

It is pickled to executors with what the driver replayed; an id the replay has not seen (written
after the query started) makes it read the entries added since, once per unknown id.
"""

from __future__ import annotations

import logging

import attrs

from trafka.domain.batch import BatchHeader
from trafka.domain.schemas import RegistryEntry, RegistryError, SchemaRegistry

from .errors import SourceError
from .logdir import LogDirOpener
from .records import append_batch
from .schema import RecordColumns

log = logging.getLogger("trafka.spark")

SCHEMAS_TOPIC = "_schemas"


@attrs.define
class LogDirSchemas:
    data_dir: str
    open_log_dir: LogDirOpener
    _registry: SchemaRegistry = attrs.field(factory=lambda: SchemaRegistry({}))
    _next_offset: int = 0

    def latest(self, subject: str) -> tuple[str, str]:
        """(schemaType, schema text) of the subject's latest version that is not deleted."""
        self._catch_up()
        try:
            found = self._registry.version(subject, -1)
        except RegistryError:
            raise SourceError(
                f"subject {subject!r} is not in the {SCHEMAS_TOPIC} topic of data dir {self.data_dir} "
                "(set schemaRegistry to read schemas from a registry)"
            ) from None
        return found.schema.schema_type.value, found.schema.text

    def by_id(self, schema_id: int) -> tuple[str, str]:
        try:
            found = self._registry.schema_by_id(schema_id)
        except RegistryError:
            self._catch_up()
            try:
                found = self._registry.schema_by_id(schema_id)
            except RegistryError:
                raise SourceError(f"schema id {schema_id} is not in the {SCHEMAS_TOPIC} topic of data dir {self.data_dir}") from None
        return found.schema.schema_type.value, found.schema.text

    def _catch_up(self) -> None:
        """Apply the entries of `_schemas` past the last one applied (unreadable ones are skipped)."""
        reader = self.open_log_dir(self.data_dir)
        try:
            if reader.partition_count(SCHEMAS_TOPIC) is None:
                raise SourceError(
                    f"data dir {self.data_dir} has no {SCHEMAS_TOPIC} topic: no schema was registered on "
                    "its broker (set schemaRegistry to read schemas from a registry)"
                )
            start = max(self._next_offset, reader.log_start_offset(SCHEMAS_TOPIC, 0))
            end = reader.log_end_offset(SCHEMAS_TOPIC, 0)
            columns = RecordColumns(SCHEMAS_TOPIC, 0, False)
            if start < end:
                for batch in reader.batches(SCHEMAS_TOPIC, 0, start):
                    if BatchHeader.parse(batch).base_offset >= end:
                        break
                    append_batch(batch, columns, start, end)
        finally:
            reader.close()
        if len(columns):
            rows = columns.take_batch()
            for offset, key, value in zip(
                rows.column("offset").to_pylist(), rows.column("key").to_pylist(), rows.column("value").to_pylist()
            ):
                if key is None:
                    continue
                try:
                    self._registry.apply(RegistryEntry.from_json(key, value))
                except (ValueError, KeyError, TypeError) as exc:
                    log.warning("%s offset %d is not a registry record (%s); skipped", SCHEMAS_TOPIC, offset, exc)
        self._next_offset = max(self._next_offset, end)
