"""The registry's Protobuf format: parsing both spellings, the printed text, and Confluent's
compatibility rules checked against protobuf's own reading of old bytes with a new schema."""

from __future__ import annotations

import base64

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.protobuf_classes import compile_files
from trafka.adapters.schema_registry import ProtobufFormat
from trafka.adapters.schema_registry.protobuf import ProtobufParsed
from trafka.domain.schema_registry import RegistryError, Schema, SchemaReference, SchemaRegistry, SchemaType

FORMAT = ProtobufFormat()
P = SchemaType.PROTOBUF

RICH = """
syntax = "proto2";
package acme.v1;
option java_package = "com.acme";
option optimize_for = SPEED;

message Order {
  required string id = 1;
  optional int32 count = 2 [default = 7];
  optional string note = 3 [default = "a \\"quoted\\" note"];
  optional bytes blob = 4 [default = "\\001\\002"];
  optional Status status = 5 [default = SHIPPED];
  repeated int64 tags = 6 [packed = true];
  map<string, Line> lines = 7;
  oneof payment { string card = 8; int64 voucher = 9 [deprecated = true]; }
  optional double ratio = 10 [json_name = "theRatio"];
  reserved 20 to 25, 30;
  reserved "old", "older";
  extensions 100 to max;
  message Line { optional string sku = 1; optional float price = 2; }
  enum Status { option allow_alias = true; NEW = 0; SHIPPED = 1; SENT = 1; reserved 5 to 9; reserved "LOST"; }
}
extend Order { optional int32 priority = 100; }
service Orders { rpc Place (Order) returns (stream Order); }
"""


def parse(text: str, references=None) -> object:
    return FORMAT.parse(Schema(text, P, tuple(references or ())), {})


def test_text_and_descriptor_spellings_print_alike_and_the_print_compiles_to_itself():
    parsed = parse(RICH)
    again = parse(parsed.canonical)
    assert again.canonical == parsed.canonical
    assert again.parsed.file == parsed.parsed.file
    sent = base64.b64encode(parsed.parsed.file.SerializeToString()).decode()
    assert FORMAT.parse(Schema(sent, P), {}).canonical == parsed.canonical
    text = parsed.canonical
    for expected in [
        "required string id = 1;",
        "optional int32 count = 2 [default = 7];",
        "map<string, .acme.v1.Order.Line> lines = 7;",
        "oneof payment {",
        "int64 voucher = 9 [deprecated = true];",
        "reserved 20 to 25, 30;",
        "extensions 100 to max;",
        '[json_name = "theRatio"]',
        "option allow_alias = true;",
        "extend .acme.v1.Order {",
        "rpc Place (.acme.v1.Order) returns (stream .acme.v1.Order);",
        'option java_package = "com.acme";',
    ]:
        assert expected in text, expected


def test_the_stored_schema_is_the_printed_text_and_one_schema_has_one_id():
    registry = SchemaRegistry({P: FORMAT})
    version, entries = registry.register("a-value", Schema(RICH, P))
    assert version.schema.text.startswith('syntax = "proto2";\npackage acme.v1;')
    for entry in entries:
        registry.apply(entry)
    as_descriptor = base64.b64encode(parse(RICH).parsed.file.SerializeToString()).decode()
    assert registry.lookup("a-value", Schema(as_descriptor, P)).schema_id == version.schema_id
    assert registry.lookup("a-value", Schema(RICH.replace("\n", "\n\n  "), P)).schema_id == version.schema_id
    serialized = registry.formatted(version, "serialized")
    assert descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(serialized)).package == "acme.v1"
    assert registry.formatted(version, None) == version.schema.text


