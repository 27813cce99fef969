"""Internal-log records, encoded and decoded through kafka-python's schema compiler.

KRaft metadata record values are framed as three unsigned varints (frame version 1, record type,
record version) followed by the flexible body; `__consumer_offsets` keys and values start with an
int16 version, then the body. Batches for these logs are built with kafka-python's record builder.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from kafka.protocol.api_data import ApiData
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

import trafka.kafka_schemas as schemas
from trafka.domain.varint import encode_uvarint, read_uvarint

if TYPE_CHECKING:
    # kafka-python is untyped, so ApiData is Any to mypy, and a class keyword on a subclass of Any is
    # checked against object.__init_subclass__. Its metaclass takes `load_json` (the schema module).
    class _Record(ApiData):
        def __init_subclass__(cls, *, load_json: ModuleType | None = None, **kwargs: Any) -> None: ...
else:
    _Record = ApiData


# kafka-python 3.0.12's schema loader uses importlib.resources' legacy read_text, which warns on
# 3.11+: ignored around these classes only, so a user's `-W error` suite is not failed by it.
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", r"(read|open)_text is deprecated", DeprecationWarning)

    class TopicRecord(_Record, load_json=schemas):
        pass

    class PartitionRecord(_Record, load_json=schemas):
        pass

    class RemoveTopicRecord(_Record, load_json=schemas):
        pass

    class FeatureLevelRecord(_Record, load_json=schemas):
        pass

    class ConfigRecord(_Record, load_json=schemas):
        pass

    class ProducerIdsRecord(_Record, load_json=schemas):
        pass

    class OffsetCommitKey(_Record, load_json=schemas):
        pass

    class TransactionLogKey(_Record, load_json=schemas):
        pass

    class ProducerSnapshot(_Record, load_json=schemas):
        pass

    class TransactionLogValue(_Record, load_json=schemas):
        pass

    class OffsetCommitValue(_Record, load_json=schemas):
        pass

    class GroupMetadataKey(_Record, load_json=schemas):
        pass

    class GroupMetadataValue(_Record, load_json=schemas):
        pass

    class UserScramCredentialRecord(_Record, load_json=schemas):
        pass

    class RemoveUserScramCredentialRecord(_Record, load_json=schemas):
        pass

    class AccessControlEntryRecord(_Record, load_json=schemas):
        pass

    class RemoveAccessControlEntryRecord(_Record, load_json=schemas):
        pass

    class ClientQuotaRecord(_Record, load_json=schemas):
        pass

    # KRaft record types (Kafka's MetadataRecordType)
    METADATA_TYPES: dict[int, type[ApiData]] = {
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
    TYPE_OF = {cls: key for key, cls in METADATA_TYPES.items()}
    FRAME_VERSION = 1

    def encode_metadata_record(record: ApiData, version: int) -> bytes:
        header = encode_uvarint(FRAME_VERSION) + encode_uvarint(TYPE_OF[type(record)]) + encode_uvarint(version)
        return header + bytes(record.encode(version=version, header=False))

    def decode_metadata_record(value: bytes) -> ApiData | None:
        """The record in a metadata log value, or None for a type trafka does not keep."""
        _, pos = read_uvarint(value, 0)
        record_type, pos = read_uvarint(value, pos)
        version, pos = read_uvarint(value, pos)
        cls = METADATA_TYPES.get(record_type)
        if cls is None or version > cls.max_version:
            return None
        return cls.decode(io.BytesIO(value[pos:]), version=version, header=False)

    def encode_versioned(record: ApiData, version: int) -> bytes:
        """int16 version, then the body: the `__consumer_offsets` key and value format."""
        return bytes(record.encode(version=version, header=True))

    def decode_versioned(cls: type[ApiData], data: bytes) -> ApiData:
        return cls.decode(io.BytesIO(data), header=True)

    def build_batch(
        records: Sequence[tuple[bytes | None, bytes | None]],
        timestamp_ms: int,
        producer_id: int = -1,
        producer_epoch: int = -1,
    ) -> bytes:
        """A batch of records; with a producer id, a transactional one (as Kafka writes TxnOffsetCommit)."""
        builder = DefaultRecordBatchBuilder(
            magic=2,
            compression_type=0,
            is_transactional=producer_id >= 0,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=0 if producer_id >= 0 else -1,
            batch_size=2**31 - 1,
        )
        for delta, (key, value) in enumerate(records):
            builder.append(delta, timestamp=timestamp_ms, key=key, value=value, headers=[])
        return bytes(builder.build())

    def iter_records(batch: bytes) -> Iterator[tuple[int, bytes | None, bytes | None]]:
        """(offset, key, value) of each record in one batch; control batches yield nothing."""
        parsed = DefaultRecordBatch(batch)
        if parsed.is_control_batch:
            return
        for record in parsed:
            yield record.offset, record.key, record.value

    # KIP-848 consumer groups in `__consumer_offsets` (Kafka's group coordinator record schemas)
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

    # KIP-932 share groups in `__consumer_offsets` and `__share_group_state` (Kafka 4.2's group and share
    # coordinator record schemas)
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

    # KIP-1071 streams groups' records
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
