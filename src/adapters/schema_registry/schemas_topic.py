"""The registry's log in the `_schemas` topic, written and read through the broker's own partition.

Entries are written as an ordinary record batch (built with trafka's record batch codec, as the
broker's other internal writers build theirs, ADR 101) and appended through `ReplicaManager.produce`, the
path every producer's batch takes, so `_schemas` is a topic like any other: consumers read it, its
segments are Kafka's, and a `_schemas` topic copied from a Confluent deployment is served as is.
The topic is created on the first write as Confluent creates it (one partition, compacted), with
`flush.messages=1`, so every change is fsynced before the registry answers.

`catch_up` reads whatever the log holds past the last entry applied (everything at startup, records
produced by Kafka clients after that), so the registry always serves what `_schemas` says.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

from trafka.domain.batch import iter_batches
from trafka.domain.catalog import TopicCatalog
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.replica_manager import ReplicaManager
from trafka.domain.schema_registry import RegistryEntry, RegistryError
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.records import NewRecord, build_batch, decode_records

log = logging.getLogger("trafka.schemas")

SCHEMAS_TOPIC = "_schemas"
TOPIC_CONFIGS = {"cleanup.policy": "compact", "flush.messages": "1"}
READ_CHUNK = 1 << 20


class SchemasTopic:
    def __init__(
        self,
        catalog: TopicCatalog,
        replicas: ReplicaManager,
        clock_ms: Callable[[], int],
        appended: Callable[[TopicPartition], None] = lambda tp: None,
    ) -> None:
        self._catalog = catalog
        self._replicas = replicas
        self._clock_ms = clock_ms
        self._appended = appended
        self._tp = TopicPartition(SCHEMAS_TOPIC, 0)
        self.next_offset = 0

    def append(self, entries: list[RegistryEntry]) -> None:
        """Write entries in one batch; raises RegistryError (50001, as Confluent's store error) if not."""
        if not entries:
            return
        if self._catalog.get(SCHEMAS_TOPIC) is None:
            try:
                self._catalog.create(SCHEMAS_TOPIC, 1, -1, TOPIC_CONFIGS)
            except KafkaError as error:
                raise RegistryError(500, 50001, f"Error while creating {SCHEMAS_TOPIC}: {error.message}") from None
        now = self._clock_ms()
        batch = build_batch(
            [NewRecord(now, entry.key.to_json(), entry.value_json()) for entry in entries], self._replicas.checksum
        )
        result = self._replicas.produce(self._tp, batch, now)
        if result.error is not ErrorCode.NONE:
            raise RegistryError(
                500,
                50001,
                f"Error while writing to {SCHEMAS_TOPIC}: {result.error.name} {result.message or ''}".strip(),
            )
        self._appended(self._tp)

    def catch_up(self) -> Iterator[RegistryEntry]:
        """Entries past the last one read, in log order; unreadable records are logged and skipped."""
        marks = self._replicas.watermarks(self._tp)
        if marks is None or marks[1] <= self.next_offset:  # nothing new: the common case, kept cheap
            return
        while True:
            fetched = self._replicas.fetch(self._tp, self.next_offset, READ_CHUNK, True)
            if fetched.error is ErrorCode.OFFSET_OUT_OF_RANGE and self.next_offset < fetched.log_start_offset:
                self.next_offset = fetched.log_start_offset
                continue
            if fetched.error is not ErrorCode.NONE or not fetched.records:
                return
            records = fetched.records
            for position, header in iter_batches(records):
                batch = bytes(records[position : position + header.size])
                if header.is_control:
                    self.next_offset = header.next_offset
                    continue
                for record in decode_records(batch, self._replicas.decompress):
                    if record.offset < self.next_offset:
                        continue
                    self.next_offset = record.offset + 1
                    if record.key is None:
                        continue
                    try:
                        yield RegistryEntry.from_json(record.key, record.value)
                    except (ValueError, KeyError, TypeError) as exc:
                        log.warning(
                            "%s offset %d is not a registry record (%s); skipped", SCHEMAS_TOPIC, record.offset, exc
                        )
                self.next_offset = max(self.next_offset, header.next_offset)
