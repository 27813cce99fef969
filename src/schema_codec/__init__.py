"""trafka's own schema-driven codec: a Kafka JSON message schema compiled into an encoder and a decoder
for each of its versions, with no client library behind it (ADR 71).

Kafka declares each message once, in `clients/src/main/resources/common/message/*.json`: fields
with the versions they exist in (`versions`), may be null in (`nullableVersions`) or travel as
tagged fields in (`taggedVersions`, `tag`), and the versions from which the message is flexible
(`flexibleVersions`: compact strings, bytes and arrays as unsigned varints of length + 1, and a
tagged-field section closing every struct). `Schema.load` reads such a file and `Schema.encode` /
`Schema.decode` apply those rules, so no per-API encoder is written by hand: the project's codec rule
(ADR 2) holds with the schemas as data.

Values are dicts keyed by the schema's field names (`{"GroupId": "g", "Topics": [{...}]}`); a field
absent from the dict is its default. A decoded message has every field of its version. The encoding
is byte-identical to kafka-python 3's `kafka.protocol` classes for the same schema and version, which
`tests/unit/adapters/kafka/test_schema_codec.py` proves with hypothesis for every schema it is given.
"""

from __future__ import annotations

import json
import struct
import uuid
from pathlib import Path
from typing import Any

import attrs

_INT = {
    "int8": struct.Struct(">b"),
    "int16": struct.Struct(">h"),
    "uint16": struct.Struct(">H"),
    "int32": struct.Struct(">i"),
    "uint32": struct.Struct(">I"),
    "int64": struct.Struct(">q"),
    "float64": struct.Struct(">d"),
}
_NULL_UUID = bytes(16)
_I32 = _INT["int32"]


class SchemaError(ValueError):
    """The schema file cannot be compiled, or a value does not fit its field."""


@attrs.frozen
class Versions:
    """A version range as Kafka writes it: "none", "3", "1-4", "2+"."""

    low: int
    high: int | None  # None: open-ended; low > high: none

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        if text is None or text == "none":
            return cls(1, 0)
        if text.endswith("+"):
            return cls(int(text[:-1]), None)
        low, _, high = text.partition("-")
        return cls(int(low), int(high or low))

    def __contains__(self, version: int) -> bool:
        return version >= self.low and (self.high is None or version <= self.high)


@attrs.frozen
class Field:
    name: str
    type: str  # "int32", "string", "[]int32", "[]Topic" (array of struct), "Topic" (struct)
    versions: Versions
    nullable: Versions
    tagged: Versions
    tag: int | None
    default: Any
    fields: tuple[Field, ...]  # of a struct, or of an array of structs

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        return bool(self.fields)


def _default(type_: str, raw: Any, nullable: Versions) -> Any:
    if type_.startswith("[]"):
        return None if raw == "null" else []
    if type_ in _INT:
        if raw is None or raw == "":
            return 0.0 if type_ == "float64" else 0
        text = str(raw)
        return float(text) if type_ == "float64" else int(text, 16) if text.lower().startswith("0x") else int(text)
    if type_ == "bool":
        return str(raw).lower() == "true"
    if type_ == "string":
        return None if raw == "null" else "" if raw is None else str(raw)
    if type_ in ("bytes", "records"):
        return None if raw == "null" else b""
    if type_ == "uuid":
        return uuid.UUID(int=0)
    return None  # a struct: absent


def _fields(specs: list[dict[str, Any]], structs: dict[str, list[dict[str, Any]]]) -> tuple[Field, ...]:
    out = []
    for spec in specs:
        type_ = spec["type"]
        element = type_[2:] if type_.startswith("[]") else type_
        inner = spec.get("fields") or structs.get(element) or []
        nullable = Versions.parse(spec.get("nullableVersions"))
        out.append(
            Field(
                spec["name"],
                type_,
                Versions.parse(spec.get("versions")),
                nullable,
                Versions.parse(spec.get("taggedVersions")),
                spec.get("tag"),
                _default(type_, spec.get("default"), nullable) if not inner or type_.startswith("[]") else None,
                _fields(inner, structs),
            )
        )
    return tuple(out)


def _read_json(path: Path) -> dict[str, Any]:
    """Kafka's schema files are JSON with `//` comment lines."""
    text = "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("//"))
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@attrs.frozen
class Schema:
    name: str
    api_key: int | None
    valid: Versions
    flexible: Versions
    fields: tuple[Field, ...]
    raw: dict[str, Any] = attrs.field(eq=False, repr=False, factory=dict)  # the file as read

    @classmethod
    def load(cls, path: Path) -> Schema:
        raw = _read_json(path)
        structs = {s["name"]: s["fields"] for s in raw.get("commonStructs", [])}
        return cls(
            raw["name"],
            raw.get("apiKey"),
            Versions.parse(raw["validVersions"]),
            Versions.parse(raw.get("flexibleVersions")),
            _fields(raw["fields"], structs),
            raw,
        )

    def encode(self, value: dict[str, Any], version: int) -> bytes:
        if version not in self.valid:
            raise SchemaError(f"{self.name} has no version {version}")
        out = bytearray()
        _write_struct(out, self.fields, value, version, version in self.flexible)
        return bytes(out)

    def decode(self, data: bytes | memoryview, version: int) -> dict[str, Any]:
        value, end = self.decode_prefix(data, version)
        if end != len(data):
            raise SchemaError(f"{self.name} v{version}: {len(data) - end} bytes left over")
        return value

    def decode_prefix(self, data: bytes | memoryview, version: int) -> tuple[dict[str, Any], int]:
        """The message at the start of `data`, and where it ends (bytes after it are the caller's)."""
        if version not in self.valid:
            raise SchemaError(f"{self.name} has no version {version}")
        reader = _Reader(memoryview(data))
        return _read_struct(reader, self.fields, version, version in self.flexible), reader.pos


