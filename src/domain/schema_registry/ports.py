"""What the registry needs from a schema format (Avro, JSON Schema, Protobuf) and from storage.

The registry's rules (subjects, versions, ids, deletes, levels, modes) do not depend on the format;
parsing, canonical forms and whether one schema can read another's data do, and live in
`trafka.adapters.schema_registry`. Storage of the registry's log (`_schemas`) is a port too, so the domain
stays free of I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from .model import ParsedSchema, Schema, SchemaType


class SchemaFormat(Protocol):
    """One schema type's parsing and compatibility rules."""

    schema_type: SchemaType

    def parse(self, schema: Schema, references: Mapping[str, ParsedSchema]) -> ParsedSchema:
        """The schema parsed and canonicalised; raises ValueError with a one-line reason if invalid.

        `references` maps each reference's name to the referenced version's parsed schema."""

    def incompatibilities(self, reader: ParsedSchema, writer: ParsedSchema) -> list[str]:
        """Why `reader` cannot read data written with `writer`; empty if it can."""

    def formatted(self, parsed: ParsedSchema, fmt: str) -> str:
        """The schema's text in one of the type's `?format=` forms (its stored text for unknown ones)."""
