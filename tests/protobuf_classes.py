"""Protobuf message classes built at test time from `.proto` text: protoc (grpcio-tools) compiles
the files into a FileDescriptorSet, a fresh DescriptorPool takes it, and protobuf's message factory
makes the classes. Each call gets its own pool, so two versions of one schema live side by side and
nothing generated is committed."""

from __future__ import annotations

import os
import tempfile

import google.type
import grpc_tools
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_tools import protoc

INCLUDE = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
GOOGLE_TYPES_ROOT = os.path.dirname(os.path.dirname(next(iter(google.type.__path__))))  # googleapis-common-protos


def compile_files(files: dict[str, str]) -> descriptor_pb2.FileDescriptorSet:
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(tmp, name)), exist_ok=True)
            with open(os.path.join(tmp, name), "w") as out:
                out.write(text)
        out_path = os.path.join(tmp, "set.pb")
        assert (
            protoc.main(
                [
                    "protoc",
                    f"-I{tmp}",
                    f"-I{INCLUDE}",
                    f"-I{GOOGLE_TYPES_ROOT}",
                    "--include_imports",
                    f"--descriptor_set_out={out_path}",
                    *files,
                ]
            )
            == 0
        ), files
        compiled = descriptor_pb2.FileDescriptorSet()
        with open(out_path, "rb") as result:
            compiled.ParseFromString(result.read())
    return compiled


def message_classes(files: dict[str, str]) -> dict[str, type]:
    """Every message class of the files, by full name."""
    pool = descriptor_pool.DescriptorPool()
    for file in compile_files(files).file:
        pool.Add(file)
    classes = {}
    for name in files:
        for message in pool.FindFileByName(name).message_types_by_name.values():
            classes[message.full_name] = message_factory.GetMessageClass(message)
    return classes
