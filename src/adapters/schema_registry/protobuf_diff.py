"""Confluent's Protobuf compatibility rules (`protobuf/diff/SchemaDiff.java`), over FileDescriptorProtos.

`compare(original, update)` lists the differences Confluent's `SchemaDiff.compare` finds between the
schema data was written with (original) and the one reading it (update), with Confluent's types and
paths (`#/Message/3`): the package; messages and enums added, removed or moved; fields by number
(removed, added, renamed, required ones added or removed); a field's kind (scalar, message, map), its
scalar kind (int32/int64/uint32/uint64/bool/enum read each other, sint32/sint64, string/bytes,
fixed32/sfixed32, fixed64/sfixed64, float, double) and the message type it names, compared
recursively; oneofs added or removed, their fields, and fields moved into one. `COMPATIBLE` holds
the types Confluent accepts; any other found makes the pair incompatible. Syntax changes and
services are not compared, as in Confluent.

Type names are fully qualified in a compiled descriptor, so Confluent's scope resolution is a
lookup here. Types of a referenced subject-version that both schemas name alike are not compared
again, as Confluent skips them.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeAlias

import attrs
from google.protobuf import descriptor_pb2

F: TypeAlias = descriptor_pb2.FieldDescriptorProto


class Difference(enum.Enum):
    PACKAGE_CHANGED = enum.auto()
    MESSAGE_ADDED = enum.auto()
    MESSAGE_REMOVED = enum.auto()
    MESSAGE_MOVED = enum.auto()
    ENUM_ADDED = enum.auto()
    ENUM_REMOVED = enum.auto()
    ENUM_CONST_ADDED = enum.auto()
    ENUM_CONST_CHANGED = enum.auto()
    ENUM_CONST_REMOVED = enum.auto()
    FIELD_ADDED = enum.auto()
    FIELD_REMOVED = enum.auto()
    FIELD_NAME_CHANGED = enum.auto()
    FIELD_KIND_CHANGED = enum.auto()
    FIELD_SCALAR_KIND_CHANGED = enum.auto()
    FIELD_NAMED_TYPE_CHANGED = enum.auto()
    REQUIRED_FIELD_ADDED = enum.auto()
    REQUIRED_FIELD_REMOVED = enum.auto()
    ONEOF_ADDED = enum.auto()
    ONEOF_REMOVED = enum.auto()
    ONEOF_FIELD_ADDED = enum.auto()
    ONEOF_FIELD_REMOVED = enum.auto()
    MULTIPLE_FIELDS_MOVED_TO_ONEOF = enum.auto()
    FIELD_MOVED_TO_EXISTING_ONEOF = enum.auto()


D = Difference
COMPATIBLE = frozenset(
    {
        D.MESSAGE_ADDED,
        D.MESSAGE_MOVED,
        D.ENUM_ADDED,
        D.ENUM_REMOVED,
        D.ENUM_CONST_ADDED,
        D.ENUM_CONST_CHANGED,
        D.ENUM_CONST_REMOVED,
        D.FIELD_ADDED,
        D.FIELD_REMOVED,
        D.FIELD_NAME_CHANGED,
        D.ONEOF_ADDED,
        D.ONEOF_REMOVED,
        D.ONEOF_FIELD_ADDED,
    }
)

SCALAR_KINDS = {
    F.TYPE_INT32: "GENERAL_NUMBER",
    F.TYPE_INT64: "GENERAL_NUMBER",
    F.TYPE_UINT32: "GENERAL_NUMBER",
    F.TYPE_UINT64: "GENERAL_NUMBER",
    F.TYPE_BOOL: "GENERAL_NUMBER",
    F.TYPE_ENUM: "GENERAL_NUMBER",
    F.TYPE_SINT32: "SIGNED_NUMBER",
    F.TYPE_SINT64: "SIGNED_NUMBER",
    F.TYPE_STRING: "STRING_OR_BYTES",
    F.TYPE_BYTES: "STRING_OR_BYTES",
    F.TYPE_FIXED32: "FIXED32",
    F.TYPE_SFIXED32: "FIXED32",
    F.TYPE_FIXED64: "FIXED64",
    F.TYPE_SFIXED64: "FIXED64",
    F.TYPE_FLOAT: "FLOAT",
    F.TYPE_DOUBLE: "DOUBLE",
}


@attrs.frozen
class Found:
    type: Difference
    path: str

    def __str__(self) -> str:
        return f"Difference{{fullPath='{self.path}', type={self.type.name}}}"


@attrs.frozen
class TypeInfo:
    package: str
    reference: tuple[str, int] | None  # (subject, version) of the referenced schema defining it
    message: descriptor_pb2.DescriptorProto | None
    enum: descriptor_pb2.EnumDescriptorProto | None

    @property
    def is_map(self) -> bool:
        return self.message is not None and self.message.options.map_entry


def collect_types(
    files: Iterable[tuple[descriptor_pb2.FileDescriptorProto, tuple[str, int] | None]],
) -> dict[str, TypeInfo]:
    """Every message and enum of the files by full name (no leading dot)."""
    types: dict[str, TypeInfo] = {}

    def add(package: str, ref: tuple[str, int] | None, scope: str, messages: Iterable, enums: Iterable) -> None:
        for message in messages:
            name = f"{scope}.{message.name}" if scope else message.name
            types[name] = TypeInfo(package, ref, message, None)
            add(package, ref, name, message.nested_type, message.enum_type)
        for enum_type in enums:
            name = f"{scope}.{enum_type.name}" if scope else enum_type.name
            types[name] = TypeInfo(package, ref, None, enum_type)

    for file, ref in files:
        add(file.package, ref, file.package, file.message_type, file.enum_type)
    return types


class Context:
    """Types of both sides, the path being compared, and the differences found."""

    def __init__(self, original: dict[str, TypeInfo], update: dict[str, TypeInfo]) -> None:
        self.original, self.update = original, update
        self.path: list[str] = []
        self.in_progress: set[str] = set()
        self.found: list[Found] = []

    def sub(self, local_name: str) -> Context:
        ctx = Context(self.original, self.update)
        ctx.in_progress = set(self.in_progress)
        ctx.path = local_name.split(".")
        return ctx

    def add(self, kind: Difference) -> None:
        self.found.append(Found(kind, "#/" + "/".join(self.path)))

    @contextmanager
    def enter(self, name: object) -> Iterator[None]:
        self.path.append(str(name))
        try:
            yield
        finally:
            self.path.pop()

    @property
    def compatible(self) -> bool:
        return all(f.type in COMPATIBLE for f in self.found)


def compare(
    ctx: Context, original: descriptor_pb2.FileDescriptorProto, update: descriptor_pb2.FileDescriptorProto
) -> list[Found]:
    if original.package != update.package:
        ctx.add(D.PACKAGE_CHANGED)
    compare_types(
        ctx,
        original.package,
        original.message_type,
        original.enum_type,
        update.package,
        update.message_type,
        update.enum_type,
    )
    return ctx.found


def compare_types(
    ctx: Context,
    original_scope: str,
    original_messages: Iterable,
    original_enums: Iterable,
    update_scope: str,
    update_messages: Iterable,
    update_enums: Iterable,
) -> None:
    def index(messages: Iterable) -> dict[str, tuple[int, descriptor_pb2.DescriptorProto]]:
        return {m.name: (i, m) for i, m in enumerate(m for m in messages if not m.options.map_entry)}

    old_messages, new_messages = index(original_messages), index(update_messages)
    for name in sorted(old_messages.keys() | new_messages.keys()):
        with ctx.enter(name):
            if name not in new_messages:
                ctx.add(D.MESSAGE_REMOVED)
            elif name not in old_messages:
                ctx.add(D.MESSAGE_ADDED)
            else:
                (old_index, old), (new_index, new) = old_messages[name], new_messages[name]
                compare_message(ctx, _join(original_scope, name), old, _join(update_scope, name), new)
                if old_index != new_index:
                    ctx.add(D.MESSAGE_MOVED)
    old_enums = {e.name: e for e in original_enums}
    new_enums = {e.name: e for e in update_enums}
    for name in sorted(old_enums.keys() | new_enums.keys()):
        with ctx.enter(name):
            if name not in new_enums:
                ctx.add(D.ENUM_REMOVED)
            elif name not in old_enums:
                ctx.add(D.ENUM_ADDED)
            else:
                compare_enum(ctx, old_enums[name], new_enums[name])


def _join(scope: str, name: str) -> str:
    return f"{scope}.{name}" if scope else name


def compare_enum(
    ctx: Context, original: descriptor_pb2.EnumDescriptorProto, update: descriptor_pb2.EnumDescriptorProto
) -> None:
    old = {v.number: v.name for v in original.value}
    new = {v.number: v.name for v in update.value}
    for number in sorted(old.keys() | new.keys()):
        with ctx.enter(number):
            if number not in new:
                ctx.add(D.ENUM_CONST_REMOVED)
            elif number not in old:
                ctx.add(D.ENUM_CONST_ADDED)
            elif old[number] != new[number]:
                ctx.add(D.ENUM_CONST_CHANGED)


def _fields(message: descriptor_pb2.DescriptorProto) -> tuple[dict[int, F], dict[str, dict[int, F]]]:
    """Top-level fields by number (proto3 `optional` ones included), and real oneofs' fields by number."""
    top: dict[int, F] = {}
    oneofs: dict[str, dict[int, F]] = {}
    for field in message.field:
        if field.HasField("oneof_index") and not field.proto3_optional:
            oneofs.setdefault(message.oneof_decl[field.oneof_index].name, {})[field.number] = field
        else:
            top[field.number] = field
    return top, oneofs


