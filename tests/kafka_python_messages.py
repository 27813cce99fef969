"""The Kafka messages trafka carries that kafka-python 3 does not declare (`trafka.kafka_schemas`),
compiled by kafka-python's own machinery into classes used exactly as its `kafka.protocol` ones are:
for tests that speak to a broker as a kafka-python client would (`tests/integration/wire.py`), and as
the oracle of trafka's schema codec. The broker itself compiles them with its own codec (ADR 92)."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from kafka.protocol.api_message import ApiMessage

import trafka.kafka_schemas as schemas
from tests.kafka_python_oracle import kafka_python_responses_kept

if TYPE_CHECKING:
    # kafka-python is untyped: ApiMessage is Any to mypy; its metaclass takes `load_json` (this package).
    class _Message(ApiMessage):
        def __init_subclass__(cls, *, load_json: Any = None, **kwargs: Any) -> None: ...
else:
    _Message = ApiMessage

_UNSUPPORTED_VERSION = (35).to_bytes(2, "big")  # Kafka's error code 35, as it leads an ApiVersions body
_here = schemas  # the JSON schemas, one leaf package shared with the operator commands


# kafka-python 3.0.12's schema loader uses importlib.resources' legacy read_text, which warns on
# 3.11+: ignored around these classes only, so a user's `-W error` suite is not failed by it.
# kafka-python's own response classes stay the ones its clients read (`kafka_python_responses_kept`).
with warnings.catch_warnings(), kafka_python_responses_kept():
    warnings.filterwarnings("ignore", r"(read|open)_text is deprecated", DeprecationWarning)

    class ConsumerGroupHeartbeatRequest(_Message, load_json=_here):
        pass

    class ConsumerGroupHeartbeatResponse(_Message, load_json=_here):
        pass

    class ConsumerGroupDescribeRequest(_Message, load_json=_here):
        pass

    class ConsumerGroupDescribeResponse(_Message, load_json=_here):
        pass

    # Share groups (KIP-932): ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch, ShareAcknowledge.
    class ShareGroupHeartbeatRequest(_Message, load_json=_here):
        pass

    class ShareGroupHeartbeatResponse(_Message, load_json=_here):
        pass

    class ShareGroupDescribeRequest(_Message, load_json=_here):
        pass

    class ShareGroupDescribeResponse(_Message, load_json=_here):
        pass

    class ShareFetchRequest(_Message, load_json=_here):
        pass

    class ShareFetchResponse(_Message, load_json=_here):
        pass

    class ShareAcknowledgeRequest(_Message, load_json=_here):
        pass

    class ShareAcknowledgeResponse(_Message, load_json=_here):
        pass

    # Share groups' offsets admin (KIP-932): DescribeShareGroupOffsets, AlterShareGroupOffsets, DeleteShareGroupOffsets.
    class DescribeShareGroupOffsetsRequest(_Message, load_json=_here):
        pass

    class DescribeShareGroupOffsetsResponse(_Message, load_json=_here):
        pass

    class AlterShareGroupOffsetsRequest(_Message, load_json=_here):
        pass

    class AlterShareGroupOffsetsResponse(_Message, load_json=_here):
        pass

    class DeleteShareGroupOffsetsRequest(_Message, load_json=_here):
        pass

    class DeleteShareGroupOffsetsResponse(_Message, load_json=_here):
        pass

    # Kafka 4.4's newer versions of messages kafka-python declares: TxnOffsetCommit v6 (topics by id,
    # KIP-1319), DeleteGroups v3 (per-group error messages), ApiVersions v5 (KIP-1242: the cluster and
    # node the client expects; layout read from kafka-clients 4.4.0's generated ApiVersionsRequestData).
    class TxnOffsetCommitRequest(_Message, load_json=_here):
        pass

    class TxnOffsetCommitResponse(_Message, load_json=_here):
        pass

    class DeleteGroupsRequest(_Message, load_json=_here):
        pass

    class DeleteGroupsResponse(_Message, load_json=_here):
        pass

    class ApiVersionsRequest(_Message, load_json=_here):
        pass

    class ApiVersionsResponse(_Message, load_json=_here):
        """Its response header is never flexible, whatever the version: a client that does not know the
        broker's versions yet must read it (Kafka's one exception to the flexible headers). An
        UNSUPPORTED_VERSION answer has a v0 body whatever the version asked, so it is read as v0 (Kafka's
        client falls back the same way); any other answer at the version asked."""

        @classmethod
        def decode(cls, data: Any, version: Any = None, header: bool = False, framed: bool = False) -> Any:
            raw = bytes(data.read()) if hasattr(data, "read") else bytes(data)
            error_at = (4 if framed else 0) + (4 if header else 0)  # the size; the correlation id
            if len(raw) >= error_at + 2 and raw[error_at : error_at + 2] == _UNSUPPORTED_VERSION:
                version = 0
            return super().decode(raw, version=version, header=header, framed=framed)

        @classmethod
        def parse_header(cls, data: Any, version: Any = None) -> Any:
            return cls.header_class.decode(data, flexible=False)

        def encode_header(self, flexible: bool = False) -> Any:
            return super().encode_header(flexible=False)

    # Streams groups (KIP-1071, Kafka 4.2): StreamsGroupHeartbeat, StreamsGroupDescribe.
    class StreamsGroupHeartbeatRequest(_Message, load_json=_here):
        pass

    class StreamsGroupHeartbeatResponse(_Message, load_json=_here):
        pass

    class StreamsGroupDescribeRequest(_Message, load_json=_here):
        pass

    class StreamsGroupDescribeResponse(_Message, load_json=_here):
        pass

    # Kafka 4.4 (KIP-1331): StreamsGroupTopologyDescriptionUpdate.
    class StreamsGroupTopologyDescriptionUpdateRequest(_Message, load_json=_here):
        pass

    class StreamsGroupTopologyDescriptionUpdateResponse(_Message, load_json=_here):
        pass

    # Delegation tokens (KIP-48): CreateDelegationToken, RenewDelegationToken, ExpireDelegationToken,
    # DescribeDelegationToken.
    class CreateDelegationTokenRequest(_Message, load_json=_here):
        pass

    class CreateDelegationTokenResponse(_Message, load_json=_here):
        pass

    class RenewDelegationTokenRequest(_Message, load_json=_here):
        pass

    class RenewDelegationTokenResponse(_Message, load_json=_here):
        pass

    class ExpireDelegationTokenRequest(_Message, load_json=_here):
        pass

    class ExpireDelegationTokenResponse(_Message, load_json=_here):
        pass

    class DescribeDelegationTokenRequest(_Message, load_json=_here):
        pass

    class DescribeDelegationTokenResponse(_Message, load_json=_here):
        pass
