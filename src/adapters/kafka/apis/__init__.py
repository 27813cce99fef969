"""One room per Kafka API: each module here (and only rooms live here: what rooms share is in `common/`) is
named after the API it serves (or a tight family's, such as `classic_group` for JoinGroup, SyncGroup,
Heartbeat and LeaveGroup) and declares its `KafkaApi` (`API`, or `APIS` for a family): handler, version
range, authorization, refusal.

A room is imported on the first request of its API (ADR 110): `ROOMS` is what ApiVersions advertises of
each, known without importing it, and `build_registry` gives a registry that imports a room when its API
is first asked for. `ROOMS` is generated from the rooms (`declared_rooms()`); `tests/unit/adapters/kafka/
test_room_table.py` imports every room and fails on a stale table, printing the one to paste here.

To serve a new API, add its module, then its line in `ROOMS` (architecture/README.md has the checklist).
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

from ..api import HandlerRegistry, KafkaApi, Room

ROOMS: dict[int, Room] = {
    0: Room("Produce", "produce", 0, 3, 13, True),
    1: Room("Fetch", "fetch", 4, 4, 18),
    2: Room("ListOffsets", "list_offsets", 1, 1, 11),
    3: Room("Metadata", "metadata", 0, 0, 13),
    8: Room("OffsetCommit", "offset_commit", 2, 2, 10),
    9: Room("OffsetFetch", "offset_fetch", 1, 1, 10),
    10: Room("FindCoordinator", "find_coordinator", 0, 0, 6),
    11: Room("JoinGroup", "classic_group", 0, 0, 9),
    12: Room("Heartbeat", "classic_group", 0, 0, 4),
    13: Room("LeaveGroup", "classic_group", 0, 0, 5),
    14: Room("SyncGroup", "classic_group", 0, 0, 5),
    15: Room("DescribeGroups", "describe_groups", 0, 0, 6),
    16: Room("ListGroups", "list_groups", 0, 0, 5),
    17: Room("SaslHandshake", "sasl", 0, 0, 1),
    18: Room("ApiVersions", "api_versions", 0, 0, 5),
    19: Room("CreateTopics", "create_topics", 2, 2, 7),
    20: Room("DeleteTopics", "delete_topics", 1, 1, 6),
    21: Room("DeleteRecords", "delete_records", 0, 0, 2),
    22: Room("InitProducerId", "init_producer_id", 0, 0, 5),
    23: Room("OffsetForLeaderEpoch", "offset_for_leader_epoch", 2, 2, 4),
    24: Room("AddPartitionsToTxn", "add_partitions_to_txn", 0, 0, 5),
    25: Room("AddOffsetsToTxn", "add_offsets_to_txn", 0, 0, 4),
    26: Room("EndTxn", "end_txn", 0, 0, 5),
    27: Room("WriteTxnMarkers", "write_txn_markers", 1, 1, 2),
    28: Room("TxnOffsetCommit", "txn_offset_commit", 0, 0, 6),
    29: Room("DescribeAcls", "acls", 1, 1, 3),
    30: Room("CreateAcls", "acls", 1, 1, 3),
    31: Room("DeleteAcls", "acls", 1, 1, 3),
    32: Room("DescribeConfigs", "describe_configs", 1, 1, 4),
    33: Room("AlterConfigs", "alter_configs", 0, 0, 2),
    34: Room("AlterReplicaLogDirs", "alter_replica_log_dirs", 1, 1, 2),
    35: Room("DescribeLogDirs", "describe_log_dirs", 1, 1, 5),
    36: Room("SaslAuthenticate", "sasl", 0, 0, 2),
    37: Room("CreatePartitions", "create_partitions", 0, 0, 3),
    38: Room("CreateDelegationToken", "delegation_tokens", 1, 1, 3),
    39: Room("RenewDelegationToken", "delegation_tokens", 1, 1, 2),
    40: Room("ExpireDelegationToken", "delegation_tokens", 1, 1, 2),
    41: Room("DescribeDelegationToken", "delegation_tokens", 1, 1, 3),
    42: Room("DeleteGroups", "delete_groups", 0, 0, 3),
    43: Room("ElectLeaders", "elect_leaders", 0, 0, 2),
    44: Room("IncrementalAlterConfigs", "incremental_alter_configs", 0, 0, 1),
    45: Room("AlterPartitionReassignments", "partition_reassignments", 0, 0, 1),
    46: Room("ListPartitionReassignments", "partition_reassignments", 0, 0, 0),
    47: Room("OffsetDelete", "offset_delete", 0, 0, 0),
    48: Room("DescribeClientQuotas", "client_quotas", 0, 0, 1),
    49: Room("AlterClientQuotas", "client_quotas", 0, 0, 1),
    50: Room("DescribeUserScramCredentials", "user_scram_credentials", 0, 0, 0),
    51: Room("AlterUserScramCredentials", "user_scram_credentials", 0, 0, 0),
    55: Room("DescribeQuorum", "describe_quorum", 0, 0, 2),
    57: Room("UpdateFeatures", "update_features", 0, 0, 2),
    60: Room("DescribeCluster", "describe_cluster", 0, 0, 2),
    61: Room("DescribeProducers", "describe_producers", 0, 0, 0),
    65: Room("DescribeTransactions", "describe_transactions", 0, 0, 0),
    66: Room("ListTransactions", "list_transactions", 0, 0, 2),
    68: Room("ConsumerGroupHeartbeat", "consumer_group_heartbeat", 0, 0, 1),
    69: Room("ConsumerGroupDescribe", "consumer_group_describe", 0, 0, 1),
    74: Room("ListConfigResources", "list_config_resources", 0, 0, 1),
    75: Room("DescribeTopicPartitions", "describe_topic_partitions", 0, 0, 0),
    76: Room("ShareGroupHeartbeat", "share_group_heartbeat", 1, 1, 1),
    77: Room("ShareGroupDescribe", "share_group_describe", 1, 1, 1),
    78: Room("ShareFetch", "share_fetch", 1, 1, 2),
    79: Room("ShareAcknowledge", "share_acknowledge", 1, 1, 2),
    88: Room("StreamsGroupHeartbeat", "streams_group_heartbeat", 0, 0, 1),
    89: Room("StreamsGroupDescribe", "streams_group_describe", 0, 0, 1),
    90: Room("DescribeShareGroupOffsets", "share_group_offsets", 0, 0, 1),
    91: Room("AlterShareGroupOffsets", "share_group_offsets", 0, 0, 0),
    92: Room("DeleteShareGroupOffsets", "share_group_offsets", 0, 0, 0),
    93: Room("StreamsGroupTopologyDescriptionUpdate", "streams_group_topology_description_update", 0, 0, 0),
}
"""Every API served, by key: (name, room module, lowest version advertised, versions served, lane)."""

TELEMETRY_ROOMS: dict[int, Room] = {
    71: Room("GetTelemetrySubscriptions", "client_telemetry", 0, 0, 0),
    72: Room("PushTelemetry", "client_telemetry", 0, 0, 0),
}
"""KIP-714's two, served only when the HTTP listener is on (`build_registry(telemetry=True)`)."""