def compare_message(
    ctx: Context,
    original_name: str,
    original: descriptor_pb2.DescriptorProto,
    update_name: str,
    update: descriptor_pb2.DescriptorProto,
) -> None:
    if original_name not in ctx.in_progress:
        ctx.in_progress.add(original_name)
        try:
            _compare_fields(ctx, original, update)
        finally:
            ctx.in_progress.discard(original_name)
    compare_types(
        ctx, original_name, original.nested_type, original.enum_type, update_name, update.nested_type, update.enum_type
    )


def _compare_fields(
    ctx: Context, original: descriptor_pb2.DescriptorProto, update: descriptor_pb2.DescriptorProto
) -> None:
    old_top, old_oneofs = _fields(original)
    new_top, new_oneofs = _fields(update)
    old_top_left = dict(old_top)
    old_in_oneofs = {n: f for fields in old_oneofs.values() for n, f in fields.items()}
    old_oneof_of = {n: name for name, fields in old_oneofs.items() for n in fields}
    new_oneof_of = {n: name for name, fields in new_oneofs.items() for n in fields}
    for name, fields in new_oneofs.items():
        with ctx.enter(name):
            moved = sum(1 for n in fields if old_top_left.pop(n, None) is not None)
            existing = sum(1 for n in fields if n not in old_top and n in old_in_oneofs)
            if moved > 1:
                ctx.add(D.MULTIPLE_FIELDS_MOVED_TO_ONEOF)
            elif moved == 1 and existing > 0:
                ctx.add(D.FIELD_MOVED_TO_EXISTING_ONEOF)
    all_new = {**new_top, **{n: f for fields in new_oneofs.values() for n, f in fields.items()}}
    for name in sorted(old_oneofs.keys() | new_oneofs.keys()):
        with ctx.enter(name):
            if name not in new_oneofs:
                ctx.add(D.ONEOF_REMOVED)
            elif name not in old_oneofs:
                ctx.add(D.ONEOF_ADDED)
            else:
                old_fields, new_fields = old_oneofs[name], new_oneofs[name]
                for number in sorted(old_fields.keys() | new_fields.keys()):
                    with ctx.enter(number):
                        if number not in new_fields:
                            if number not in all_new:
                                ctx.add(D.ONEOF_FIELD_REMOVED)
                        elif number not in old_fields:
                            ctx.add(D.ONEOF_FIELD_ADDED)
                        else:
                            compare_field(ctx, old_fields[number], new_fields[number])
    for number in sorted(old_top_left.keys() | new_top.keys()):
        with ctx.enter(number):
            if number not in new_top:
                removed = old_top_left[number]
                ctx.add(D.REQUIRED_FIELD_REMOVED if removed.label == F.LABEL_REQUIRED else D.FIELD_REMOVED)
            elif number not in old_top_left:
                added = new_top[number]
                ctx.add(D.REQUIRED_FIELD_ADDED if added.label == F.LABEL_REQUIRED else D.FIELD_ADDED)
            else:
                compare_field(ctx, old_top_left[number], new_top[number])
    all_old = {**old_top, **old_in_oneofs}
    for number in sorted(all_old.keys() & all_new.keys()):
        old_oneof, new_oneof = old_oneof_of.get(number), new_oneof_of.get(number)
        if (old_oneof is None and new_oneof is None) or (old_oneof is not None and old_oneof == new_oneof):
            continue
        with ctx.enter(number):
            compare_field(ctx, all_old[number], all_new[number])


