"""The settings tree built from plain dicts (TOML tables, mapped Kafka keys, environment variables, flags)
by cattrs: each section's fields by name, each value checked and converted for its declared type, and every
key that names no field refused, the errors gathered with their paths (`cattrs.transform_error`:
`... @ config.server.port`).

The converter is cattrs' `BaseConverter`, which structures by looking at the classes when it is called,
not the `Converter`, which generates and compiles a function per class at a process's first load (about
30 ms of a broker's start, ADR 118). What the `Converter` generated and this one does not, refusing a key
that names no field and gathering each field's error with its name, is one hook for every section."""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import attrs
import cattrs
from cattrs.errors import AttributeValidationNote, ClassValidationError, ForbiddenExtraKeysError

from . import sections

__all__ = ["structure", "transform_error"]

transform_error = cattrs.transform_error


def _bool(value: Any, _: type) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.lower() in ("true", "1", "yes")
    raise ValueError(f"not a boolean: {value!r}")


def _int(value: Any, _: type) -> int:
    if isinstance(value, bool):
        raise ValueError(f"not an integer: {value!r}")
    return int(value)


def _resolved(cls: type, seen: set[type]) -> None:
    """The string annotations (`from __future__ import annotations`) of `cls` and the sections it holds
    made types, which a `BaseConverter` dispatches on."""
    if cls in seen or not attrs.has(cls):
        return
    seen.add(cls)
    attrs.resolve_types(cls, globalns=vars(sections))
    for field in attrs.fields(cls):
        for kind in (field.type, *typing.get_args(field.type)):
            if isinstance(kind, type):
                _resolved(kind, seen)


def _section_hook(converter: cattrs.BaseConverter) -> Callable[[type], Callable[[Any, type], Any]]:
    def hook(cls: type) -> Callable[[Any, type], Any]:
        fields = attrs.fields(cls)
        names = {field.name for field in fields}

        def structure_section(raw: Any, _: type) -> Any:
            if not isinstance(raw, Mapping):
                raise ValueError(f"expected a table, got {raw!r}")
            errors: list[Exception] = []
            extra = {str(key) for key in raw if key not in names}
            if extra:
                errors.append(ForbiddenExtraKeysError("", cls, extra))
            values: dict[str, Any] = {}
            for field in fields:
                if field.name not in raw:
                    continue
                try:
                    values[field.name] = converter.structure(raw[field.name], field.type)
                except Exception as exc:
                    note = AttributeValidationNote(
                        f"Structuring class {cls.__qualname__} @ attribute {field.name}", field.name, field.type
                    )
                    exc.__notes__ = [*getattr(exc, "__notes__", []), note]
                    errors.append(exc)
            if errors:
                raise ClassValidationError(f"While structuring {cls.__name__}", errors, cls)
            return cls(**values)

        return structure_section

    return hook


@cache
def _converter() -> cattrs.BaseConverter:
    _resolved(sections.Settings, set())
    converter = cattrs.BaseConverter()
    converter.register_structure_hook(bool, _bool)
    converter.register_structure_hook(int, _int)
    converter.register_structure_hook_factory(attrs.has, _section_hook(converter))
    return converter


def structure(raw: Any, cls: type) -> Any:
    """`cls` built from the dict `raw`: the keys it names set those fields, the others keep their defaults;
    a `cattrs.BaseValidationError` names every key or value refused."""
    return _converter().structure(raw, cls)
