"""Protobuf keys and values as typed columns, as Spark's `from_protobuf` maps them.

The column's message is the first message of the subject's latest schema (what confluent-kafka's
deserializer reads into when the writer's message is not named there). Its descriptors come from
the registry as Confluent serves them to clients (`?format=serialized`: base64 FileDescriptorProtos,
references fetched by subject and version), so the Spark adapter needs nothing of the registry's.

A record is Confluent-framed: magic 0, the schema id, the writer message's index path (zigzag
varints, a single 0 for the first message), then the payload. The writer schema (fetched once per
id) names the message; its payload is parsed with the latest schema's message of that name, which
is how Protobuf resolves old data: fields by number, unknown ones skipped, missing ones unset.

Spark's types (`SchemaConverters`, default options): int32/sint32/sfixed32/uint32/fixed32 int,
64-bit integers long, float, double, bool, string, bytes binary, enums their value's name (a string),
messages structs, repeated fields arrays, maps maps, `google.protobuf.Timestamp` a timestamp and
`Duration` a day-time interval; a recursive message is refused, as Spark refuses one by default.
As Spark does without `emit.default.values`, a field the payload leaves unset is null (repeated
fields and maps are empty).
"""

from __future__ import annotations

import base64
import datetime
import functools
import importlib
import pkgutil
import urllib.parse
from typing import Any, TypeAlias

import google.type
from google.protobuf import (
    any_pb2,
    descriptor,
    descriptor_pb2,
    descriptor_pool,
    duration_pb2,
    empty_pb2,
    field_mask_pb2,
    message_factory,
    struct_pb2,
    timestamp_pb2,
    wrappers_pb2,
)
from google.protobuf.message import DecodeError, Message
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DayTimeIntervalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

FD: TypeAlias = descriptor.FieldDescriptor
SCALARS: dict[int, DataType] = {
    FD.TYPE_INT32: IntegerType(),
    FD.TYPE_SINT32: IntegerType(),
    FD.TYPE_SFIXED32: IntegerType(),
    FD.TYPE_UINT32: IntegerType(),
    FD.TYPE_FIXED32: IntegerType(),
    FD.TYPE_INT64: LongType(),
    FD.TYPE_SINT64: LongType(),
    FD.TYPE_SFIXED64: LongType(),
    FD.TYPE_UINT64: LongType(),
    FD.TYPE_FIXED64: LongType(),
    FD.TYPE_FLOAT: FloatType(),
    FD.TYPE_DOUBLE: DoubleType(),
    FD.TYPE_BOOL: BooleanType(),
    FD.TYPE_STRING: StringType(),
    FD.TYPE_BYTES: BinaryType(),
    FD.TYPE_ENUM: StringType(),
}
TIMESTAMP, DURATION = "google.protobuf.Timestamp", "google.protobuf.Duration"
BUILTIN_PREFIXES = ("google/protobuf/", "google/type/")  # imported without references (skip.known.types)
WELL_KNOWN = (any_pb2, duration_pb2, empty_pb2, field_mask_pb2, struct_pb2, timestamp_pb2, wrappers_pb2)


@functools.cache
def builtin_files() -> dict[str, bytes]:
    """protobuf's well-known types and googleapis' `google/type/*.proto`, by import name."""
    modules = list(WELL_KNOWN)
    for info in pkgutil.iter_modules(google.type.__path__):
        if info.name.endswith("_pb2"):
            modules.append(importlib.import_module(f"google.type.{info.name}"))
    return {m.DESCRIPTOR.name: m.DESCRIPTOR.serialized_pb for m in modules}


def _repeated(field: FD) -> bool:
    return field.is_repeated if hasattr(field, "is_repeated") else field.label == FD.LABEL_REPEATED


def _is_map(field: FD) -> bool:
    return field.type == FD.TYPE_MESSAGE and field.message_type.GetOptions().map_entry


def spark_type(message: descriptor.Descriptor, path: tuple[str, ...] = ()) -> StructType:
    """The Spark struct of a message; ValueError for a recursive one."""
    if message.full_name in path:
        raise ValueError(
            f"Found recursive reference in Protobuf schema ({message.full_name}), which Spark cannot represent"
        )
    inner = (*path, message.full_name)
    return StructType([StructField(f.name, _field_type(f, inner), True) for f in message.fields])


def _single_type(field: FD, path: tuple[str, ...]) -> DataType:
    if field.type in SCALARS:
        return SCALARS[field.type]
    name = field.message_type.full_name
    if name == TIMESTAMP:
        return TimestampType()
    if name == DURATION:
        return DayTimeIntervalType()
    return spark_type(field.message_type, path)


def _field_type(field: FD, path: tuple[str, ...]) -> DataType:
    if _is_map(field):
        key, value = field.message_type.fields_by_name["key"], field.message_type.fields_by_name["value"]
        return MapType(_single_type(key, path), _single_type(value, path), True)
    if _repeated(field):
        return ArrayType(_single_type(field, path), False)
    return _single_type(field, path)


def _single_value(field: FD, value: Any) -> Any:
    if field.type == FD.TYPE_ENUM:
        known = field.enum_type.values_by_number.get(value)
        return known.name if known is not None else str(value)
    if field.type != FD.TYPE_MESSAGE:
        return value
    name = field.message_type.full_name
    if name == TIMESTAMP:
        return value.ToDatetime(tzinfo=datetime.UTC)
    if name == DURATION:
        return value.ToTimedelta()
    return to_python(value)


