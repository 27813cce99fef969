"""What `dump-log` reads in a log file, without the broker: Kafka's record batch v2 header and the
records of the internal topics, in Kafka's own layouts.

A batch header is 61 bytes (offsets in bytes):

    0 base_offset int64      8 batch_length int32     12 partition_leader_epoch int32
   16 magic int8            17 crc uint32 (CRC-32C of bytes 21..end)
   21 attributes int16      23 last_offset_delta int32 27 base_timestamp int64
   35 max_timestamp int64   43 producer_id int64      51 producer_epoch int16
   53 base_sequence int32   57 records_count int32    61 records...

KRaft metadata record values (`__cluster_metadata`) are framed as three unsigned varints (frame version,
record type, record version) followed by the flexible body; `__consumer_offsets` and
`__transaction_state` keys and values start with an int16 version, then the body. The bodies are decoded
by kafka-python's schema compiler from Kafka's JSON schemas, in the shared leaf package `trafka.kafka_schemas`.
"""

from __future__ import annotations

import io
import struct
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

from kafka.protocol.api_data import ApiData

import trafka.kafka_schemas as schemas

if TYPE_CHECKING:
    # kafka-python is untyped, so ApiData is Any to mypy, and a class keyword on a subclass of Any is
    # checked against object.__init_subclass__. Its metaclass takes `load_json` (the schema module).
    class _Record(ApiData):
        def __init_subclass__(cls, *, load_json: ModuleType | None = None, **kwargs: Any) -> None: ...
else:
    _Record = ApiData

HEADER_SIZE = 61
LOG_OVERHEAD = 12  # base_offset + batch_length: the part of a batch that batch_length does not count
CRC_START = 21
LOG_APPEND_TIME_FLAG = 0x08
TRANSACTIONAL_FLAG = 0x10
CONTROL_FLAG = 0x20

_HEADER = struct.Struct(">qiibIhiqqqhii")


