"""Kafka's requests and responses as classes, compiled by trafka's own codec (`schema_codec`, ADRs 71
and 92) from Kafka's JSON schemas in `trafka.kafka_schemas`: `from trafka.schema_codec.messages import
FetchRequest` builds the class from `FetchRequest.json` on first use; no client library is imported.

The classes read as kafka-python's `kafka.protocol` ones did, since the rooms were written against
those: snake_case attributes named after the schema's fields (`ThrottleTimeMs` -> `throttle_time_ms`),
a nested class per struct named by its type (`MetadataResponse.MetadataResponseTopic`), construction
by keyword with `version=` (fields present at that version and not given take the schema's default),
`fields` (name -> `FieldView`), `API_KEY`, `json`, `max_version`; a field not set reads as its default.
The bytes are the schema codec's, proven equal to kafka-python 3's for every one of these schemas and
versions (`tests/unit/adapters/kafka/test_schema_codec.py`). Where kafka-python's classes patched a
schema, the same patch is applied here (`_PATCHES`), so the rooms see the same values: authorized
operations as a set of operation codes (None for "omitted"), a zero UUID as None.
"""

from __future__ import annotations

import functools
import re
import struct
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import trafka.kafka_schemas as kafka_schemas

from . import Field, Schema

if TYPE_CHECKING:
    from ._declared import *  # noqa: F403  (every schema's class, as mypy sees them)

SCHEMAS = Path(kafka_schemas.__file__).parent
_SNAKE = re.compile(r"(?<!^)(?=[A-Z])")
_ZERO_UUID = uuid.UUID(int=0)
_OMITTED = {31}  # a bitfield with only bit 31 set: Kafka's "authorized operations omitted" (-2^31)

# (class, path of schema field names) -> (attribute name, kind); what kafka-python's classes patched.
_PATCHES: dict[str, dict[tuple[str, ...], tuple[str | None, str | None, Any]]] = {
    "MetadataResponse": {
        ("ClusterAuthorizedOperations",): ("authorized_operations", "bitfield", None),
        ("Topics", "TopicAuthorizedOperations"): ("authorized_operations", "bitfield", None),
    },
    "DescribeClusterResponse": {("ClusterAuthorizedOperations",): ("authorized_operations", "bitfield", None)},
    "DescribeGroupsResponse": {("Groups", "AuthorizedOperations"): (None, "bitfield", None)},
    "ListOffsetsRequest": {("ReplicaId",): (None, None, -1)},
}


def snake(name: str) -> str:
    return _SNAKE.sub("_", name).lower()


def _bits(value: int) -> set[int] | None:
    bits = {i for i in range(32) if value & (1 << i)}
    return None if bits == _OMITTED else bits


def _int32(bits: Any) -> int:
    if isinstance(bits, int):
        return bits
    value = sum(1 << b for b in (_OMITTED if bits is None else bits))
    return value - (1 << 32) if value >= 1 << 31 else value


class FieldView:
    """A schema field as the rooms (and kafka-python's callers) ask about it."""

    __slots__ = ("field", "name", "bitfield", "default", "message")

    def __init__(self, field: Field, name: str, bitfield: bool, default: Any, message: type[Message] | None) -> None:
        self.field = field
        self.name = name
        self.bitfield = bitfield
        self.default = default
        self.message = message  # the nested class of a struct or an array of structs

    def for_version_q(self, version: int) -> bool:
        return version in self.field.versions

    def nullable_for_version_q(self, version: int) -> bool:
        return version in self.field.nullable

    def tagged_field_q(self, version: int) -> bool:
        return self.field.tag is not None and version in self.field.tagged

    def is_array(self) -> bool:
        return self.field.is_array

    def is_struct(self) -> bool:
        return self.field.is_struct and not self.field.is_array

    def is_struct_array(self) -> bool:
        return self.field.is_struct and self.field.is_array

    @property
    def type_str(self) -> str:
        return self.field.element

    @property
    def fields(self) -> dict[str, FieldView]:
        assert self.message is not None
        return self.message.fields

    def fresh_default(self) -> Any:
        default = self.default
        return [] if type(default) is list else default


class _ResponseHeader(NamedTuple):
    correlation_id: int


