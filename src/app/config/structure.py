"""The settings tree built from plain dicts (TOML tables, mapped Kafka keys, environment variables, flags)
by cattrs: each section's fields by name, each value checked and converted for its declared type, and every
key that names no field refused, the errors gathered with their paths (`cattrs.transform_error`:
`... @ config.server.port`).

The converter is cattrs' `BaseConverter`, which structures by looking at the classes when it is called,
not the `Converter`, which generates and compiles a function per class at a process's first load (about
30 ms of a broker's start, ADR 118). What the `Converter` generated and this one does not, refusing a key
that names no field and gathering each field's error with its name, is one hook for every section.

cattrs itself (with typing_extensions and dataclasses) is imported at the first configuration that needs
it: a table whose values already have their fields' types (what `Broker()` and `serve`'s flags give) is
built by `_plain` alone, and anything else, or any refusal, is structured by the converter from the start,
so its values and its messages are cattrs' own (issue 39)."""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

import attrs

from . import sections

if TYPE_CHECKING:
    import cattrs

__all__ = ["structure"]


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
    from cattrs.errors import AttributeValidationNote, ClassValidationError, ForbiddenExtraKeysError

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
    import cattrs

    _resolved_settings()
    converter = cattrs.BaseConverter()
    converter.register_structure_hook(bool, _bool)
    converter.register_structure_hook(int, _int)
    converter.register_structure_hook_factory(attrs.has, _section_hook(converter))
    return converter


def structure(raw: Any, cls: type) -> Any:
    """`cls` built from the dict `raw`: the keys it names set those fields, the others keep their defaults;
    a `cattrs.BaseValidationError` names every key or value refused."""
    _resolved_settings()
    try:
        return _plain(raw, cls)
    except Exception:  # a value to convert, or a refusal: cattrs structures the whole table anew
        return _converter().structure(raw, cls)


@cache
def _resolved_settings() -> None:
    _resolved(sections.Settings, set())


class _NotPlain(Exception):
    """A value `_plain` leaves to cattrs: one to convert (`"1"` for an int, a list for a tuple), or a type it
    does not build."""


_SCALARS = (str, int, float, bool)
_UNIONS = (typing.Union, types.UnionType)


def _plain(raw: Any, cls: type) -> Any:
    """`cls` built from `raw` when each value already has its field's type (a bool no int, an int no float),
    as cattrs would build it; `_NotPlain` otherwise."""
    if not isinstance(raw, Mapping):
        raise _NotPlain(cls)
    fields = attrs.fields(cls)
    names = {field.name for field in fields}
    if any(key not in names for key in raw):
        raise _NotPlain(cls)
    return cls(**{field.name: _plain_value(raw[field.name], field.type) for field in fields if field.name in raw})


def _plain_value(value: Any, kind: Any) -> Any:
    if isinstance(kind, type):
        if attrs.has(kind):
            return _plain(value, kind)
        if kind in _SCALARS and type(value) is kind:
            return value
        raise _NotPlain(kind)
    origin = typing.get_origin(kind)
    arguments = typing.get_args(kind)
    if origin in _UNIONS and type(None) in arguments:
        if value is None:
            return None
        [other] = [argument for argument in arguments if argument is not type(None)]  # else not plain
        return _plain_value(value, other)
    if origin is Literal and any(value == choice and type(value) is type(choice) for choice in arguments):
        return value
    raise _NotPlain(kind)