def compare_field(ctx: Context, original: F, update: F) -> None:
    if original.name != update.name:
        ctx.add(D.FIELD_NAME_CHANGED)
    compare_type(ctx, original, update)


def _kind(ctx_types: dict[str, TypeInfo], field: F) -> str:
    if field.type in SCALAR_KINDS:
        return "SCALAR"
    info = ctx_types.get(field.type_name.lstrip("."))
    return "MAP" if info is not None and info.is_map else "MESSAGE"


def compare_type(ctx: Context, original: F, update: F) -> None:
    old_kind, new_kind = _kind(ctx.original, original), _kind(ctx.update, update)
    if old_kind != new_kind:
        ctx.add(D.FIELD_KIND_CHANGED)
    elif old_kind == "SCALAR":
        if SCALAR_KINDS[original.type] != SCALAR_KINDS[update.type]:
            ctx.add(D.FIELD_SCALAR_KIND_CHANGED)
    elif old_kind == "MAP":
        old_entry = ctx.original[original.type_name.lstrip(".")].message
        new_entry = ctx.update[update.type_name.lstrip(".")].message
        assert old_entry is not None and new_entry is not None
        compare_type(ctx, old_entry.field[0], new_entry.field[0])
        compare_type(ctx, old_entry.field[1], new_entry.field[1])
    else:
        _compare_named(ctx, original.type_name.lstrip("."), update.type_name.lstrip("."))


def _compare_named(ctx: Context, original_name: str, update_name: str) -> None:
    old, new = ctx.original.get(original_name), ctx.update.get(update_name)
    if old is None or new is None or old.message is None or new.message is None:
        if original_name != update_name:
            ctx.add(D.FIELD_NAMED_TYPE_CHANGED)
        return
    old_local = original_name.removeprefix(old.package + ".") if old.package else original_name
    new_local = update_name.removeprefix(new.package + ".") if new.package else update_name
    if old_local != new_local:
        ctx.add(D.FIELD_NAMED_TYPE_CHANGED)
        return
    if old.reference is not None and old.reference == new.reference:
        return
    sub = ctx.sub(old_local)
    compare_message(sub, original_name, old.message, update_name, new.message)
    ctx.found += sub.found
    if not sub.compatible:
        ctx.add(D.FIELD_NAMED_TYPE_CHANGED)


def differences(
    original: descriptor_pb2.FileDescriptorProto,
    original_types: dict[str, TypeInfo],
    update: descriptor_pb2.FileDescriptorProto,
    update_types: dict[str, TypeInfo],
) -> list[Found]:
    """Every difference Confluent reports for data written with `original`, read with `update`."""
    return compare(Context(original_types, update_types), original, update)
