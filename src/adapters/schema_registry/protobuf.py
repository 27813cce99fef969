"""Protobuf schemas: `.proto` text compiled by protoc (grpcio-tools), or the base64 FileDescriptorProto
confluent-kafka's `ProtobufSerializer` sends; stored and answered as `.proto` text.

A schema string that is valid base64 of a FileDescriptorProto is taken as one (what confluent-kafka's
Python, Go and .NET serializers register); anything else is `.proto` text, compiled in-process by
protoc from a temporary directory holding it, its references (each under its reference name, the
import path) and protobuf's well-known types. Either way the descriptor is printed as `.proto` text
(`proto_text.py`) and that text compiled again: the registry stores and compares that text, as
Confluent stores `ProtobufSchema.canonicalString()`, so the same schema gets the same id however it
was sent, and what is stored is known to compile. Dependencies must be references, except
`google/protobuf/*.proto` and `google/type/*.proto`, which clients skip (`skip.known.types`).

`formatted(parsed, "serialized")` is the base64 FileDescriptorProto Confluent answers to
`?format=serialized`, which confluent-kafka's deserializer asks for. Compatibility is Confluent's
`SchemaDiff` (`protobuf_diff.py`).
"""

from __future__ import annotations

import base64
import binascii
import functools
import importlib
import os
import pkgutil
import tempfile
from collections import OrderedDict
from collections.abc import Mapping

import google.type
import grpc_tools
from google.protobuf import (
    any_pb2,
    api_pb2,
    descriptor_pb2,
    descriptor_pool,
    duration_pb2,
    empty_pb2,
    field_mask_pb2,
    source_context_pb2,
    struct_pb2,
    timestamp_pb2,
    type_pb2,
    wrappers_pb2,
)
from google.protobuf.message import DecodeError
from grpc_tools import _protoc_compiler, protoc

from trafka.domain.schema_registry import ParsedSchema, Schema, SchemaType

from .proto_text import proto_text
from .protobuf_diff import COMPATIBLE, collect_types, differences

WELL_KNOWN = [
    any_pb2,
    source_context_pb2,
    type_pb2,
    api_pb2,
    descriptor_pb2,
    duration_pb2,
    empty_pb2,
    field_mask_pb2,
    struct_pb2,
    timestamp_pb2,
    wrappers_pb2,
]
INCLUDE = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
GOOGLE_TYPES_ROOT = os.path.dirname(os.path.dirname(next(iter(google.type.__path__))))
MAIN_FILE = "default"  # the name Confluent's clients give the schema's own file
SOURCE_NAME = "__trafka_schema__.proto"
PARSED_CACHE = 1024  # schemas whose compilation is remembered (a registration parses twice, a replay once)


class ProtobufParsed:
    """A compiled schema: its file, the files it depends on (by import name), and their references."""

    def __init__(
        self,
        file: descriptor_pb2.FileDescriptorProto,
        dependencies: dict[str, descriptor_pb2.FileDescriptorProto],
        references: dict[str, tuple[str, int]],
    ) -> None:
        self.file = file
        self.dependencies = dependencies
        self.references = references
        self.types = collect_types([(dep, references.get(name)) for name, dep in dependencies.items()] + [(file, None)])


def _decode_descriptor(text: str) -> descriptor_pb2.FileDescriptorProto | None:
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    file = descriptor_pb2.FileDescriptorProto()
    try:
        file.ParseFromString(raw)
    except DecodeError:
        return None
    return file


@functools.cache
def builtin_files() -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """The files clients import without a reference (`skip.known.types`): protobuf's well-known types
    and googleapis' `google/type/*.proto` (googleapis-common-protos), by import name."""
    modules = list(WELL_KNOWN)
    for info in pkgutil.iter_modules(google.type.__path__):
        if info.name.endswith("_pb2"):
            modules.append(importlib.import_module(f"google.type.{info.name}"))
    return {
        m.DESCRIPTOR.name: descriptor_pb2.FileDescriptorProto.FromString(m.DESCRIPTOR.serialized_pb) for m in modules
    }


def _check(
    file: descriptor_pb2.FileDescriptorProto, dependencies: Mapping[str, descriptor_pb2.FileDescriptorProto]
) -> None:
    """Resolve the file's types in a pool of its dependencies; ValueError naming what is missing."""
    available = {**builtin_files(), **dependencies}
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(dep: descriptor_pb2.FileDescriptorProto) -> None:
        for name in dep.dependency:
            if name not in available:
                raise ValueError(f"import {name!r} is not a reference (register it and name it in references)")
            if name not in added:
                added.add(name)
                add(available[name])
        pool.Add(dep)

    try:
        add(file)
    except (TypeError, KeyError) as exc:
        raise ValueError(str(exc).splitlines()[0]) from None


