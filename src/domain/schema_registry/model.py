"""The Schema Registry's values: schema types, compatibility levels, modes, and its errors.

Names, numbers and messages are Confluent's (`io.confluent.kafka.schemaregistry.rest.exceptions.Errors`,
`CompatibilityLevel`, `Mode`), so the HTTP adapter puts `error.error_code` and `error.message` straight
into Confluent's error body and clients react to them as they do against Confluent's registry.
"""

from __future__ import annotations

import enum

import attrs


class SchemaType(enum.Enum):
    AVRO = "AVRO"
    JSON = "JSON"
    PROTOBUF = "PROTOBUF"


class CompatibilityLevel(enum.Enum):
    NONE = "NONE"
    BACKWARD = "BACKWARD"
    BACKWARD_TRANSITIVE = "BACKWARD_TRANSITIVE"
    FORWARD = "FORWARD"
    FORWARD_TRANSITIVE = "FORWARD_TRANSITIVE"
    FULL = "FULL"
    FULL_TRANSITIVE = "FULL_TRANSITIVE"

    @property
    def transitive(self) -> bool:
        return self.value.endswith("_TRANSITIVE")

    @property
    def backward(self) -> bool:
        """The new schema must read data written with the old ones."""
        return self.value.startswith(("BACKWARD", "FULL"))

    @property
    def forward(self) -> bool:
        """The old schemas must read data written with the new one."""
        return self.value.startswith(("FORWARD", "FULL"))


class Mode(enum.Enum):
    READWRITE = "READWRITE"
    READONLY = "READONLY"
    READONLY_OVERRIDE = "READONLY_OVERRIDE"
    IMPORT = "IMPORT"


DEFAULT_COMPATIBILITY = CompatibilityLevel.BACKWARD
DEFAULT_MODE = Mode.READWRITE


@attrs.frozen
class SchemaReference:
    """Another subject's version that a schema names (Avro named types, JSON `$ref`, Protobuf imports)."""

    name: str
    subject: str
    version: int


@attrs.frozen
class Schema:
    """What a client registers: the schema text as sent, its type and its references."""

    text: str
    schema_type: SchemaType = SchemaType.AVRO
    references: tuple[SchemaReference, ...] = ()


@attrs.frozen
class SubjectVersion:
    """One version of a subject: the global id of its schema, and whether it is soft-deleted."""

    subject: str
    version: int
    schema_id: int
    schema: Schema
    deleted: bool = False


@attrs.frozen
class ParsedSchema:
    """A schema a format adapter accepted: `canonical` is equal for two texts of the same schema."""

    schema: Schema
    canonical: str
    parsed: object = attrs.field(eq=False, repr=False)


class RegistryError(Exception):
    """A request the registry refuses, with Confluent's HTTP status, error code and message."""

    def __init__(self, status: int, error_code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message

    @classmethod
    def subject_not_found(cls, subject: str) -> RegistryError:
        return cls(404, 40401, f"Subject '{subject}' not found.")

    @classmethod
    def version_not_found(cls, version: int | str) -> RegistryError:
        return cls(404, 40402, f"Version {version} not found.")

    @classmethod
    def schema_not_found(cls, schema_id: int | None = None) -> RegistryError:
        return cls(404, 40403, "Schema not found" if schema_id is None else f"Schema {schema_id} not found")

    @classmethod
    def subject_soft_deleted(cls, subject: str) -> RegistryError:
        return cls(404, 40404, f"Subject '{subject}' was soft deleted.Set permanent=true to delete permanently")

    @classmethod
    def subject_not_soft_deleted(cls, subject: str) -> RegistryError:
        return cls(404, 40405, f"Subject '{subject}' was not deleted first before being permanently deleted")

    @classmethod
    def version_soft_deleted(cls, subject: str, version: int) -> RegistryError:
        return cls(
            404,
            40406,
            f"Subject '{subject}' Version {version} was soft deleted.Set permanent=true to delete permanently",
        )

    @classmethod
    def version_not_soft_deleted(cls, subject: str, version: int) -> RegistryError:
        return cls(
            404, 40407, f"Subject '{subject}' Version {version} was not deleted first before being permanently deleted"
        )

    @classmethod
    def compatibility_not_configured(cls, subject: str) -> RegistryError:
        return cls(404, 40408, f"Subject '{subject}' does not have subject-level compatibility configured")

    @classmethod
    def mode_not_configured(cls, subject: str) -> RegistryError:
        return cls(404, 40409, f"Subject '{subject}' does not have subject-level mode configured")

    @classmethod
    def incompatible(cls, messages: list[str]) -> RegistryError:
        return cls(
            409,
            40901,
            "Schema being registered is incompatible with an earlier schema for subject; " + "; ".join(messages),
        )

    @classmethod
    def invalid_schema(cls, detail: str) -> RegistryError:
        return cls(422, 42201, f"Invalid schema {detail}")

    @classmethod
    def invalid_version(cls, version: str) -> RegistryError:
        return cls(
            422,
            42202,
            f"The specified version '{version}' is not a valid version id. Allowed values are between "
            '[1, 2^31-1] and the string "latest"',
        )

    @classmethod
    def invalid_compatibility_level(cls, level: object) -> RegistryError:
        return cls(
            422,
            42203,
            f"Invalid compatibility level. Valid values are none, backward, forward, full, "
            f"backward_transitive, forward_transitive, and full_transitive (got {level})",
        )

    @classmethod
    def invalid_mode(cls, mode: object) -> RegistryError:
        return cls(
            422,
            42204,
            f"Invalid mode. Valid values are READWRITE, READONLY, READONLY_OVERRIDE, and IMPORT (got {mode})",
        )

    @classmethod
    def operation_not_permitted(cls, detail: str) -> RegistryError:
        return cls(422, 42205, detail)

    @classmethod
    def reference_exists(cls, detail: str) -> RegistryError:
        return cls(422, 42206, detail)