class _Versioned:
    """`Message[version]`: the class with its version given, as kafka-python's `Request[3](...)`."""

    __slots__ = ("cls", "version")

    def __init__(self, cls: type[Message], version: int) -> None:
        self.cls = cls
        self.version = version

    def __call__(self, *args: Any, **values: Any) -> Any:
        return self.cls(*args, version=self.version, **values)

    def decode(self, data: Any, version: int | None = None, exact: bool = True, header: bool = False) -> Any:
        return self.cls.decode(data, self.version if version is None else version, exact, header)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.cls, name)


class _MessageType(type):
    def __getitem__(cls, version: int | None) -> Any:
        if version is None:
            return cls
        if version < 0:
            version += cls.max_version + 1  # type: ignore[attr-defined]
        if not 0 <= version <= cls.max_version:  # type: ignore[attr-defined]
            raise ValueError(f"{cls.__name__} has no version {version}")
        return _Versioned(cls, version)  # type: ignore[arg-type]


class Message(metaclass=_MessageType):
    """One struct of a schema: a request, a response, a record, or one of their nested structs."""

    max_version: ClassVar[int] = 0

    fields: ClassVar[dict[str, FieldView]] = {}
    _views: ClassVar[tuple[FieldView, ...]] = ()
    _schema: ClassVar[Schema | None] = None  # the top-level struct's
    _is_response: ClassVar[bool] = False
    API_KEY: ClassVar[int | None] = None

    def __init__(self, *args: Any, version: int | None = None, **values: Any) -> None:
        self._version = version
        views = self._views
        if args:
            positional = [
                v for v in views if version is None or (v.for_version_q(version) and not v.tagged_field_q(version))
            ]
            if len(args) > len(positional):
                raise TypeError(f"{type(self).__name__} takes at most {len(positional)} positional fields")
            values.update(zip((v.name for v in positional), args, strict=False))
        for view in views:
            name = view.name
            if name in values:
                setattr(self, name, values.pop(name))
            elif version is not None and view.for_version_q(version):
                setattr(self, name, view.fresh_default())
        if values:
            raise ValueError(f"unknown fields for {type(self).__name__}: {sorted(values)}")

    def __getattr__(self, name: str) -> Any:
        # only for a field not set: its default, kept so that a list read here and extended stays
        view = type(self).fields.get(name)
        if view is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        value = view.fresh_default()
        setattr(self, name, value)
        return value

    @property
    def version(self) -> int | None:
        return self._version

    @property
    def header(self) -> Any:
        return self.__dict__.get("_header")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, v.name) == getattr(other, v.name) for v in self._views)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = (v for v in self._views if self._version is None or v.for_version_q(self._version))
        return f"{type(self).__name__}({', '.join(f'{v.name}={getattr(self, v.name)!r}' for v in shown)})"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for view in self._views:
            if self._version is not None and not view.for_version_q(self._version):
                continue
            value = getattr(self, view.name)
            if view.message is not None and value is not None:
                value = [v.to_dict() for v in value] if view.field.is_array else value.to_dict()
            out[view.name] = value
        return out

    # -- the wire ----------------------------------------------------------------------------------------

    @classmethod
    def flexible_version_q(cls, version: int) -> bool:
        assert cls._schema is not None
        return version in cls._schema.flexible

    def encode(self, version: int | None = None, header: bool = False, framed: bool = False) -> bytes:
        """This message's body at `version` (its own by default); with `header`, after the header
        `with_header` set (a request's v1/v2, a response's v0/v1); with `framed`, after its size."""
        version = self._version if version is None else version
        if version is None:
            raise ValueError(f"{type(self).__name__}: a version is needed to encode")
        schema = type(self)._schema
        assert schema is not None
        body = schema.encode(_to_value(self), version)
        if header:
            body = self._header_bytes(version) + body
        return struct.pack(">i", len(body)) + body if framed else body

    def with_header(self, correlation_id: int = 0, client_id: str | None = "trafka") -> None:
        self._header = (correlation_id, client_id)

    def _header_bytes(self, version: int) -> bytes:
        correlation_id, client_id = self.__dict__.get("_header", (0, "trafka"))
        # flexible versions add a tagged-field section (empty); ApiVersions' response header never does
        tagged = b"\x00" if self.flexible_version_q(version) and not (self.API_KEY == 18 and self._is_response) else b""
        if self.API_KEY is None:  # a record's or a data schema's header: its int16 version
            return struct.pack(">h", version)
        if not self._is_response:
            client = (
                b"\xff\xff" if client_id is None else struct.pack(">h", len(client_id.encode())) + client_id.encode()
            )
            return struct.pack(">hhi", self.API_KEY, version, correlation_id) + client + tagged
        return struct.pack(">i", correlation_id) + tagged

    @classmethod
    def decode(cls, data: Any, version: int | None = None, exact: bool = True, header: bool = False) -> Any:
        """A body decoded at `version`; with `exact` False, bytes after the last field are ignored."""
        schema = cls._schema
        assert schema is not None
        if hasattr(data, "read"):
            data = data.read()
        if header and cls.API_KEY is None:  # a data schema's int16 version; a newer one is read as the highest
            (written,) = struct.unpack_from(">h", data)
            version = written if version is None else version
            return cls.decode(memoryview(data)[2:], min(version, cls.max_version), exact=False)
        if version is None:
            raise ValueError(f"{cls.__name__}: a version is needed to decode")
        if header:  # a response's header (the correlation id, and an empty tagged-field section)
            tagged = cls.flexible_version_q(version) and cls.API_KEY != 18
            correlation_id = struct.unpack_from(">i", data)[0]
            data = memoryview(data)[5 if tagged else 4 :]
            decoded = cls.decode(data, version, exact)
            decoded._header = _ResponseHeader(correlation_id)
            return decoded
        value = schema.decode(data, version) if exact else schema.decode_prefix(data, version)[0]
        return _from_value(cls, value, version)


