""".proto text from a FileDescriptorProto: the form the registry stores, answers with and compares.

Confluent's registry answers a Protobuf schema in `.proto` text whatever the client sent (text, or
confluent-kafka's base64 FileDescriptorProto), and two spellings of one schema get one id. Printing
the compiled descriptor gives both: the text is a function of the descriptor alone, so comments,
spacing, import order of declarations and relative type names do not change it. Type names are
printed fully qualified with a leading dot (`.acme.User.Kind`), which protoc resolves the same way
in any scope; `json_name` is printed only where it differs from protoc's default, since protoc fills
it in and generated code leaves it out. Printing and compiling again yields the same descriptor
(a hypothesis test holds that). Editions files and proto2 groups are refused: their text cannot be
rebuilt from the descriptor alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from google.protobuf import descriptor_pb2, text_encoding
from google.protobuf.message import Message

F = descriptor_pb2.FieldDescriptorProto

SCALAR_NAMES = {
    F.TYPE_DOUBLE: "double",
    F.TYPE_FLOAT: "float",
    F.TYPE_INT64: "int64",
    F.TYPE_UINT64: "uint64",
    F.TYPE_INT32: "int32",
    F.TYPE_FIXED64: "fixed64",
    F.TYPE_FIXED32: "fixed32",
    F.TYPE_BOOL: "bool",
    F.TYPE_STRING: "string",
    F.TYPE_BYTES: "bytes",
    F.TYPE_UINT32: "uint32",
    F.TYPE_SFIXED32: "sfixed32",
    F.TYPE_SFIXED64: "sfixed64",
    F.TYPE_SINT32: "sint32",
    F.TYPE_SINT64: "sint64",
}
LABELS = {F.LABEL_OPTIONAL: "optional", F.LABEL_REQUIRED: "required", F.LABEL_REPEATED: "repeated"}
MAX_FIELD_NUMBER = 536870911
INDENT = "  "


def default_json_name(name: str) -> str:
    """protoc's json_name: underscores dropped, the letter after each one upper-cased."""
    out, upper = [], False
    for ch in name:
        if ch == "_":
            upper = True
        elif upper:
            out.append(ch.upper())
            upper = False
        else:
            out.append(ch)
    return "".join(out)


def _quote(text: str) -> str:
    return '"' + text_encoding.CEscape(text.encode(), as_utf8=True) + '"'


def _option_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, bytes):
        return '"' + text_encoding.CEscape(value, as_utf8=False) + '"'
    return str(value)


def _options(options: Message, skip: Iterable[str] = ()) -> list[tuple[str, str]]:
    """The options message's set standard fields, as (name, value) pairs; custom options are left out."""
    pairs = []
    for field, value in options.ListFields():
        repeated = field.is_repeated if hasattr(field, "is_repeated") else field.label == field.LABEL_REPEATED
        if field.is_extension or field.name in skip or repeated or field.type == field.TYPE_MESSAGE:
            continue
        if field.type == field.TYPE_ENUM:
            pairs.append((field.name, field.enum_type.values_by_number[value].name))
        else:
            pairs.append((field.name, _option_value(value)))
    return pairs


class _Range(Protocol):
    """A reserved or extension range of a message or enum (DescriptorProto.ReservedRange and the like)."""

    start: int
    end: int


def _ranges(ranges: Iterable[_Range], *, end_inclusive: bool) -> str:
    parts = []
    for r in ranges:
        start, end = r.start, r.end if end_inclusive else r.end - 1
        if start == end:
            parts.append(str(start))
        else:
            parts.append(f"{start} to {'max' if end >= MAX_FIELD_NUMBER else end}")
    return ", ".join(parts)


