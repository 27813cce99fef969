"""The `_schemas` topic as the registry of a typed read with no `schemaRegistry` option.

The broker keeps its Schema Registry in `_schemas` (ADR 21), so a data dir carries the schemas its
topics were written with, and a broker serves them as records of that topic. `TopicSchemas` replays
the topic read-only through a source of this adapter, the `LogDirSource` of a data dir or the
`BrokerSource` of a running broker (Fetch over the Kafka protocol), the same readers a read uses. It
applies each entry with the domain's `SchemaRegistry` rules (soft and hard deletes, versions, ids)
and answers the two questions a `ColumnDecoder` asks: the subject's latest schema, and a schema by
id. No schema format is parsed here: the decoder parses what it is given.

It is pickled to executors with what the driver replayed and a way to open its source again (no
open file or connection); an id the replay has not seen (written after the query started) makes it
read the entries added since, once per unknown id.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping

import attrs

from trafka.domain.schema_registry import RegistryEntry, RegistryError, SchemaRegistry

from .broker import BrokerSource
from .errors import SourceError
from .logdir import LogDirOpener, LogDirSource
from .ranges import OffsetRange

log = logging.getLogger("trafka.spark")

SCHEMAS_TOPIC = "_schemas"
_HINT = "(set schemaRegistry to read schemas from a registry)"

SourceOpener = Callable[[], LogDirSource | BrokerSource]


def log_dir_schemas(data_dir: str, open_log_dir: LogDirOpener) -> TopicSchemas:
    """The `_schemas` topic of a data dir, read through its `LogDirReader`."""
    return TopicSchemas(f"data dir {data_dir}", functools.partial(_open_log_dir_source, open_log_dir, data_dir))


def broker_schemas(bootstrap: str, settings: Mapping[str, str], poll_timeout_ms: int) -> TopicSchemas:
    """The `_schemas` topic of a running broker, fetched with the read's own `kafka.*` settings."""
    return TopicSchemas(
        f"the broker at {bootstrap}", functools.partial(BrokerSource, bootstrap, dict(settings), poll_timeout_ms)
    )


def _open_log_dir_source(open_log_dir: LogDirOpener, data_dir: str) -> LogDirSource:
    return LogDirSource(open_log_dir(data_dir))


@attrs.define
class TopicSchemas:
    where: str
    open_source: SourceOpener
    _registry: SchemaRegistry = attrs.field(factory=lambda: SchemaRegistry({}))
    _next_offset: int = 0

    def latest(self, subject: str) -> tuple[str, str]:
        """(schemaType, schema text) of the subject's latest version that is not deleted."""
        self._catch_up()
        try:
            found = self._registry.version(subject, -1)
        except RegistryError:
            raise SourceError(
                f"subject {subject!r} is not in the {SCHEMAS_TOPIC} topic of {self.where} {_HINT}"
            ) from None
        return found.schema.schema_type.value, found.schema.text

    def by_id(self, schema_id: int) -> tuple[str, str]:
        """(schemaType, schema text) of the id, deleted or not; the SourceError does not repeat the id,
        which the decoder's message names."""
        try:
            found = self._registry.schema_by_id(schema_id)
        except RegistryError:
            self._catch_up()
            try:
                found = self._registry.schema_by_id(schema_id)
            except RegistryError:
                raise SourceError(f"not in the {SCHEMAS_TOPIC} topic of {self.where}") from None
        return found.schema.schema_type.value, found.schema.text

    def _catch_up(self) -> None:
        """Apply the entries of `_schemas` past the last one applied (unreadable ones are skipped)."""
        source = self.open_source()
        try:
            try:
                source.partition_count(SCHEMAS_TOPIC)
            except SourceError:
                raise SourceError(
                    f"{self.where} has no {SCHEMAS_TOPIC} topic: no schema was registered there {_HINT}"
                ) from None
            bounds = source.bounds(SCHEMAS_TOPIC, [0])[0]
            start = max(self._next_offset, bounds.log_start_offset)
            end = bounds.log_end_offset
            if start < end:
                for rows in source.read(OffsetRange(SCHEMAS_TOPIC, 0, start, end), False, False):
                    self._apply(
                        rows.column("offset").to_pylist(),
                        rows.column("key").to_pylist(),
                        rows.column("value").to_pylist(),
                    )
        finally:
            source.close()
        self._next_offset = max(self._next_offset, end)

    def _apply(self, offsets: list[int], keys: list[bytes | None], values: list[bytes | None]) -> None:
        for offset, key, value in zip(offsets, keys, values):
            if key is None:
                continue
            try:
                self._registry.apply(RegistryEntry.from_json(key, value))
            except (ValueError, KeyError, TypeError) as exc:
                log.warning("%s offset %d is not a registry record (%s); skipped", SCHEMAS_TOPIC, offset, exc)
