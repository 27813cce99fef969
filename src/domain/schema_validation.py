"""Broker-side schema id validation, as Confluent Server and Redpanda do it.

A topic with `confluent.value.schema.validation=true` (or `confluent.key.schema.validation`; Redpanda's
`redpanda.value.schema.id.validation` / `redpanda.key.schema.id.validation` are the same switches)
accepts a produced batch only if every record's value (key) is in Confluent's wire format, magic
byte 0 then a 4-byte big-endian schema id, and that id is registered under the subject the
TopicNameStrategy names (`<topic>-value`, `<topic>-key`) in a version that is not deleted. As in
Confluent Server the payload itself is not decoded ("no data introspection"), and a null value
(a tombstone) or a null key passes. One bad record refuses the whole batch with INVALID_RECORD and
Kafka's message for record errors (LogValidator's), naming each bad record's index in the batch and
its problem; the request's other partitions are unaffected.

This is per-record work by nature, so it runs only on topics that turn it on: the replica manager
asks `SchemaValidation.of` once per topic config mapping, and reads (and decompresses) records
only when the answer is not None. The registry comes in through the `SchemaIdLookup` port.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import attrs

from .batch_records import Buffer, Decompress, record_keys_values
from .ports import SchemaIdLookup

VALUE_VALIDATION = "confluent.value.schema.validation"
KEY_VALIDATION = "confluent.key.schema.validation"
REDPANDA_VALUE_VALIDATION = "redpanda.value.schema.id.validation"
REDPANDA_KEY_VALIDATION = "redpanda.key.schema.id.validation"

MAGIC_BYTE = 0
WIRE_HEADER_SIZE = 5


def _on(configs: Mapping[str, str], *names: str) -> bool:
    return any(configs.get(name, "false").lower() == "true" for name in names)


@attrs.frozen
class SchemaValidation:
    """The subjects a topic's keys and values must carry registered schema ids for (None: unchecked)."""

    key_subject: str | None
    value_subject: str | None

    @classmethod
    def of(cls, topic: str, configs: Mapping[str, str]) -> SchemaValidation | None:
        """The topic's validation, or None when its configs turn none on."""
        keys = _on(configs, KEY_VALIDATION, REDPANDA_KEY_VALIDATION)
        values = _on(configs, VALUE_VALIDATION, REDPANDA_VALUE_VALIDATION)
        if not keys and not values:
            return None
        return cls(f"{topic}-key" if keys else None, f"{topic}-value" if values else None)

    def refusal(self, batch: Buffer, decompress: Decompress, registry: SchemaIdLookup) -> str | None:
        """Why the batch at batch[0] is refused, in Kafka's words for record errors (every bad record
        counted, the first three shown with their index in the batch), or None if every record passes.

        The registry is asked once per subject per batch. Raises KafkaError (CORRUPT_MESSAGE) for
        records that cannot be read."""
        known: dict[str, Collection[int]] = {}
        checks = [
            (name, subject) for name, subject in (("key", self.key_subject), ("value", self.value_subject)) if subject
        ]
        errors: list[tuple[int, str]] = []
        for index, record in enumerate(record_keys_values(batch, decompress, WIRE_HEADER_SIZE)):
            for field, subject in checks:
                data = record[0] if field == "key" else record[1]
                if data is None:
                    continue
                if len(data) < WIRE_HEADER_SIZE or data[0] != MAGIC_BYTE:
                    errors.append(
                        (
                            index,
                            (
                                f"the {field} has no schema id (Confluent's wire format: magic byte 0, then a 4-byte "
                                f"schema id), as schema validation on subject {subject} requires"
                            ),
                        )
                    )
                    break
                schema_id = int.from_bytes(data[1:], "big", signed=True)
                ids = known.get(subject)
                if ids is None:
                    ids = known[subject] = registry.schema_ids(subject)
                if schema_id not in ids:
                    errors.append(
                        (index, f"the {field}'s schema id {schema_id} is not registered under subject {subject}")
                    )
                    break
        if not errors:
            return None
        shown = ", ".join(f"RecordError(batchIndex={index}, message='{message}')" for index, message in errors[:3])
        return (
            f"One or more records have been rejected due to {len(errors)} record errors in total, "
            f"and only showing the first three errors at most: [{shown}]"
        )
