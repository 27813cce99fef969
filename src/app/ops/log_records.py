"""What `dump-log` reads in a log file, without the broker: record batches (`trafka.schema_codec.records`)
and the internal topics' records (`trafka.schema_codec.internal_records`), with the very decoders the
broker writes and replays them with (ADR 101), so a record `dump-log` prints is the record the broker
keeps. `__cluster_metadata` values are framed as three unsigned varints (frame version, record type,
record version) then the body; `__consumer_offsets`, `__transaction_state` and `__share_group_state`
keys and values start with an int16 version.
"""

from __future__ import annotations

from trafka.schema_codec.internal_records import (
    CONSUMER_GROUP_RECORDS,
    METADATA_TYPES,
    SHARE_GROUP_RECORDS,
    STREAMS_GROUP_RECORDS,
    decode_metadata_record,
    decode_versioned,
)
from trafka.schema_codec.messages import (
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
)
from trafka.schema_codec.records import CRC_START, HEADER_SIZE, BatchHeader, decode_records

__all__ = [
    "CONSUMER_GROUP_RECORDS",
    "CRC_START",
    "HEADER_SIZE",
    "METADATA_TYPES",
    "SHARE_GROUP_RECORDS",
    "STREAMS_GROUP_RECORDS",
    "BatchHeader",
    "GroupMetadataKey",
    "GroupMetadataValue",
    "OffsetCommitKey",
    "OffsetCommitValue",
    "ShareSnapshotKey",
    "ShareSnapshotValue",
    "ShareUpdateKey",
    "ShareUpdateValue",
    "TransactionLogKey",
    "TransactionLogValue",
    "decode_metadata_record",
    "decode_records",
    "decode_versioned",
]
