"""One room per Kafka API: each module here is named after the API it serves (or a tight family's,
such as `classic_group` for JoinGroup, SyncGroup, Heartbeat and LeaveGroup) and declares its
`KafkaApi`: handler, version range, authorization, refusal. `build_registry` registers them all.

To serve a new API, add its module and list it in `APIS` (architecture/README.md has the checklist).
"""

from __future__ import annotations

from ..api import HandlerRegistry, KafkaApi
from . import (
    acls,
    add_offsets_to_txn,
    add_partitions_to_txn,
    alter_configs,
    alter_replica_log_dirs,
    api_versions,
    classic_group,
    client_quotas,
    client_telemetry,
    consumer_group_describe,
    consumer_group_heartbeat,
    create_partitions,
    create_topics,
    delete_groups,
    delete_records,
    delete_topics,
    describe_cluster,
    describe_configs,
    describe_groups,
    describe_log_dirs,
    describe_producers,
    describe_quorum,
    describe_topic_partitions,
    describe_transactions,
    elect_leaders,
    end_txn,
    fetch,
    find_coordinator,
    incremental_alter_configs,
    init_producer_id,
    list_config_resources,
    list_groups,
    list_offsets,
    list_transactions,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    offset_for_leader_epoch,
    partition_reassignments,
    produce,
    sasl,
    share_acknowledge,
    share_fetch,
    share_group_describe,
    share_group_heartbeat,
    share_group_offsets,
    streams_group_describe,
    streams_group_heartbeat,
    streams_group_topology_description_update,
    txn_offset_commit,
    update_features,
    user_scram_credentials,
    write_txn_markers,
)

APIS: tuple[KafkaApi, ...] = (
    produce.API,
    fetch.API,
    list_offsets.API,
    metadata.API,
    offset_commit.API,
    offset_fetch.API,
    find_coordinator.API,
    *classic_group.APIS,
    describe_groups.API,
    list_groups.API,
    *sasl.APIS,
    api_versions.API,
    create_topics.API,
    delete_topics.API,
    delete_records.API,
    init_producer_id.API,
    offset_for_leader_epoch.API,
    add_partitions_to_txn.API,
    add_offsets_to_txn.API,
    end_txn.API,
    write_txn_markers.API,
    txn_offset_commit.API,
    *acls.APIS,
    describe_configs.API,
    alter_configs.API,
    alter_replica_log_dirs.API,
    describe_log_dirs.API,
    create_partitions.API,
    delete_groups.API,
    elect_leaders.API,
    incremental_alter_configs.API,
    *partition_reassignments.APIS,
    offset_delete.API,
    *user_scram_credentials.APIS,
    describe_quorum.API,
    update_features.API,
    describe_cluster.API,
    describe_producers.API,
    describe_transactions.API,
    list_transactions.API,
    list_config_resources.API,
    describe_topic_partitions.API,
    consumer_group_heartbeat.API,
    consumer_group_describe.API,
    streams_group_heartbeat.API,
    streams_group_describe.API,
    streams_group_topology_description_update.API,
    share_group_heartbeat.API,
    share_group_describe.API,
    share_fetch.API,
    share_acknowledge.API,
    *share_group_offsets.APIS,
    *client_quotas.APIS,
)
"""Every API served, in Kafka's key order."""


def build_registry(telemetry: bool = False) -> HandlerRegistry:
    """Every API in `APIS`; with `telemetry` (the HTTP listener is on), KIP-714's two as well."""
    registry = HandlerRegistry()
    for api in APIS:
        registry.register(api)
    if telemetry:
        for api in client_telemetry.APIS:
            registry.register(api)
    return registry


__all__ = ["APIS", "build_registry"]
