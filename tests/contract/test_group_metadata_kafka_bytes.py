"""Group metadata records encoded by Apache Kafka's own generated classes (tests/fixtures/
kafka-4.0-group-metadata.hex): trafka reads every value version Kafka wrote, writes byte for byte
what Kafka writes for value version 3, and a `__consumer_offsets` log holding Kafka's records loads
the group."""

from __future__ import annotations

import uuid
from pathlib import Path

import attrs
import crc32c

from trafka.adapters.filesystem import FileLogStore, LogDir
from trafka.adapters.filesystem.internal_log import InternalLog
from trafka.adapters.filesystem.offset_store import FileOffsetStore, _decode_group, _group_key, _group_value
from trafka.domain.groups.group_metadata import GroupMetadata, MemberMetadata
from trafka.domain.topics import TopicPartition

FIXTURE = Path(__file__).parent.parent / "fixtures" / "kafka-4.0-group-metadata.hex"
KAFKA = dict(line.split() for line in FIXTURE.read_text().splitlines() if line.strip())

STATIC = MemberMetadata(
    "consumer-1-1f2e",
    "instance-7",
    "consumer-1",
    "/10.1.2.3",
    300_000,
    45_000,
    bytes([0, 1, 0, 0, 0, 1, 0, 5]) + b"topic" + b"\xff\xff\xff\xff",
    bytes([0, 1, 0, 0, 0, 0]) + b"\xff\xff\xff\xff",
)
DYNAMIC = MemberMetadata("consumer-2-9a8b", None, "consumer-2", "/10.1.2.4", 60_000, 10_000, b"\x00\x00", b"")
STABLE = GroupMetadata("consumer", 12, "range", "consumer-1-1f2e", 1_732_000_000_000, (STATIC, DYNAMIC))
EMPTY = GroupMetadata("consumer", 13, None, None, 1_732_000_001_000, ())


def test_trafka_writes_kafkas_bytes():
    assert _group_key("kafka-written").hex() == KAFKA["key"]
    assert _group_value(STABLE).hex() == KAFKA["stable3"]
    assert _group_value(EMPTY).hex() == KAFKA["empty3"]


def _as_read_from(version: int) -> GroupMetadata:
    """STABLE as a value of `version` carries it: fields the version lacks take the schema's defaults."""
    members = STABLE.members
    if version < 3:  # group.instance.id from v3
        members = tuple(attrs.evolve(m, group_instance_id=None) for m in members)
    if version < 1:  # the rebalance timeout from v1
        members = tuple(attrs.evolve(m, rebalance_timeout_ms=-1) for m in members)
    timestamp = STABLE.current_state_timestamp_ms if version >= 2 else -1  # from v2
    return attrs.evolve(STABLE, current_state_timestamp_ms=timestamp, members=members)


def test_every_value_version_kafka_writes_is_read_with_kafkas_defaults():
    for version in range(5):
        assert _decode_group(bytes.fromhex(KAFKA[f"stable{version}"])) == _as_read_from(version), version


def test_a_log_holding_kafkas_records_loads_the_group(tmp_path):
    logdir = LogDir.open(str(tmp_path / "logs"), 1, uuid.UUID(int=1), uuid.UUID(int=2))
    logs = FileLogStore(logdir, crc32c.crc32c, lambda: 1_000)
    log = InternalLog(logs, TopicPartition("__consumer_offsets", 0), uuid.UUID(int=3), crc32c.crc32c, lambda: 1_000)
    key = bytes.fromhex(KAFKA["key"])
    log.append([(key, bytes.fromhex(KAFKA["stable4"]))])
    assert FileOffsetStore(log).group_metadata() == {"kafka-written": STABLE}
    log.append([(key, bytes.fromhex(KAFKA["empty3"]))])
    assert FileOffsetStore(log).group_metadata() == {"kafka-written": EMPTY}
    log.append([(key, None)])
    assert FileOffsetStore(log).group_metadata() == {}
    logs.close()
    logdir.unlock()


def test_an_offset_commit_value_is_kafka_42s_version_4_with_the_topic_id_tagged_when_known():
    """Kafka 4.2 writes OffsetCommitValue v4 (flexible) unless an expire timestamp is set, its topic id as
    tagged field 0 when the commit named the topic by id (OffsetCommit v10+): read from its generated
    OffsetCommitValue.write in the 4.2.2 jar. Earlier versions are still read."""
    import struct

    from trafka.adapters.filesystem.offset_store import _decode, _key, _value
    from trafka.domain.groups.group_metadata import CommittedOffset

    topic_id = uuid.UUID("6e1b0cc5-6d1d-4c54-9d4b-0a1b2c3d4e5f")
    fixed = struct.pack(">hqi", 4, 42, 7) + b"\x03ab" + struct.pack(">q", 1_732_000_000_000)
    by_id = CommittedOffset(42, 7, "ab", 1_732_000_000_000, topic_id)
    assert _value(by_id) == fixed + b"\x01" + b"\x00\x10" + topic_id.bytes
    by_name = CommittedOffset(42, 7, "ab", 1_732_000_000_000)
    assert _value(by_name) == fixed + b"\x00"  # no tagged field: the zero id is the default
    key = _key("g", TopicPartition("t", 0))
    assert _decode(key, _value(by_id))[2] == by_id
    assert _decode(key, _value(by_name))[2] == by_name
    v3 = struct.pack(">hqi", 3, 42, 7) + b"\x00\x02ab" + struct.pack(">q", 1_732_000_000_000)
    assert _decode(key, v3)[2] == by_name
