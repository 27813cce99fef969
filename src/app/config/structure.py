"""The settings tree built from plain dicts (TOML tables, mapped Kafka keys, environment variables, flags):
each section's fields by name, each value checked and converted for its declared type, and every key that
names no field refused. The field types are read from their annotations' text, as `sections.py` writes
them (`int`, `bool`, `str`, `float`, `X | None`, `Literal[...]`, `dict[str, Section]`, a section): no
typing evaluation and no generated code, so loading the settings costs a broker's start nothing it notices
(ADR 118; cattrs generated and compiled a function per class at every process's first load).

Errors are gathered, each with its dotted path (`config.server.port`), in one `SettingsError`."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import attrs

from . import sections

Convert = Callable[[Any, str], Any]


class SettingsError(ValueError):
    """Every key or value the tree refused, each naming its path."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
        return value.lower() in ("true", "1", "yes")
    raise ValueError(f"not a boolean: {value!r}")


def _int(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(f"not an integer: {value!r}")
    return int(value)


_SCALARS: dict[str, Callable[[Any], Any]] = {"int": _int, "bool": _bool, "str": str, "float": float}


def _scalar(name: str, parse: Callable[[Any], Any]) -> Convert:
    def convert(value: Any, path: str) -> Any:
        try:
            return parse(value)
        except (TypeError, ValueError) as exc:
            raise SettingsError([f"invalid value for type, expected {name} ({exc}) @ {path}"]) from None

    return convert


def _optional(inner: Convert) -> Convert:
    return lambda value, path: None if value is None else inner(value, path)


def _literal(choices: tuple[Any, ...], text: str) -> Convert:
    def convert(value: Any, path: str) -> Any:
        if value not in choices:
            raise SettingsError([f"invalid value for type, expected {text}, got {value!r} @ {path}"])
        return value

    return convert


def _table(inner: Convert) -> Convert:
    def convert(value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            raise SettingsError([f"expected a table, got {value!r} @ {path}"])
        return {str(key): inner(item, f"{path}.{key}") for key, item in value.items()}

    return convert


def _converter(text: str) -> Convert:
    """The conversion for a field annotated `text` (the annotations are strings: `from __future__ import annotations`)."""
    text = text.strip()
    if text.endswith("| None"):
        return _optional(_converter(text.removesuffix("| None")))
    if text in _SCALARS:
        return _scalar(text, _SCALARS[text])
    if text.startswith("Literal[") and text.endswith("]"):
        return _literal(tuple(ast.literal_eval(f"({text[len('Literal[') : -1]},)")), text)
    if text.startswith("dict[str,") and text.endswith("]"):
        return _table(_converter(text[len("dict[str,") : -1]))
    section = getattr(sections, text, None)
    if isinstance(section, type) and attrs.has(section):
        return lambda value, path: structure(value, section, path)
    raise TypeError(f"a settings field of type {text} has no conversion")  # a new kind of field: add it


@cache
def _fields(cls: type) -> dict[str, Convert]:
    return {field.name: _converter(str(field.type)) for field in attrs.fields(cls)}


def structure(raw: Any, cls: type, path: str = "config") -> Any:
    """`cls` built from the dict `raw`: the keys it names set those fields, the others keep their defaults."""
    if not isinstance(raw, Mapping):
        raise SettingsError([f"expected a table, got {raw!r} @ {path}"])
    fields = _fields(cls)
    errors: list[str] = []
    extra = [str(key) for key in raw if key not in fields]
    if extra:
        errors.append(f"extra fields found ({', '.join(extra)}) @ {path}")
    values: dict[str, Any] = {}
    for name, value in raw.items():
        convert = fields.get(name)
        if convert is None:
            continue
        try:
            values[name] = convert(value, f"{path}.{name}")
        except SettingsError as exc:
            errors.extend(exc.messages)
    if errors:
        raise SettingsError(errors)
    return cls(**values)
