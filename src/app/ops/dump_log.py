"""`trafka dump-log FILE...`, as `kafka-dump-log.sh`: what is inside log segments and their indexes.

Reads files only (opened read-only, no lock, no broker), written by Kafka or by trafka. A `.log`
prints one line per batch (Kafka's fields: offsets, producer, sequence, epoch, position, timestamp,
size, codec, CRC and whether it is valid); with `--print-data-log` (or `--deep-iteration`) one line per
record too. An `.index` or `.timeindex` prints its entries; `--verify-index-only` checks them against
the segment beside it and prints only mismatches. `--cluster-metadata-decoder`, `--offsets-decoder`,
`--transaction-log-decoder` and `--share-group-state-decoder` print the payloads of `__cluster_metadata`,
`__consumer_offsets`, `__transaction_state` and `__share_group_state` records as JSON. Batch headers and internal records are read by `log_records`
and records with the broker's own decoders (`trafka.schema_codec`, ADR 101; no broker imported, as for
every operator command). `-o json` gives the same as objects.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .output import ERROR, OK, fail

if TYPE_CHECKING:
    from .log_records import BatchHeader

# The record classes (trafka's schema codec) load when a file is dumped, so that the
# other commands and `trafka --help` do not pay for them (ADR 70).

_CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
_INDEX_ENTRY = struct.Struct(">ii")
_TIME_ENTRY = struct.Struct(">qi")
_DELETE_HORIZON_FLAG = 0x40


def add_dump_log_parser(commands: Any) -> None:
    dump = commands.add_parser("dump-log", help="print the batches, records and index entries of log files")
    dump.add_argument("files", nargs="+", metavar="FILE", help=".log, .index or .timeindex files")
    dump.add_argument("--print-data-log", action="store_true", help="records too, with keys and payloads")
    dump.add_argument("--deep-iteration", action="store_true", help="records too, without their contents")
    dump.add_argument("--verify-index-only", action="store_true", help="only index entries that do not match the log")
    dump.add_argument("--max-bytes", type=int, default=2**31 - 1, help="read at most this many bytes of each .log")
    decoders = dump.add_mutually_exclusive_group()
    decoders.add_argument("--cluster-metadata-decoder", action="store_true")
    decoders.add_argument("--offsets-decoder", action="store_true")
    decoders.add_argument("--transaction-log-decoder", action="store_true")
    decoders.add_argument("--share-group-state-decoder", action="store_true")
    dump.add_argument("-o", "--output", choices=("text", "json"), default="text")


def _read(path: str, limit: int = 2**31 - 1) -> bytes:
    with open(path, "rb") as file:  # read-only and unlocked: safe beside a running broker
        return file.read(limit)


def iter_batches(data: bytes) -> Iterator[tuple[int, BatchHeader | None, bytes]]:
    """(position, header, batch bytes); a last None header marks bytes that are no complete batch."""
    from .log_records import HEADER_SIZE, BatchHeader

    pos = 0
    while pos < len(data):
        if len(data) - pos < HEADER_SIZE:
            yield pos, None, data[pos:]
            return
        header = BatchHeader.parse(data, pos)
        if header.batch_length < HEADER_SIZE - 12 or pos + header.size > len(data):
            yield pos, None, data[pos:]
            return
        yield pos, header, data[pos : pos + header.size]
        pos += header.size


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("utf-8", errors="replace")


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _decode(args: argparse.Namespace, key: bytes | None, value: bytes | None) -> tuple[Any, Any]:
    """The record's key and payload as printed: decoded internal records, else UTF-8 text."""
    from .log_records import (
        CONSUMER_GROUP_RECORDS,
        METADATA_TYPES,
        SHARE_GROUP_RECORDS,
        STREAMS_GROUP_RECORDS,
        GroupMetadataKey,
        GroupMetadataValue,
        OffsetCommitKey,
        OffsetCommitValue,
        ShareSnapshotKey,
        ShareSnapshotValue,
        ShareUpdateKey,
        ShareUpdateValue,
        TransactionLogKey,
        TransactionLogValue,
        decode_metadata_record,
        decode_versioned,
    )

    if args.cluster_metadata_decoder and value is not None:
        record = decode_metadata_record(value)
        record_type = value[1] if len(value) > 1 else -1
        data = None if record is None else _jsonable(record.to_dict())
        cls = METADATA_TYPES.get(record_type)
        return None, {
            "type": record_type if cls is None else cls.__name__,
            "version": value[2] if len(value) > 2 else None,
            "data": data,
        }
    pairs: dict[str, tuple[Any, Any]] = {
        "offsets": (OffsetCommitKey, OffsetCommitValue),
        "transaction": (TransactionLogKey, TransactionLogValue),
        "share": (ShareSnapshotKey, ShareSnapshotValue),
    }
    which = (
        "offsets"
        if args.offsets_decoder
        else "transaction"
        if args.transaction_log_decoder
        else "share"
        if args.share_group_state_decoder
        else None
    )
    if which is None:
        return _text(key), _text(value)
    key_class, value_class = pairs[which]
    decoded_key: Any = _text(key)
    if key is not None and len(key) >= 2:
        version = int.from_bytes(key[:2], "big")
        if which == "offsets" and version == 2:  # GroupMetadataKey
            key_class, value_class = GroupMetadataKey, GroupMetadataValue
        if which == "offsets" and version in CONSUMER_GROUP_RECORDS:  # KIP-848 consumer groups
            key_class, value_class = CONSUMER_GROUP_RECORDS[version]
        if which == "offsets" and version in SHARE_GROUP_RECORDS:  # KIP-932 share groups
            key_class, value_class = SHARE_GROUP_RECORDS[version]
        if which == "offsets" and version in STREAMS_GROUP_RECORDS:  # KIP-1071 streams groups
            key_class, value_class = STREAMS_GROUP_RECORDS[version]
        if which == "share" and version == 1:  # ShareUpdate, between snapshots
            key_class, value_class = ShareUpdateKey, ShareUpdateValue
        if version <= key_class.max_version:
            decoded_key = {"type": str(version), "data": _jsonable(decode_versioned(key_class, key).to_dict())}
        else:
            decoded_key = {"type": str(version), "data": "unknown"}
    decoded_value: Any = None
    if value is not None and isinstance(decoded_key, dict) and decoded_key["data"] != "unknown":
        version = int.from_bytes(value[:2], "big")
        decoded_value = {"version": str(version), "data": _jsonable(decode_versioned(value_class, value).to_dict())}
    return decoded_key, decoded_value


