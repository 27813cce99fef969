#!/usr/bin/env python3
"""What a PROTOBUF schema costs the broker's Trio thread: the registry's calls run on it, unthreaded.

Times, in-process and median of `--runs` rounds of `--count` calls each:
- **parse text**: `.proto` text compiled by protoc (grpcio-tools) from a temporary directory, printed
  and compiled again (what the first registration, lookup or check of a text pays; the format then
  remembers it: **parse again**);
- **parse descriptor**: the base64 FileDescriptorProto confluent-kafka's ProtobufSerializer sends;
- **compatibility**: Confluent's SchemaDiff of two versions (what each earlier version costs a check);
- **register**: `--count` distinct schemas registered into a fresh `SchemaRegistry` and applied (a
  registration: parse, plan, apply);
- **replay**: those entries applied to another fresh registry, as a broker restart replays `_schemas`.

Prints milliseconds per call and a machine line; `--json` prints one JSON object instead.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

from trafka.adapters.schema_registry import ProtobufFormat
from trafka.domain.schema_registry import Schema, SchemaRegistry, SchemaType

P = SchemaType.PROTOBUF
TEXT = """
syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
message User {
  string name = 1;
  int64 id = 2;
  google.protobuf.Timestamp joined = 3;
  map<string, int32> scores = 4;
  repeated Address addresses = 5;
  Kind kind = 6;
  oneof contact { string email = 7; string phone = 8; }
  enum Kind { PERSON = 0; COMPANY = 1; }
}
message Address { string street = 1; string city = 2; int32 zip = 3; }
"""


def per_call(fn, count: int, runs: int) -> float:
    rounds = []
    for _ in range(runs):
        start = time.perf_counter()
        for i in range(count):
            fn(i)
        rounds.append((time.perf_counter() - start) / count * 1000)
    return statistics.median(rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    fmt = ProtobufFormat()
    parsed = fmt.parse(Schema(TEXT, P), {})
    descriptor = fmt.formatted(parsed, "serialized")
    newer = fmt.parse(Schema(TEXT.replace("int32 zip = 3;", "int32 zip = 3; string country = 4;"), P), {})

    log = []

    def register(_: int) -> None:
        registry = SchemaRegistry({P: ProtobufFormat()})
        log.clear()
        for n in range(args.count):
            text = TEXT.replace("zip = 3;", f"zip = 3; int32 f{n} = 9;")
            for entry in registry.register(f"s{n}-value", Schema(text, P))[1]:
                registry.apply(entry)
                log.append(entry)

    def replay(_: int) -> None:
        registry = SchemaRegistry({P: ProtobufFormat()})
        for entry in log:
            registry.apply(entry)

    results = {
        "parse_text_ms": per_call(lambda i: ProtobufFormat().parse(Schema(TEXT, P), {}), args.count, args.runs),
        "parse_again_ms": per_call(lambda i: fmt.parse(Schema(TEXT, P), {}), args.count, args.runs),
        "parse_descriptor_ms": per_call(
            lambda i: ProtobufFormat().parse(Schema(descriptor, P), {}), args.count, args.runs
        ),
        "compatibility_ms": per_call(lambda i: fmt.incompatibilities(newer, parsed), args.count, args.runs),
        "register_ms_per_schema": per_call(register, 1, args.runs) / args.count,
        "replay_ms_per_schema": per_call(replay, 1, args.runs) / args.count,
        "machine": f"{platform.processor() or platform.machine()}; cores: {os.cpu_count()}; Python {platform.python_version()}",
    }
    if args.json:
        print(json.dumps(results))
        return
    for name, value in results.items():
        print(f"{name:24} {value:.3f}" if isinstance(value, float) else f"{name:24} {value}")


if __name__ == "__main__":
    main()