def room_apis(module: Any) -> tuple[KafkaApi, ...]:
    """The APIs a room module declares."""
    return (module.API,) if hasattr(module, "API") else tuple(module.APIS)


def load(api_key: int) -> KafkaApi:
    """The API `api_key`, its room imported."""
    room = ROOMS.get(api_key) or TELEMETRY_ROOMS[api_key]
    module = importlib.import_module(f"{__name__}.{room.module}")
    return next(api for api in room_apis(module) if api.api_key == api_key)


def import_rooms(telemetry: bool = False) -> None:
    """Every room's module imported, nothing registered: run in a worker thread by `trafka serve` once it
    is ready (ADR 110), so a long-running broker's first Fetch or group request finds its room loaded
    and only checks it (the registry's `get`), while the start-up stays as short as the rooms it needs."""
    for room in ({**ROOMS, **TELEMETRY_ROOMS} if telemetry else ROOMS).values():
        try:
            importlib.import_module(f"{__name__}.{room.module}")
        except Exception as exc:  # out of descriptors, say: the rest load on first use
            logging.getLogger("trafka.server").debug("rooms not loaded ahead (%s): on first use instead", exc)
            return


def build_registry(telemetry: bool = False) -> HandlerRegistry:
    """Every API in `ROOMS`, each room imported on its API's first use; with `telemetry` (the HTTP
    listener is on), KIP-714's two as well."""
    return HandlerRegistry({**ROOMS, **TELEMETRY_ROOMS} if telemetry else ROOMS, load)


def declared_rooms() -> dict[int, Room]:
    """What every room module declares, each imported: what `ROOMS` and `TELEMETRY_ROOMS` must say."""
    import pkgutil  # for tests and tools: not at a broker's start

    declared: dict[int, Room] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
        if not info.ispkg:
            module = importlib.import_module(f"{__name__}.{info.name}")
            declared.update({api.api_key: Room.of(api, info.name) for api in room_apis(module)})
    return dict(sorted(declared.items()))


def __getattr__(name: str) -> Any:
    if name == "APIS":  # every API served (not telemetry's), each room imported: for tests and tools
        return tuple(load(api_key) for api_key in ROOMS)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ROOMS", "TELEMETRY_ROOMS", "build_registry", "declared_rooms", "import_rooms", "load", "room_apis"]