def test_references_resolve_imports_and_are_required():
    registry = SchemaRegistry({P: FORMAT})
    money = 'syntax = "proto3";\npackage common;\nmessage Money { int64 units = 1; }\n'
    for entry in registry.register("money", Schema(money, P))[1]:
        registry.apply(entry)
    order = 'syntax = "proto3";\nimport "common/money.proto";\nmessage Order { common.Money total = 1; }\n'
    with pytest.raises(RegistryError) as missing:
        registry.parse(Schema(order, P))
    assert missing.value.error_code == 42201 and "common/money.proto" in missing.value.message
    parsed = registry.parse(Schema(order, P, (SchemaReference("common/money.proto", "money", 1),)))
    assert "  .common.Money total = 1;" in parsed.canonical


@pytest.mark.parametrize(
    "text, detail",
    [
        ('syntax = "proto3";\nmessage X { strin a = 1; }', '"strin" is not defined'),
        ('syntax = "proto3";\nmessage X { int32 a = 1; int32 b = 1; }', "already been used"),
        (
            'syntax = "proto3";\nimport "google/api/http.proto";\nmessage X { google.api.Http a = 1; }',
            "'google/api/http.proto' is not a reference",
        ),
        ('edition = "2023";\nmessage X { int32 a = 1; }', "edition"),
        ('syntax = "proto2";\nmessage X { optional group G = 1 { optional int32 a = 2; } }', "groups"),
    ],
)
def test_bad_schemas_are_refused_with_a_reason(text, detail):
    with pytest.raises(ValueError, match=detail):
        parse(text)


def test_a_descriptor_naming_unknown_types_is_refused():
    file = descriptor_pb2.FileDescriptorProto(name="x.proto", syntax="proto3")
    message = file.message_type.add(name="X")
    message.field.add(
        name="a",
        number=1,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
        type_name=".nowhere.Y",
        label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
    )
    with pytest.raises(ValueError):
        FORMAT.parse(Schema(base64.b64encode(file.SerializeToString()).decode(), P), {})


def differences(old: str, new: str) -> list[str]:
    """What BACKWARD refuses: `new` reading data written with `old`."""
    return FORMAT.incompatibilities(parse(new), parse(old))


@pytest.mark.parametrize(
    "old, new, found",
    [
        ("message M { int32 a = 1; }", "message M { int32 b = 1; int32 c = 2; }", []),
        ("message M { int32 a = 1; int32 b = 2; }", "message M { int32 a = 1; }", []),
        ("package p;\nmessage M { int32 a = 1; }", "package q;\nmessage M { int32 a = 1; }", ["PACKAGE_CHANGED '#/'"]),
        (
            "message M { int32 a = 1; }\nmessage N { int32 a = 1; }",
            "message M { int32 a = 1; }",
            ["MESSAGE_REMOVED '#/N'"],
        ),
        ("message M { int32 a = 1; }", "message M { N a = 1; }\nmessage N {}", ["FIELD_KIND_CHANGED '#/M/1'"]),
        (
            "message M { map<string, int32> a = 1; }",
            "message M { map<string, string> a = 1; }",
            ["FIELD_SCALAR_KIND_CHANGED '#/M/1'"],
        ),
        (
            "message M { N a = 1; }\nmessage N { int32 x = 1; }",
            "message M { N a = 1; }\nmessage N { string x = 1; }",
            [
                "FIELD_SCALAR_KIND_CHANGED '#/N/1'",
                "FIELD_SCALAR_KIND_CHANGED '#/N/1'",
                "FIELD_NAMED_TYPE_CHANGED '#/M/1'",
            ],
        ),
        (
            "message M { int32 a = 1; int32 b = 2; }",
            "message M { oneof o { int32 a = 1; int32 b = 2; } }",
            ["MULTIPLE_FIELDS_MOVED_TO_ONEOF '#/M/o'"],
        ),
        ("message M { int32 a = 1; }", "message M { oneof o { int32 a = 1; int32 b = 2; } }", []),
        (
            "message M { int32 a = 1; oneof o { int32 b = 2; } }",
            "message M { oneof o { int32 a = 1; int32 b = 2; } }",
            ["FIELD_MOVED_TO_EXISTING_ONEOF '#/M/o'"],
        ),
        (
            "message M { oneof o { int32 a = 1; int32 b = 2; } }",
            "message M { oneof o { int32 a = 1; } }",
            ["ONEOF_FIELD_REMOVED '#/M/o/2'"],
        ),
        ("message M { E e = 1; }\nenum E { A = 0; B = 1; }", "message M { E e = 1; }\nenum E { A = 0; C = 2; }", []),
        ("message M { E e = 1; }\nenum E { A = 0; }", "message M { int64 e = 1; }", []),
    ],
)
def test_confluents_differences(old, new, found):
    messages = differences(f'syntax = "proto3";\n{old}', f'syntax = "proto3";\n{new}')
    shown = [m.replace("Difference{fullPath=", "").replace(", type=", " ").rstrip("}") for m in messages]
    assert sorted(f"{s.split()[1]} {s.split()[0]}" for s in shown) == sorted(found)