def batch_fields(pos: int, header: BatchHeader, batch: bytes) -> dict[str, Any]:
    import crc32c

    from .log_records import CRC_START

    has_sequence = header.base_sequence >= 0
    last_sequence = (header.base_sequence + header.last_offset_delta) % 2**31 if has_sequence else -1
    return {
        "baseOffset": header.base_offset,
        "lastOffset": header.last_offset,
        "count": header.records_count,
        "baseSequence": header.base_sequence,
        "lastSequence": last_sequence,
        "producerId": header.producer_id,
        "producerEpoch": header.producer_epoch,
        "partitionLeaderEpoch": header.partition_leader_epoch,
        "isTransactional": header.is_transactional,
        "isControl": header.is_control,
        "deleteHorizonMs": header.base_timestamp if header.attributes & _DELETE_HORIZON_FLAG else None,
        "position": pos,
        "timestampType": "LogAppendTime" if header.is_log_append_time else "CreateTime",
        "timestamp": header.max_timestamp,
        "size": header.size,
        "magic": header.magic,
        "compresscodec": _CODECS.get(header.compression, str(header.compression)),
        "crc": header.crc,
        "isvalid": crc32c.crc32c(memoryview(batch)[CRC_START:]) == header.crc,
    }


def record_fields(args: argparse.Namespace, batch: bytes, header: BatchHeader) -> list[dict[str, Any]]:
    from trafka.adapters.compression import decompress

    from .log_records import decode_records

    out = []
    for record in decode_records(batch, decompress):
        fields: dict[str, Any] = {
            "offset": record.offset,
            "timestampType": batch_fields(0, header, batch)["timestampType"],
            "timestamp": record.timestamp,
            "keySize": -1 if record.key is None else len(record.key),
            "valueSize": -1 if record.value is None else len(record.value),
            "sequence": (header.base_sequence + record.offset - header.base_offset) % 2**31
            if header.base_sequence >= 0
            else -1,
            "headerKeys": [k for k, _ in record.headers],
        }
        if header.is_control and record.key is not None and len(record.key) >= 4:
            control_type = int.from_bytes(record.key[2:4], "big")
            fields["controlType"] = {0: "ABORT", 1: "COMMIT"}.get(control_type, control_type)
        elif args.print_data_log:
            fields["key"], fields["payload"] = _decode(args, record.key, record.value)
        out.append(fields)
    return out


def _line(fields: dict[str, Any], prefix: str = "") -> str:
    parts = []
    for name, value in fields.items():
        if name == "timestampType":
            continue
        if name == "timestamp":
            name = fields["timestampType"]
        if name == "deleteHorizonMs":
            value = "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"
        if name == "headerKeys":
            value = "[" + ",".join(value) + "]"
        if name == "key" and value is None:
            continue
        if isinstance(value, bool):
            value = str(value).lower()
        elif isinstance(value, (dict, list)):
            value = json.dumps(value, separators=(",", ":"))
        parts.append(f"{name}: {value}")
    return prefix + " ".join(parts)


