"""Kafka's JSON schemas are one leaf package, `trafka.kafka_schemas`, shared by the broker and the
operator commands (which import nothing else of the broker, ADR 15): no copies to keep in step."""

from __future__ import annotations

import ast
import pathlib

SRC = next(p for p in pathlib.Path(__file__).resolve().parents if (p / "pyproject.toml").exists()) / "src"
SCHEMAS = SRC / "kafka_schemas"


def test_the_schemas_are_one_package_with_every_message_the_broker_and_the_commands_use():
    names = {p.stem for p in SCHEMAS.glob("*.json")}
    # the internal topics' records dump-log decodes, and the KIP-848, KIP-932 and KIP-714 messages
    assert {"TopicRecord", "OffsetCommitValue", "ShareUpdateValue", "ConsumerGroupDescribeRequest"} <= names
    assert {"ShareFetchRequest", "PushTelemetryRequest", "DescribeShareGroupOffsetsResponse"} <= names
    # every request and response the broker serves (ADR 92), with Kafka 4.4's TxnOffsetCommit v6 and
    # DeleteGroups v3 (issue 38)
    # and KIP-1071's 16 (issue 37), StreamsGroupTopologyDescriptionUpdate (Kafka 4.4, issue 38), the
    # delegation tokens' 8 messages and 2 records (ADR 139)
    assert len(names) == 200
    assert not [p for p in SRC.rglob("*.json") if p.parent != SCHEMAS and "schemas" in p.parent.name]


def test_the_schema_package_is_a_leaf_that_imports_nothing():
    tree = ast.parse((SCHEMAS / "__init__.py").read_text())
    assert [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)] == []
    assert sorted(p.name for p in SCHEMAS.glob("*.py")) == ["__init__.py"]


def test_the_operator_commands_and_the_broker_decode_internal_records_with_one_decoder():
    """ADR 101: `dump-log` prints the internal topics' records with the decoder the stores replay them
    with (`trafka.schema_codec.internal_records`), not a second copy."""
    from trafka.adapters.filesystem import metadata_records
    from trafka.app.ops import log_records
    from trafka.schema_codec import internal_records, messages

    for name in ("decode_metadata_record", "decode_versioned", "METADATA_TYPES", "CONSUMER_GROUP_RECORDS"):
        assert getattr(log_records, name) is getattr(internal_records, name) is getattr(metadata_records, name)
    assert log_records.OffsetCommitKey is messages.OffsetCommitKey is metadata_records.OffsetCommitKey