def test_a_required_field_added_or_removed_is_incompatible():
    old = 'syntax = "proto2";\nmessage M { optional int32 a = 1; }'
    new = 'syntax = "proto2";\nmessage M { optional int32 a = 1; required int32 b = 2; }'
    assert differences(old, new) == ["Difference{fullPath='#/M/2', type=REQUIRED_FIELD_ADDED}"]
    assert differences(new, old) == ["Difference{fullPath='#/M/2', type=REQUIRED_FIELD_REMOVED}"]


# bool is a general number to Confluent too, but it reads any varint as True, so the value 1 written
# by the oracle below could not tell a zigzag-encoded sint from a plain one: it is left out.
SCALARS = [
    "int32",
    "int64",
    "uint32",
    "uint64",
    "sint32",
    "sint64",
    "fixed32",
    "sfixed32",
    "fixed64",
    "sfixed64",
    "float",
    "double",
    "string",
    "bytes",
]


@st.composite
def message_pairs(draw):
    numbers = draw(st.lists(st.integers(1, 12), min_size=1, max_size=6, unique=True))
    old = {n: (f"f{n}", draw(st.sampled_from(SCALARS))) for n in numbers}
    new = {}
    for n, (name, kind) in old.items():
        change = draw(st.sampled_from(["keep", "drop", "rename", "retype"]))
        if change == "keep":
            new[n] = (name, kind)
        elif change == "rename":
            new[n] = (f"g{n}", kind)
        elif change == "retype":
            new[n] = (name, draw(st.sampled_from(SCALARS)))
    for n in draw(st.lists(st.integers(13, 20), max_size=2, unique=True)):
        new[n] = (f"f{n}", draw(st.sampled_from(SCALARS)))
    return old, new


def _text(fields: dict[int, tuple[str, str]]) -> str:
    body = " ".join(f"{kind} {name} = {n};" for n, (name, kind) in sorted(fields.items()))
    return f'syntax = "proto3";\npackage gen;\nmessage M {{ {body} }}\n'


def _message_class(parsed) -> type:
    assert isinstance(parsed.parsed, ProtobufParsed)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(parsed.parsed.file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("gen.M"))


ONE = {"string": "x", "bytes": b"x", "float": 1.0, "double": 1.0}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(message_pairs())
def test_compatibility_agrees_with_protobuf_reading_old_bytes_with_the_new_schema(pair):
    """Compatible by Confluent's rules exactly when every field both schemas number keeps its value."""
    old_fields, new_fields = pair
    old, new = parse(_text(old_fields)), parse(_text(new_fields))
    assert parse(old.canonical).canonical == old.canonical
    written = _message_class(old)(**{name: ONE.get(kind, 1) for name, kind in old_fields.values()})
    read = _message_class(new).FromString(written.SerializeToString())
    survives = all(getattr(read, new_fields[n][0]) in (1, "x", b"x") for n in old_fields.keys() & new_fields.keys())
    assert (not FORMAT.incompatibilities(new, old)) == survives, (old.canonical, new.canonical)


DEFAULTS = {
    "int32": "-5",
    "uint64": "7",
    "sint32": "3",
    "double": "1.5",
    "float": "-0.25",
    "bool": "true",
    "string": '"a\\"b\\\\c\\n"',
    "bytes": '"\\001x"',
}