def compile_text(
    text: str, dependencies: Mapping[str, descriptor_pb2.FileDescriptorProto]
) -> descriptor_pb2.FileDescriptorProto:
    """protoc's FileDescriptorProto of `.proto` text; ValueError with protoc's first error."""
    with tempfile.TemporaryDirectory(prefix="trafka-proto-") as tmp:
        for name, dep in dependencies.items():
            if name in builtin_files():
                continue
            path = os.path.join(tmp, name)
            if os.path.commonpath([tmp, os.path.realpath(path)]) != os.path.realpath(tmp):
                raise ValueError(f"reference name {name!r} is not a relative import path")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as out:
                out.write(proto_text(dep))
        with open(os.path.join(tmp, SOURCE_NAME), "w", encoding="utf-8") as out:
            out.write(text)
        try:
            _protoc_compiler.get_protos(
                SOURCE_NAME.encode(), [tmp.encode(), INCLUDE.encode(), GOOGLE_TYPES_ROOT.encode()]
            )
        except _protoc_compiler.ProtocErrors as exc:
            raise ValueError(str(exc).splitlines()[0].replace(SOURCE_NAME, "schema")) from None
        out_path = os.path.join(tmp, "out.pb")
        include = [f"-I{tmp}", f"-I{INCLUDE}", f"-I{GOOGLE_TYPES_ROOT}"]
        if protoc.main(["protoc", *include, f"--descriptor_set_out={out_path}", SOURCE_NAME]) != 0:
            raise ValueError("protoc could not compile the schema")
        files = descriptor_pb2.FileDescriptorSet()
        with open(out_path, "rb") as result:
            files.ParseFromString(result.read())
    file = files.file[0]
    file.name = MAIN_FILE
    return file


class ProtobufFormat:
    """Compiling takes milliseconds on the broker's thread, so the last `PARSED_CACHE` schemas are
    remembered, by text and by printed text, with their references."""

    schema_type = SchemaType.PROTOBUF

    def __init__(self) -> None:
        self._parsed: OrderedDict[tuple, ParsedSchema] = OrderedDict()

    def parse(self, schema: Schema, references: Mapping[str, ParsedSchema]) -> ParsedSchema:
        refs = (schema.references, tuple(sorted((name, ref.canonical) for name, ref in references.items())))
        found = self._parsed.get((schema.text, refs))
        if found is None:
            found = self._compile(schema, references)
            for key in ((schema.text, refs), (found.canonical, refs)):
                self._parsed[key] = found
                while len(self._parsed) > PARSED_CACHE:
                    self._parsed.popitem(last=False)
        self._parsed.move_to_end((schema.text, refs))
        return found

    def _compile(self, schema: Schema, references: Mapping[str, ParsedSchema]) -> ParsedSchema:
        dependencies: dict[str, descriptor_pb2.FileDescriptorProto] = {}
        refs: dict[str, tuple[str, int]] = {ref.name: (ref.subject, ref.version) for ref in schema.references}
        for name, ref in references.items():
            parsed = ref.parsed
            assert isinstance(parsed, ProtobufParsed)
            dependencies.update(parsed.dependencies)
            refs.update({k: v for k, v in parsed.references.items() if k not in refs})
            file = descriptor_pb2.FileDescriptorProto()
            file.CopyFrom(parsed.file)
            file.name = name
            dependencies[name] = file
        given = _decode_descriptor(schema.text)
        if given is not None:
            _check(given, dependencies)
            text = proto_text(given)
        else:
            text = schema.text
        file = compile_text(text, dependencies)
        _check(file, dependencies)  # protoc also finds other files on its include paths
        canonical = proto_text(file)
        return ParsedSchema(
            Schema(canonical, schema.schema_type, schema.references),
            canonical,
            ProtobufParsed(file, dependencies, refs),
        )

    def incompatibilities(self, reader: ParsedSchema, writer: ParsedSchema) -> list[str]:
        r, w = reader.parsed, writer.parsed
        assert isinstance(r, ProtobufParsed) and isinstance(w, ProtobufParsed)
        found = differences(w.file, w.types, r.file, r.types)
        return [str(f) for f in found if f.type not in COMPATIBLE]

    def formatted(self, parsed: ParsedSchema, fmt: str) -> str:
        """The schema in a `?format=`: `serialized` is the base64 FileDescriptorProto."""
        if fmt == "serialized":
            p = parsed.parsed
            assert isinstance(p, ProtobufParsed)
            return base64.standard_b64encode(p.file.SerializeToString()).decode("ascii")
        return parsed.schema.text