class BatchHeader(NamedTuple):
    """A record batch header's fields, in the order of the layout above."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @classmethod
    def parse(cls, buf: bytes, pos: int = 0) -> BatchHeader:
        """The header at `pos`; the caller checks that 61 bytes remain."""
        return cls._make(_HEADER.unpack_from(buf, pos))

    @property
    def size(self) -> int:
        """Bytes the whole batch occupies in a log."""
        return LOG_OVERHEAD + self.batch_length

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def compression(self) -> int:
        return self.attributes & 0x07

    @property
    def is_log_append_time(self) -> bool:
        return bool(self.attributes & LOG_APPEND_TIME_FLAG)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG)


class TopicRecord(_Record, load_json=schemas):
    pass


class PartitionRecord(_Record, load_json=schemas):
    pass


class ConfigRecord(_Record, load_json=schemas):
    pass


class RemoveTopicRecord(_Record, load_json=schemas):
    pass


class FeatureLevelRecord(_Record, load_json=schemas):
    pass


class ProducerIdsRecord(_Record, load_json=schemas):
    pass


class UserScramCredentialRecord(_Record, load_json=schemas):
    pass


class RemoveUserScramCredentialRecord(_Record, load_json=schemas):
    pass


class AccessControlEntryRecord(_Record, load_json=schemas):
    pass


class RemoveAccessControlEntryRecord(_Record, load_json=schemas):
    pass


class OffsetCommitKey(_Record, load_json=schemas):
    pass


class OffsetCommitValue(_Record, load_json=schemas):
    pass


class GroupMetadataKey(_Record, load_json=schemas):
    pass


class GroupMetadataValue(_Record, load_json=schemas):
    pass


class ConsumerGroupMetadataKey(_Record, load_json=schemas):
    pass


class ConsumerGroupMetadataValue(_Record, load_json=schemas):
    pass


class ConsumerGroupMemberMetadataKey(_Record, load_json=schemas):
    pass


class ConsumerGroupMemberMetadataValue(_Record, load_json=schemas):
    pass


class ConsumerGroupTargetAssignmentMetadataKey(_Record, load_json=schemas):
    pass


class ConsumerGroupTargetAssignmentMetadataValue(_Record, load_json=schemas):
    pass


class ConsumerGroupTargetAssignmentMemberKey(_Record, load_json=schemas):
    pass


class ConsumerGroupTargetAssignmentMemberValue(_Record, load_json=schemas):
    pass


class ConsumerGroupCurrentMemberAssignmentKey(_Record, load_json=schemas):
    pass


class ConsumerGroupCurrentMemberAssignmentValue(_Record, load_json=schemas):
    pass


class ShareSnapshotKey(_Record, load_json=schemas):
    pass


class ShareSnapshotValue(_Record, load_json=schemas):
    pass


class ShareGroupMemberMetadataKey(_Record, load_json=schemas):
    pass


class ShareGroupMemberMetadataValue(_Record, load_json=schemas):
    pass


class ShareGroupMetadataKey(_Record, load_json=schemas):
    pass


class ShareGroupMetadataValue(_Record, load_json=schemas):
    pass


class ShareGroupTargetAssignmentMetadataKey(_Record, load_json=schemas):
    pass


class ShareGroupTargetAssignmentMetadataValue(_Record, load_json=schemas):
    pass


class ShareGroupTargetAssignmentMemberKey(_Record, load_json=schemas):
    pass


class ShareGroupTargetAssignmentMemberValue(_Record, load_json=schemas):
    pass


class ShareGroupCurrentMemberAssignmentKey(_Record, load_json=schemas):
    pass


class ShareGroupCurrentMemberAssignmentValue(_Record, load_json=schemas):
    pass


class ShareGroupStatePartitionMetadataKey(_Record, load_json=schemas):
    pass


class ShareGroupStatePartitionMetadataValue(_Record, load_json=schemas):
    pass


class ShareUpdateKey(_Record, load_json=schemas):
    pass


class ShareUpdateValue(_Record, load_json=schemas):
    pass


class TransactionLogKey(_Record, load_json=schemas):
    pass


class TransactionLogValue(_Record, load_json=schemas):
    pass


# `__consumer_offsets` key versions of KIP-848 consumer groups -> (key, value) classes.
CONSUMER_GROUP_RECORDS: dict[int, tuple[Any, Any]] = {
    3: (ConsumerGroupMetadataKey, ConsumerGroupMetadataValue),
    5: (ConsumerGroupMemberMetadataKey, ConsumerGroupMemberMetadataValue),
    6: (ConsumerGroupTargetAssignmentMetadataKey, ConsumerGroupTargetAssignmentMetadataValue),
    7: (ConsumerGroupTargetAssignmentMemberKey, ConsumerGroupTargetAssignmentMemberValue),
    8: (ConsumerGroupCurrentMemberAssignmentKey, ConsumerGroupCurrentMemberAssignmentValue),
}

# `__consumer_offsets` key versions of KIP-932 share groups -> (key, value) classes.
SHARE_GROUP_RECORDS: dict[int, tuple[Any, Any]] = {
    10: (ShareGroupMemberMetadataKey, ShareGroupMemberMetadataValue),
    11: (ShareGroupMetadataKey, ShareGroupMetadataValue),
    12: (ShareGroupTargetAssignmentMetadataKey, ShareGroupTargetAssignmentMetadataValue),
    13: (ShareGroupTargetAssignmentMemberKey, ShareGroupTargetAssignmentMemberValue),
    14: (ShareGroupCurrentMemberAssignmentKey, ShareGroupCurrentMemberAssignmentValue),
    15: (ShareGroupStatePartitionMetadataKey, ShareGroupStatePartitionMetadataValue),
}


class StreamsGroupMetadataKey(_Record, load_json=schemas):
    pass


class StreamsGroupMetadataValue(_Record, load_json=schemas):
    pass


class StreamsGroupMemberMetadataKey(_Record, load_json=schemas):
    pass


class StreamsGroupMemberMetadataValue(_Record, load_json=schemas):
    pass


class StreamsGroupTargetAssignmentMetadataKey(_Record, load_json=schemas):
    pass


class StreamsGroupTargetAssignmentMetadataValue(_Record, load_json=schemas):
    pass


class StreamsGroupTargetAssignmentMemberKey(_Record, load_json=schemas):
    pass


class StreamsGroupTargetAssignmentMemberValue(_Record, load_json=schemas):
    pass


class StreamsGroupCurrentMemberAssignmentKey(_Record, load_json=schemas):
    pass


class StreamsGroupCurrentMemberAssignmentValue(_Record, load_json=schemas):
    pass


class StreamsGroupTopologyKey(_Record, load_json=schemas):
    pass


class StreamsGroupTopologyValue(_Record, load_json=schemas):
    pass


# `__consumer_offsets` key versions of KIP-1071 streams groups -> (key, value) classes.
STREAMS_GROUP_RECORDS: dict[int, tuple[Any, Any]] = {
    17: (StreamsGroupMetadataKey, StreamsGroupMetadataValue),
    19: (StreamsGroupMemberMetadataKey, StreamsGroupMemberMetadataValue),
    20: (StreamsGroupTargetAssignmentMetadataKey, StreamsGroupTargetAssignmentMetadataValue),
    21: (StreamsGroupTargetAssignmentMemberKey, StreamsGroupTargetAssignmentMemberValue),
    22: (StreamsGroupCurrentMemberAssignmentKey, StreamsGroupCurrentMemberAssignmentValue),
    23: (StreamsGroupTopologyKey, StreamsGroupTopologyValue),
}


class ClientQuotaRecord(_Record, load_json=schemas):
    pass


# The KRaft record types decoded (Kafka's MetadataRecordType).
METADATA_TYPES: dict[int, Any] = {
    2: TopicRecord,
    3: PartitionRecord,
    4: ConfigRecord,
    9: RemoveTopicRecord,
    12: FeatureLevelRecord,
    15: ProducerIdsRecord,
    11: UserScramCredentialRecord,
    22: RemoveUserScramCredentialRecord,
    18: AccessControlEntryRecord,
    19: RemoveAccessControlEntryRecord,
    14: ClientQuotaRecord,
}


def read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    """An unsigned varint at `pos`, and the position after it."""
    shift = result = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def decode_metadata_record(value: bytes) -> Any | None:
    """The record in a metadata log value, or None for a type not decoded here."""
    _, pos = read_uvarint(value, 0)
    record_type, pos = read_uvarint(value, pos)
    version, pos = read_uvarint(value, pos)
    cls = METADATA_TYPES.get(record_type)
    if cls is None or version > cls.max_version:
        return None
    return cls.decode(io.BytesIO(value[pos:]), version=version, header=False)


def decode_versioned(cls: Any, data: bytes) -> Any:
    """A key or value that starts with its int16 version (`__consumer_offsets`, `__transaction_state`)."""
    return cls.decode(io.BytesIO(data), header=True)
