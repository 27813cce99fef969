"""The registry's log as Confluent writes it in `_schemas`: JSON keys and values, one per change.

Every change the registry makes is one of these entries, and the registry's state is nothing but
the entries applied in order, so replaying `_schemas` at startup (ours, or one copied from a
Confluent deployment) rebuilds it. Keys are Confluent's `SchemaKey` (magic 1), `ConfigKey`,
`ModeKey` and `DeleteSubjectKey` (magic 0) with their property order; a value of None is a
tombstone (a hard delete, or a removed subject-level config or mode).
"""

from __future__ import annotations

import enum
import json
from typing import Any

import attrs

from .model import CompatibilityLevel, Mode, Schema, SchemaReference, SchemaType, SubjectVersion


class KeyType(enum.Enum):
    SCHEMA = "SCHEMA"
    CONFIG = "CONFIG"
    MODE = "MODE"
    DELETE_SUBJECT = "DELETE_SUBJECT"
    NOOP = "NOOP"


@attrs.frozen
class RegistryKey:
    keytype: KeyType
    subject: str | None = None
    version: int | None = None

    def to_json(self) -> bytes:
        if self.keytype is KeyType.SCHEMA:
            body: dict[str, Any] = {"keytype": "SCHEMA", "subject": self.subject, "version": self.version, "magic": 1}
        else:
            body = {"keytype": self.keytype.value, "subject": self.subject, "magic": 0}
        return json.dumps(body, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> RegistryKey:
        body = json.loads(raw)
        keytype = KeyType(body["keytype"])
        version = body.get("version") if keytype is KeyType.SCHEMA else None
        return cls(keytype, body.get("subject"), version)


@attrs.frozen
class RegistryEntry:
    """One record of `_schemas`: a key and its JSON value (None for a tombstone)."""

    key: RegistryKey
    value: dict[str, Any] | None

    def value_json(self) -> bytes | None:
        return None if self.value is None else json.dumps(self.value, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, key: bytes, value: bytes | None) -> RegistryEntry:
        return cls(RegistryKey.from_json(key), None if value is None else json.loads(value))


def schema_entry(version: SubjectVersion) -> RegistryEntry:
    value: dict[str, Any] = {
        "subject": version.subject,
        "version": version.version,
        "id": version.schema_id,
    }
    if version.schema.schema_type is not SchemaType.AVRO:
        value["schemaType"] = version.schema.schema_type.value
    if version.schema.references:
        value["references"] = [attrs.asdict(r) for r in version.schema.references]
    value["schema"] = version.schema.text
    value["deleted"] = version.deleted
    return RegistryEntry(RegistryKey(KeyType.SCHEMA, version.subject, version.version), value)


def schema_from_value(value: dict[str, Any]) -> SubjectVersion:
    schema = Schema(
        text=value["schema"],
        schema_type=SchemaType(value.get("schemaType") or "AVRO"),
        references=tuple(SchemaReference(r["name"], r["subject"], r["version"]) for r in value.get("references") or ()),
    )
    return SubjectVersion(value["subject"], value["version"], value["id"], schema, bool(value.get("deleted", False)))


def config_entry(subject: str | None, level: CompatibilityLevel | None) -> RegistryEntry:
    value = None if level is None else {"subject": subject, "compatibilityLevel": level.value}
    return RegistryEntry(RegistryKey(KeyType.CONFIG, subject), value)


def mode_entry(subject: str | None, mode: Mode | None) -> RegistryEntry:
    value = None if mode is None else {"subject": subject, "mode": mode.value}
    return RegistryEntry(RegistryKey(KeyType.MODE, subject), value)


def delete_subject_entry(subject: str, version: int) -> RegistryEntry:
    return RegistryEntry(RegistryKey(KeyType.DELETE_SUBJECT, subject), {"subject": subject, "version": version})