@st.composite
def proto_files(draw):
    """A .proto file with what the printer must reproduce: labels, defaults, oneofs, maps, nested and
    self references, enums with aliases and reserved values, reserved ranges and names, json_name."""
    proto2 = draw(st.booleans())
    count = draw(st.integers(1, 3))
    messages = []
    for m in range(count):
        numbers = draw(st.lists(st.integers(1, 40), min_size=1, max_size=7, unique=True))
        fields, oneof = [], []
        for n in numbers:
            kind = draw(st.sampled_from([*DEFAULTS, "E", "M0", "M0.N", f"M{count - 1}", "map"]))
            if kind == "map":
                key = draw(st.sampled_from(["string", "int32", "bool", "fixed64"]))
                value = draw(st.sampled_from(["string", "E", "M0", "bytes"]))
                fields.append(f"map<{key}, {value}> f{n} = {n};")
                continue
            if kind in DEFAULTS and not proto2 and draw(st.booleans()):
                oneof.append(f"{kind} f{n} = {n};")
                continue
            label = draw(
                st.sampled_from(["optional", "required", "repeated"] if proto2 else ["", "optional", "repeated"])
            )
            options = []
            if proto2 and label == "optional" and kind in DEFAULTS and draw(st.booleans()):
                options.append(f"default = {DEFAULTS[kind]}")
            if proto2 and label == "optional" and kind == "E" and draw(st.booleans()):
                options.append("default = B")
            if draw(st.integers(0, 5)) == 0:
                options.append(f'json_name = "j{n}"')
            suffix = f" [{', '.join(options)}]" if options else ""
            fields.append(f"{label} {kind} f{n} = {n}{suffix};".strip())
        body = " ".join(fields)
        if oneof:
            body += " oneof choice { " + " ".join(oneof) + " }"
        if draw(st.booleans()):
            body += ' reserved 100 to 110, 200; reserved "gone";'
        if m == 0:
            body += " message N { " + ("optional " if proto2 else "") + "int32 x = 1; }"
        messages.append(f"message M{m} {{ {body} }}")
    enum = 'enum E { option allow_alias = true; A = 0; B = 1; C = 1; reserved 5 to 9; reserved "OLD"; }'
    return f'syntax = "{"proto2" if proto2 else "proto3"}";\npackage gen.v1;\n' + "\n".join(messages) + "\n" + enum


def _normalised(text: str) -> descriptor_pb2.FileDescriptorProto:
    file = [f for f in compile_files({"gen.proto": text}).file if f.name == "gen.proto"][0]
    file.name = ""
    return file


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(proto_files())
def test_the_printed_text_compiles_to_the_same_descriptor(text):
    from trafka.adapters.schema_registry.proto_text import proto_text

    original = _normalised(text)
    assert _normalised(proto_text(original)) == original, proto_text(original)


def test_a_reference_name_outside_the_import_root_is_refused():
    money = parse('syntax = "proto3";\nmessage Money { int64 units = 1; }\n')
    for name in ("../escape.proto", "/etc/escape.proto"):
        with pytest.raises(ValueError, match="relative import path"):
            FORMAT.parse(
                Schema(
                    f'syntax = "proto3";\nimport "{name}";\nmessage X {{ Money m = 1; }}\n',
                    P,
                    (SchemaReference(name, "money", 1),),
                ),
                {name: money},
            )


def test_google_types_are_imported_without_references():
    text = (
        'syntax = "proto3";\nimport "google/type/money.proto";\nimport "google/type/date.proto";\n'
        "message Price { google.type.Money amount = 1; google.type.Date valid_until = 2; }\n"
    )
    parsed = parse(text)
    assert "  .google.type.Money amount = 1;" in parsed.canonical
    sent = base64.b64encode(parsed.parsed.file.SerializeToString()).decode()
    assert FORMAT.parse(Schema(sent, P), {}).canonical == parsed.canonical