def dump_segment(path: str, args: argparse.Namespace) -> dict[str, Any]:
    data = _read(path, args.max_bytes)
    batches, trailing = [], None
    for pos, header, batch in iter_batches(data):
        if header is None:
            trailing = {"position": pos, "bytes": len(batch)}
            break
        fields = batch_fields(pos, header, batch)
        if (args.print_data_log or args.deep_iteration) and fields["isvalid"]:
            fields["records"] = record_fields(args, batch, header)
        batches.append(fields)
    base = int(os.path.basename(path)[:-4]) if os.path.basename(path)[:-4].isdigit() else 0
    return {"file": path, "logStartingOffset": base, "batches": batches, "invalidTrailingBytes": trailing}


def _entries(path: str, entry: struct.Struct) -> list[tuple[int, int]]:
    data = _read(path)
    entries = [entry.unpack_from(data, i) for i in range(0, len(data) - len(data) % entry.size, entry.size)]
    # A preallocated (Kafka's active segment) index ends in zeroed entries: they are not entries.
    while len(entries) > 1 and entries[-1] == (0, 0):
        entries.pop()
    return [] if entries == [(0, 0)] and entry is _TIME_ENTRY else entries


def dump_index(path: str, args: argparse.Namespace) -> dict[str, Any]:
    stem = path[: -len(".timeindex")] if path.endswith(".timeindex") else path[: -len(".index")]
    base = int(os.path.basename(stem)) if os.path.basename(stem).isdigit() else 0
    log_path = stem + ".log"
    batches = {}
    if os.path.exists(log_path):
        batches = {pos: header for pos, header, _ in iter_batches(_read(log_path)) if header is not None}
    by_last_offset = {h.last_offset: h for h in batches.values()}
    entries, mismatches = [], []
    if path.endswith(".timeindex"):
        for timestamp, relative in _entries(path, _TIME_ENTRY):
            entry = {"timestamp": timestamp, "offset": base + relative}
            entries.append(entry)
            header = by_last_offset.get(entry["offset"])
            if batches and (header is None or header.max_timestamp > timestamp):
                mismatches.append({**entry, "logTimestamp": None if header is None else header.max_timestamp})
    else:
        for relative, position in _entries(path, _INDEX_ENTRY):
            entry = {"offset": base + relative, "position": position}
            entries.append(entry)
            header = batches.get(position)
            if batches and (header is None or header.last_offset != entry["offset"]):
                mismatches.append({**entry, "logOffset": None if header is None else header.last_offset})
    return {"file": path, "entries": [] if args.verify_index_only else entries, "mismatches": mismatches}


def _print_text(result: dict[str, Any], out: Any) -> None:
    print(f"Dumping {result['file']}", file=out)
    if "batches" in result:
        print(f"Log starting offset: {result['logStartingOffset']}", file=out)
        for batch in result["batches"]:
            records = batch.pop("records", [])
            print(_line(batch), file=out)
            for record in records:
                print(_line(record, "| "), file=out)
        if result["invalidTrailingBytes"]:
            trailing = result["invalidTrailingBytes"]
            print(f"Found {trailing['bytes']} invalid bytes at the end of {os.path.basename(result['file'])}", file=out)
        return
    for entry in result["entries"]:
        print(" ".join(f"{k}: {v}" for k, v in entry.items()), file=out)
    for bad in result["mismatches"]:
        if "logOffset" in bad:
            print(f"Index offset: {bad['offset']}, log offset: {bad['logOffset']}", file=out)
        else:
            print(
                f"Found timestamp mismatch in :{result['file']}\n  Index timestamp: {bad['timestamp']}, "
                f"log timestamp: {bad['logTimestamp']}",
                file=out,
            )


def run_dump_log(args: argparse.Namespace) -> int:
    status, results = OK, []
    for path in args.files:
        try:
            if path.endswith(".log"):
                result = dump_segment(path, args)
            elif path.endswith((".index", ".timeindex")):
                result = dump_index(path, args)
            else:
                status = fail(f"{path}: not a .log, .index or .timeindex file")
                continue
        except OSError as exc:
            status = fail(f"cannot read {path}: {exc.strerror}")
            continue
        if result.get("mismatches"):
            status = ERROR
        results.append(result)
        if args.output == "text":
            _print_text(result, sys.stdout)
    if args.output == "json":
        json.dump(results, sys.stdout, indent=2)
        sys.stdout.write("\n")
    return status
