"""`dump-log` decodes the internal topics' records with its own copies of Kafka's JSON schemas (the
operator commands import nothing of the broker, ADR 15): each copy is the broker's file, byte for byte."""

from __future__ import annotations

import pathlib

import pytest

SRC = next(p for p in pathlib.Path(__file__).resolve().parents if (p / "pyproject.toml").exists()) / "src"
COPIES = sorted((SRC / "app" / "ops" / "schemas").glob("*.json"))


def test_dump_log_has_the_schemas_of_every_internal_record_it_decodes():
    # with the share group, ShareSnapshot and ShareUpdate records, ConsumerGroupDescribe, and for trafka group
    # describe and reset-offsets of share groups ShareGroupDescribe, Describe/AlterShareGroupOffsets
    assert len(COPIES) == 51


@pytest.mark.parametrize("copy", COPIES, ids=[p.name for p in COPIES])
def test_each_schema_copy_is_the_brokers(copy):
    brokers = SRC / "adapters" / "filesystem" / "schemas" / copy.name
    if not brokers.exists():  # a message kafka-python lacks (ADR 35)
        brokers = SRC / "adapters" / "kafka" / "wire" / "messages" / copy.name
    assert copy.read_bytes() == brokers.read_bytes()