def _to_value(message: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for view in type(message)._views:
        item = getattr(message, view.name)
        if view.message is not None and item is not None:
            item = [_to_value(e) for e in item] if view.field.is_array else _to_value(item)
        elif view.bitfield:
            item = _int32(item)
        elif item is None and view.field.type == "uuid":
            item = _ZERO_UUID  # read as None, written as zeros (a tagged one then stays left out)
        out[view.field.name] = item
    return out


def _from_value(cls: type[Message], value: dict[str, Any], version: int) -> Any:
    message = cls.__new__(cls)
    message._version = version
    for view in cls._views:
        kafka_name = view.field.name
        if kafka_name not in value:
            continue
        item = value[kafka_name]
        if item is not None:
            nested = view.message
            if nested is not None:
                item = (
                    [_from_value(nested, e, version) for e in item]
                    if view.field.is_array
                    else _from_value(nested, item, version)
                )
            elif view.bitfield:
                item = _bits(item)
            elif view.field.type == "uuid" and item == _ZERO_UUID:
                item = None
        setattr(message, view.name, item)
    return message


def _struct_class(
    name: str,
    fields: tuple[Field, ...],
    patches: dict[tuple[str, ...], tuple[str | None, str | None, Any]],
    path: tuple[str, ...],
    namespace: dict[str, Any],
) -> type[Message]:
    cls: type[Message] = type(name, (Message,), namespace)
    views = []
    for field in fields:
        nested = None
        if field.is_struct:
            nested = _struct_class(field.element, field.fields, patches, (*path, field.name), {})
            setattr(cls, field.element, nested)
        attribute, kind, default = patches.get((*path, field.name), (None, None, None))
        if default is None:
            default = None if field.type == "uuid" or (field.is_struct and not field.is_array) else field.default
        views.append(FieldView(field, attribute or snake(field.name), kind == "bitfield", default, nested))
    cls._views = tuple(views)
    cls.fields = {v.name: v for v in views}
    return cls


@functools.cache
def compiled(name: str) -> Any:
    """The class of schema `name` (a file of `trafka.kafka_schemas`): a `Message` subclass built at run
    time from data, so Any to mypy (as kafka-python's classes were)."""
    path = SCHEMAS / f"{name}.json"
    if not path.is_file():
        raise AttributeError(f"no Kafka schema {name}")
    schema = Schema.load(path)
    raw = schema.raw
    namespace: dict[str, Any] = {
        "_schema": schema,
        "json": raw,
        "API_KEY": raw.get("apiKey"),
        "_is_response": raw.get("type") == "response",
        "min_version": 0,
        "max_version": schema.valid.high,
        "__module__": __name__,
        "__qualname__": name,
    }
    return _struct_class(name, schema.fields, _PATCHES.get(name, {}), (), namespace)


def __getattr__(name: str) -> Any:
    if name.startswith("_") or not name[:1].isupper():
        raise AttributeError(name)
    return compiled(name)


__all__ = ["FieldView", "Message", "compiled", "snake"]