# -- encoding ----------------------------------------------------------------------------------------


def _uvarint(out: bytearray, n: int) -> None:
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


# Each struct's fields at one version, resolved once into a plan: (name, field, kind, argument, default,
# tag or None) per field the version has, in schema order. The encoder and decoder walk plans, not the
# schema, so a field's versions, type and codec are looked up once per (struct, version), not per value.
_INT_KIND, _BOOL, _UUID, _STRING, _BYTES, _STRUCT_ARRAY, _SCALAR_ARRAY, _STRUCT = range(8)
_PLANS: dict[tuple[int, int, bool], tuple[tuple[Field, ...], tuple[tuple[Any, ...], ...]]] = {}


def _scalar_kind(type_: str) -> tuple[int, Any]:
    codec = _INT.get(type_)
    if codec is not None:
        return _INT_KIND, codec
    kind = {"bool": _BOOL, "uuid": _UUID, "string": _STRING, "bytes": _BYTES, "records": _BYTES}.get(type_)
    return (-1, type_) if kind is None else (kind, None)


def _plan(fields: tuple[Field, ...], version: int, flexible: bool) -> tuple[tuple[Any, ...], ...]:
    key = (id(fields), version, flexible)
    cached = _PLANS.get(key)
    if cached is not None and cached[0] is fields:  # the plan holds `fields`, so its id stays its own
        return cached[1]
    plan = []
    for field in fields:
        if version not in field.versions:
            continue
        argument: Any
        tag = field.tag if flexible and version in field.tagged else None
        if field.is_array:
            if field.is_struct:
                kind, argument = _STRUCT_ARRAY, field.fields
            else:
                kind, argument = _SCALAR_ARRAY, _scalar_kind(field.element)
        elif field.is_struct:
            kind, argument = _STRUCT, version in field.nullable
        else:
            kind, argument = _scalar_kind(field.type)
        plan.append((field.name, field, kind, argument, field.default, tag))
    _PLANS[key] = (fields, tuple(plan))
    return _PLANS[key][1]


def _write_struct(
    out: bytearray, fields: tuple[Field, ...], value: dict[str, Any], version: int, flexible: bool
) -> None:
    tagged: list[tuple[int, bytes]] = []
    for name, field, kind, argument, default, tag in _plan(fields, version, flexible):
        item = value.get(name, default)
        if tag is not None:
            if _is_default(field, item):
                continue
            body = bytearray()
            _write_field(body, field, item, version, True)
            tagged.append((tag, bytes(body)))
            continue
        if kind == _INT_KIND:
            out += argument.pack(item)
        elif kind == _STRING:
            _write_bytes(out, None if item is None else item.encode(), flexible, short=True)
        elif kind == _STRUCT_ARRAY or kind == _SCALAR_ARRAY:
            if item is None:  # null even where the schema says non-nullable, as kafka-python wrote it
                _uvarint(out, 0) if flexible else out.extend(_I32.pack(-1))
                continue
            _uvarint(out, len(item) + 1) if flexible else out.extend(_I32.pack(len(item)))
            if kind == _STRUCT_ARRAY:
                for element in item:
                    _write_struct(out, argument, element, version, flexible)
            elif argument[0] == _INT_KIND:
                pack = argument[1].pack
                for element in item:
                    out += pack(element)
            else:
                for element in item:
                    _write_scalar(out, field.element, element, flexible, name)
        elif kind == _BOOL:
            out.append(1 if item else 0)
        elif kind == _UUID:
            out += _NULL_UUID if item is None else item.bytes
        else:
            _write_field(out, field, item, version, flexible)
    if flexible:
        _uvarint(out, len(tagged))
        for tag, encoded in sorted(tagged):
            _uvarint(out, tag)
            _uvarint(out, len(encoded))
            out += encoded


def _is_default(field: Field, item: Any) -> bool:
    if field.is_struct and not field.is_array:
        return item is None or item == {}
    return bool(item == field.default)


def _write_field(out: bytearray, field: Field, item: Any, version: int, flexible: bool) -> None:
    if field.is_array:
        if item is None:  # null even where the schema says non-nullable, as kafka-python wrote it
            _uvarint(out, 0) if flexible else out.extend(_INT["int32"].pack(-1))
            return
        _uvarint(out, len(item) + 1) if flexible else out.extend(_INT["int32"].pack(len(item)))
        for element in item:
            if field.is_struct:
                _write_struct(out, field.fields, element, version, flexible)
            else:
                _write_scalar(out, field.element, element, flexible, field.name)
        return
    if field.is_struct:
        if version in field.nullable:
            if item is None:
                out.extend(_INT["int8"].pack(-1))
                return
            out.extend(_INT["int8"].pack(1))
        _write_struct(out, field.fields, item or {}, version, flexible)
        return
    _write_scalar(out, field.type, item, flexible, field.name)