class ProtoPrinter:
    """One file's text; `print(file)` is the whole job."""

    def __init__(self, file: descriptor_pb2.FileDescriptorProto) -> None:
        if file.syntax not in ("", "proto2", "proto3"):
            raise ValueError(f"syntax {file.syntax!r} is not supported (only proto2 and proto3)")
        self.file = file
        self.proto3 = file.syntax == "proto3"
        self.lines: list[str] = []
        # full name of a map entry message -> (key field, value field)
        self.maps: dict[str, tuple[descriptor_pb2.FieldDescriptorProto, descriptor_pb2.FieldDescriptorProto]] = {}
        self._collect_maps(file.message_type, f".{file.package}" if file.package else "")

    def _collect_maps(self, messages: Iterable[descriptor_pb2.DescriptorProto], scope: str) -> None:
        for message in messages:
            full = f"{scope}.{message.name}"
            if message.options.map_entry:
                self.maps[full] = (message.field[0], message.field[1])
            self._collect_maps(message.nested_type, full)

    def _line(self, depth: int, text: str) -> None:
        self.lines.append(INDENT * depth + text)

    def print(self) -> str:
        file = self.file
        self._line(0, f'syntax = "{"proto3" if self.proto3 else "proto2"}";')
        if file.package:
            self._line(0, f"package {file.package};")
        if file.dependency:
            self.lines.append("")
        public, weak = set(file.public_dependency), set(file.weak_dependency)
        for index, name in enumerate(file.dependency):
            kind = "public " if index in public else "weak " if index in weak else ""
            self._line(0, f"import {kind}{_quote(name)};")
        file_options = _options(file.options)
        if file_options:
            self.lines.append("")
        for name, value in file_options:
            self._line(0, f"option {name} = {value};")
        for message in file.message_type:
            self.lines.append("")
            self._message(message, 0)
        for enum in file.enum_type:
            self.lines.append("")
            self._enum(enum, 0)
        self._extensions(file.extension, 0)
        for service in file.service:
            self.lines.append("")
            self._service(service)
        return "\n".join(self.lines) + "\n"

    def _type_name(self, field: descriptor_pb2.FieldDescriptorProto) -> str:
        if field.type == F.TYPE_GROUP:
            raise ValueError(f"field {field.name}: proto2 groups are not supported")
        if field.type in SCALAR_NAMES:
            return SCALAR_NAMES[field.type]
        if field.type_name in self.maps:
            key, value = self.maps[field.type_name]
            return f"map<{self._type_name(key)}, {self._type_name(value)}>"
        return field.type_name

    def _field(self, field: descriptor_pb2.FieldDescriptorProto, depth: int, *, in_oneof: bool = False) -> None:
        is_map = field.type_name in self.maps
        if in_oneof or is_map:
            label = ""
        elif self.proto3:
            label = "repeated " if field.label == F.LABEL_REPEATED else "optional " if field.proto3_optional else ""
        else:
            label = LABELS[field.label] + " "
        options = []
        if field.HasField("default_value"):
            options.append(("default", self._default(field)))
        if field.HasField("json_name") and field.json_name != default_json_name(field.name):
            options.append(("json_name", _quote(field.json_name)))
        options += _options(field.options)
        suffix = " [" + ", ".join(f"{n} = {v}" for n, v in options) + "]" if options else ""
        self._line(depth, f"{label}{self._type_name(field)} {field.name} = {field.number}{suffix};")

    @staticmethod
    def _default(field: descriptor_pb2.FieldDescriptorProto) -> str:
        if field.type == F.TYPE_STRING:
            return _quote(field.default_value)
        if field.type == F.TYPE_BYTES:
            return f'"{field.default_value}"'
        return field.default_value

    def _message(self, message: descriptor_pb2.DescriptorProto, depth: int) -> None:
        self._line(depth, f"message {message.name} {{")
        inner = depth + 1
        for name, value in _options(message.options, skip=("map_entry",)):
            self._line(inner, f"option {name} = {value};")
        real_oneofs = {f.oneof_index for f in message.field if f.HasField("oneof_index") and not f.proto3_optional}
        printed_oneofs: set[int] = set()
        for field in message.field:
            if field.HasField("oneof_index") and field.oneof_index in real_oneofs:
                if field.oneof_index not in printed_oneofs:
                    printed_oneofs.add(field.oneof_index)
                    self._oneof(message, field.oneof_index, inner)
                continue
            self._field(field, inner)
        if message.reserved_range:
            self._line(inner, f"reserved {_ranges(message.reserved_range, end_inclusive=False)};")
        if message.reserved_name:
            self._line(inner, "reserved " + ", ".join(_quote(n) for n in message.reserved_name) + ";")
        if message.extension_range:
            self._line(inner, f"extensions {_ranges(message.extension_range, end_inclusive=False)};")
        for nested in message.nested_type:
            if not nested.options.map_entry:
                self._message(nested, inner)
        for enum in message.enum_type:
            self._enum(enum, inner)
        self._extensions(message.extension, inner)
        self._line(depth, "}")

    def _oneof(self, message: descriptor_pb2.DescriptorProto, index: int, depth: int) -> None:
        self._line(depth, f"oneof {message.oneof_decl[index].name} {{")
        for field in message.field:
            if field.HasField("oneof_index") and field.oneof_index == index:
                self._field(field, depth + 1, in_oneof=True)
        self._line(depth, "}")

    def _enum(self, enum: descriptor_pb2.EnumDescriptorProto, depth: int) -> None:
        self._line(depth, f"enum {enum.name} {{")
        for name, value in _options(enum.options):
            self._line(depth + 1, f"option {name} = {value};")
        for value in enum.value:
            options = _options(value.options)
            suffix = " [" + ", ".join(f"{n} = {v}" for n, v in options) + "]" if options else ""
            self._line(depth + 1, f"{value.name} = {value.number}{suffix};")
        if enum.reserved_range:
            self._line(depth + 1, f"reserved {_ranges(enum.reserved_range, end_inclusive=True)};")
        if enum.reserved_name:
            self._line(depth + 1, "reserved " + ", ".join(_quote(n) for n in enum.reserved_name) + ";")
        self._line(depth, "}")

    def _extensions(self, fields: Iterable[descriptor_pb2.FieldDescriptorProto], depth: int) -> None:
        by_extendee: dict[str, list[descriptor_pb2.FieldDescriptorProto]] = {}
        for field in fields:
            by_extendee.setdefault(field.extendee, []).append(field)
        for extendee, extension in by_extendee.items():
            self._line(depth, f"extend {extendee} {{")
            for field in extension:
                self._field(field, depth + 1)
            self._line(depth, "}")

    def _service(self, service: descriptor_pb2.ServiceDescriptorProto) -> None:
        self._line(0, f"service {service.name} {{")
        for name, value in _options(service.options):
            self._line(1, f"option {name} = {value};")
        for method in service.method:
            request = ("stream " if method.client_streaming else "") + method.input_type
            response = ("stream " if method.server_streaming else "") + method.output_type
            self._line(1, f"rpc {method.name} ({request}) returns ({response});")
        self._line(0, "}")


def proto_text(file: descriptor_pb2.FileDescriptorProto) -> str:
    """The file's `.proto` text; ValueError for what it cannot print (editions, groups)."""
    return ProtoPrinter(file).print()
