"""The Kafka messages trafka carries that kafka-python 3 does not declare (`trafka.kafka_schemas`),
compiled by kafka-python's own machinery into classes used exactly as its `kafka.protocol` ones are:
for tests that speak to a broker as a kafka-python client would (`tests/integration/wire.py`), and as
the oracle of trafka's schema codec. The broker itself compiles them with its own codec (ADR 92)."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from kafka.protocol.api_message import ApiMessage

import trafka.kafka_schemas as schemas

if TYPE_CHECKING:
    # kafka-python is untyped: ApiMessage is Any to mypy; its metaclass takes `load_json` (this package).
    class _Message(ApiMessage):
        def __init_subclass__(cls, *, load_json: Any = None, **kwargs: Any) -> None: ...
else:
    _Message = ApiMessage

_here = schemas  # the JSON schemas, one leaf package shared with the operator commands


# kafka-python 3.0.12's schema loader uses importlib.resources' legacy read_text, which warns on
# 3.11+: ignored around these classes only, so a user's `-W error` suite is not failed by it.
with warnings.catch_warnings():
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
    # KIP-1319), DeleteGroups v3 (per-group error messages).
    class TxnOffsetCommitRequest(_Message, load_json=_here):
        pass

    class TxnOffsetCommitResponse(_Message, load_json=_here):
        pass

    class DeleteGroupsRequest(_Message, load_json=_here):
        pass

    class DeleteGroupsResponse(_Message, load_json=_here):
        pass