def _write_scalar(out: bytearray, type_: str, item: Any, flexible: bool, name: str) -> None:
    codec = _INT.get(type_)
    if codec is not None:
        out += codec.pack(item)
    elif type_ == "bool":
        out.append(1 if item else 0)
    elif type_ == "uuid":
        out += _NULL_UUID if item is None else item.bytes
    elif type_ == "string":
        _write_bytes(out, None if item is None else item.encode(), flexible, short=True)
    elif type_ in ("bytes", "records"):
        _write_bytes(out, None if item is None else bytes(item), flexible, short=False)
    else:
        raise SchemaError(f"{name}: unknown type {type_}")


def _write_bytes(out: bytearray, data: bytes | None, flexible: bool, short: bool) -> None:
    if flexible:
        _uvarint(out, 0 if data is None else len(data) + 1)
    else:
        length = _INT["int16" if short else "int32"]
        out += length.pack(-1 if data is None else len(data))
    if data is not None:
        out += data


# -- decoding ----------------------------------------------------------------------------------------


class _Reader:
    def __init__(self, data: memoryview) -> None:
        self.data = data
        self.pos = 0

    def take(self, size: int) -> memoryview:
        end = self.pos + size
        if size < 0 or end > len(self.data):
            raise SchemaError("the message ends inside a field")
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def unpack(self, codec: struct.Struct) -> Any:
        pos = self.pos
        end = pos + codec.size
        if end > len(self.data):
            raise SchemaError("the message ends inside a field")
        self.pos = end
        return codec.unpack_from(self.data, pos)[0]

    def uvarint(self) -> int:
        shift = result = 0
        while True:
            byte = self.take(1)[0]
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                return result
            shift += 7
            if shift > 63:
                raise SchemaError("a varint longer than 10 bytes")


def _read_struct(reader: _Reader, fields: tuple[Field, ...], version: int, flexible: bool) -> dict[str, Any]:
    value: dict[str, Any] = {}
    by_tag: dict[int, Field] = {}
    for name, field, kind, argument, default, tag in _plan(fields, version, flexible):
        if tag is not None:
            by_tag[tag] = field
            value[name] = None if kind == _STRUCT else default
        elif kind == _INT_KIND:
            value[name] = reader.unpack(argument)
        elif kind == _STRUCT_ARRAY:
            count = reader.uvarint() - 1 if flexible else reader.unpack(_I32)
            if count < 0:
                value[name] = None
                continue
            if count > len(reader.data) - reader.pos:  # every element takes at least a byte
                raise SchemaError(f"{name}: {count} elements in {len(reader.data) - reader.pos} bytes")
            value[name] = [_read_struct(reader, argument, version, flexible) for _ in range(count)]
        else:
            value[name] = _read_field(reader, field, version, flexible)
    if flexible:
        for _ in range(reader.uvarint()):
            tag, size = reader.uvarint(), reader.uvarint()
            body = reader.take(size)
            tagged_field = by_tag.get(tag)
            if tagged_field is None:
                continue  # an unknown tagged field is skipped, as Kafka skips it
            inner = _Reader(body)
            value[tagged_field.name] = _read_field(inner, tagged_field, version, True)
    return value


def _read_field(reader: _Reader, field: Field, version: int, flexible: bool) -> Any:
    if field.is_array:
        count = reader.uvarint() - 1 if flexible else reader.unpack(_INT["int32"])
        if count < 0:
            return None
        if count > len(reader.data) - reader.pos:  # every element takes at least a byte
            raise SchemaError(f"{field.name}: {count} elements in {len(reader.data) - reader.pos} bytes")
        if field.is_struct:
            return [_read_struct(reader, field.fields, version, flexible) for _ in range(count)]
        return [_read_scalar(reader, field.element, flexible) for _ in range(count)]
    if field.is_struct:
        if version in field.nullable and reader.unpack(_INT["int8"]) < 0:
            return None
        return _read_struct(reader, field.fields, version, flexible)
    return _read_scalar(reader, field.type, flexible)


def _read_scalar(reader: _Reader, type_: str, flexible: bool) -> Any:
    codec = _INT.get(type_)
    if codec is not None:
        return reader.unpack(codec)
    if type_ == "bool":
        return reader.take(1)[0] != 0
    if type_ == "uuid":
        return uuid.UUID(bytes=bytes(reader.take(16)))
    if type_ in ("string", "bytes", "records"):
        size = reader.uvarint() - 1 if flexible else reader.unpack(_INT["int16" if type_ == "string" else "int32"])
        if size < 0:
            return None
        data = bytes(reader.take(size))
        return data.decode() if type_ == "string" else data
    raise SchemaError(f"unknown type {type_}")
