"""The Schema Registry's domain: Confluent's rules for subjects, versions, ids and compatibility.

Format-specific work (parsing, canonical forms, whether one schema reads another's data) is behind
the `SchemaFormat` port, implemented in `trafka.adapters.schema_registry`.
"""

from .log_entries import KeyType, RegistryEntry, RegistryKey
from .model import (
    DEFAULT_COMPATIBILITY,
    DEFAULT_MODE,
    CompatibilityLevel,
    Mode,
    ParsedSchema,
    RegistryError,
    Schema,
    SchemaReference,
    SchemaType,
    SubjectVersion,
)
from .ports import SchemaFormat
from .registry import SchemaRegistry, parse_compatibility, parse_mode, parse_version

__all__ = [
    "DEFAULT_COMPATIBILITY",
    "DEFAULT_MODE",
    "CompatibilityLevel",
    "KeyType",
    "Mode",
    "ParsedSchema",
    "RegistryEntry",
    "RegistryError",
    "RegistryKey",
    "Schema",
    "SchemaFormat",
    "SchemaReference",
    "SchemaRegistry",
    "SchemaType",
    "SubjectVersion",
    "parse_compatibility",
    "parse_mode",
    "parse_version",
]
