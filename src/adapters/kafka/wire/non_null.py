"""Nulls where Kafka's schema allows none (issue 42, finding 14).

kafka-python's decoders read a null (length -1) string, bytes or array as None whatever the field's
`nullableVersions` say; Kafka's generated parsers refuse it ("non-nullable field ... was serialized
as null"), and the request is a malformed one whose connection closes. `null_field` finds the first
such field, walking the decoded request against its schema; the codec turns it into a ProtocolError,
so no handler ever sees a None it was promised it would not (one log line, no traceback).

The checked fields of each (message class, version) are computed once. Produce and Fetch are not
walked (their hot paths decode without kafka-python, or carry many partitions); their handlers
tolerate None.
"""

from __future__ import annotations

from typing import Any

_NULLABLE_KINDS = ("string", "bytes", "records")
_CHECKED: dict[tuple[int, int], tuple[tuple[str, bool, Any], ...]] = {}  # (id of a schema struct, version)


def _checked(struct: Any, version: int) -> tuple[tuple[str, bool, Any], ...]:
    """(attribute, may be null, the nested struct or None) for the fields present at `version`."""
    key = (id(struct), version)
    found = _CHECKED.get(key)
    if found is None:
        found = _CHECKED[key] = _fields(struct, version)
    return found


def _fields(struct: Any, version: int) -> tuple[tuple[str, bool, Any], ...]:
    out = []
    for name, field in struct.fields.items():
        if not field.for_version_q(version) or field.tagged_field_q(version):
            continue
        nested = field if field.is_struct_array() or field.is_struct() else None
        nullable_kind = field.is_array() or nested is not None or field.type_str in _NULLABLE_KINDS
        if not nullable_kind:
            continue
        out.append((name, bool(field.nullable_for_version_q(version)), nested))
    return tuple(out)


def null_field(struct: Any, body: Any, version: int, path: str = "") -> str | None:
    """The dotted name of the first non-nullable field that decoded as None, or None."""
    for name, nullable, nested in _checked(struct, version):
        value = getattr(body, name, None)
        if value is None:
            if not nullable:
                return path + name
            continue
        if nested is None:
            if type(value) is list and None in value:  # an array's string entries are never nullable
                return f"{path}{name}[]"
            continue
        items = value if nested.is_struct_array() else (value,)
        for item in items:
            found = null_field(nested, item, version, f"{path}{name}.")
            if found is not None:
                return found
    return None