def to_python(message: Any) -> dict[str, Any]:
    """The message as its struct column holds it: unset fields null, repeated ones lists, maps dicts."""
    present = {field.name for field, _ in message.ListFields()}
    out: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if _is_map(field):
            value_field = field.message_type.fields_by_name["value"]
            out[field.name] = {k: _single_value(value_field, v) for k, v in value.items()}
        elif _repeated(field):
            out[field.name] = [_single_value(field, v) for v in value]
        elif field.name not in present:
            out[field.name] = None
        else:
            out[field.name] = _single_value(field, value)
    return out


def read_indexes(data: bytes, at: int) -> tuple[list[int], int]:
    """Confluent's message-index array (zigzag varints, `0` alone meaning [0]) and where the payload starts."""

    def varint(pos: int) -> tuple[int, int]:
        result = shift = 0
        while True:
            if pos >= len(data) or shift > 63:
                raise ValueError("truncated message indexes")
            byte = data[pos]
            result |= (byte & 0x7F) << shift
            pos += 1
            shift += 7
            if not byte & 0x80:
                return (result >> 1) ^ -(result & 1), pos

    count, at = varint(at)
    if count == 0:
        return [0], at
    if count < 0 or count > 64:
        raise ValueError(f"bad message index count {count}")
    indexes = []
    for _ in range(count):
        index, at = varint(at)
        indexes.append(index)
    return indexes, at


def message_name(file: descriptor_pb2.FileDescriptorProto, indexes: list[int]) -> str:
    """The full name of the message an index path names in a file."""
    try:
        message = file.message_type[indexes[0]]
        names = [message.name]
        for index in indexes[1:]:
            message = message.nested_type[index]
            names.append(message.name)
    except IndexError:
        raise ValueError(f"message indexes {indexes} name no message of the schema") from None
    return ".".join([file.package, *names] if file.package else names)


class SchemaFiles:
    """A schema's FileDescriptorProtos as the registry serves them: references first, the schema last."""

    def __init__(self, files: list[bytes]) -> None:
        self.files = files

    @classmethod
    def fetch(cls, get: Any, body: dict[str, Any]) -> SchemaFiles:
        """`body` is a registry answer with `?format=serialized`; `get(path)` fetches more of them."""
        seen: dict[str, bytes] = {}

        def add(answer: dict[str, Any], name: str) -> None:
            for ref in answer.get("references") or ():
                if ref["name"] in seen or ref["name"].startswith(BUILTIN_PREFIXES):
                    continue
                subject = urllib.parse.quote(ref["subject"], safe="")
                add(get(f"/subjects/{subject}/versions/{ref['version']}?deleted=true&format=serialized"), ref["name"])
            file = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(answer["schema"]))
            file.name = name
            seen[name] = file.SerializeToString()

        add(body, "default")
        main = seen.pop("default")
        return cls([*seen.values(), main])

    @property
    def main(self) -> descriptor_pb2.FileDescriptorProto:
        return descriptor_pb2.FileDescriptorProto.FromString(self.files[-1])

    def pool(self) -> descriptor_pool.DescriptorPool:
        pool = descriptor_pool.DescriptorPool()
        builtins, added = builtin_files(), set()

        def add(serialized: bytes) -> None:
            for name in descriptor_pb2.FileDescriptorProto.FromString(serialized).dependency:
                if name in builtins and name not in added:
                    added.add(name)
                    add(builtins[name])
            pool.AddSerializedFile(serialized)

        for serialized in self.files:
            add(serialized)
        return pool


class ProtobufReader:
    """Decodes one column's records into the latest schema's first message; pickled to executors
    as serialized descriptors, its message classes rebuilt there on first use."""

    def __init__(self, latest: SchemaFiles) -> None:
        self.latest = latest
        main = latest.main
        if not main.message_type:
            raise ValueError("the schema defines no message")
        self.message = message_name(main, [0])
        self.writer_names: dict[int, dict[tuple[int, ...], str]] = {}
        self._classes: dict[str, type[Message]] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {key: value for key, value in self.__dict__.items() if key not in ("_classes", "_pool")} | {
            "_classes": None
        }

    def spark_type(self) -> StructType:
        return spark_type(self.latest.pool().FindMessageTypeByName(self.message))

    def _class(self, name: str) -> type[Message]:
        if self._classes is None:
            self._classes = {}
            self._pool = self.latest.pool()
        if name not in self._classes:
            self._classes[name] = message_factory.GetMessageClass(self._pool.FindMessageTypeByName(name))
        return self._classes[name]

    def decode(self, data: bytes, writer: Any) -> dict[str, Any]:
        """The payload after magic and id; `writer()` gives the writer's SchemaFiles when first needed."""
        indexes, start = read_indexes(data, 5)
        schema_id = int.from_bytes(data[1:5], "big")
        names = self.writer_names.setdefault(schema_id, {})
        key = tuple(indexes)
        if key not in names:
            names[key] = message_name(writer().main, indexes)
        if names[key] != self.message:
            raise ValueError(f"schema id {schema_id} wrote message {names[key]}, not the column's {self.message}")
        try:
            return to_python(self._class(self.message).FromString(data[start:]))
        except DecodeError as exc:
            raise ValueError(f"schema id {schema_id}: not a {self.message}: {exc}") from None
