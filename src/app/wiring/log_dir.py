"""A log dir's adapters: the filesystem store, its internal logs and their topics (ADR 110: imported only
when the broker has a data dir)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from trafka.adapters.filesystem import (
    METADATA_TOPIC_ID,
    FileAclStore,
    FileCatalogStore,
    FileClientQuotaStore,
    FileLogStore,
    FileOffsetStore,
    FileScramCredentialStore,
    FileTransactionStore,
    InternalLog,
    LogDir,
)
from trafka.adapters.filesystem.group_config_store import FileGroupConfigStore
from trafka.adapters.filesystem.log_store import FileCleanerCheckpoints
from trafka.adapters.filesystem.security_store import FileDelegationTokenStore
from trafka.adapters.filesystem.share_state_store import FileShareStateStore
from trafka.domain.topics import Topic, TopicPartition, kafka_random_uuid

from ..config.settings import Settings
from .checksum import crc32c_function


def log_dir_stores(
    logdir: LogDir, settings: Settings, topic_defaults: dict[str, str], clock_ms: Callable[[], int]
) -> dict[str, Any]:
    """The stores of an opened log dir, and what they do at start, stop and each second: `Adapters`'
    fields of the filesystem store (`adapters.default_adapters` opens the log dir)."""
    logs = FileLogStore(logdir, crc32c_function(), clock_ms, settings.storage.flush_messages, topic_defaults)
    metadata = internal_log(logs, "__cluster_metadata", METADATA_TOPIC_ID, clock_ms, sync_appends=True)
    catalog_store = FileCatalogStore(metadata, settings.broker.node_id, logdir.meta.directory_id)
    recorded = catalog_store.internal_topic_ids()  # an internal topic keeps the id the metadata log gave it

    def open_internal(topic: str, segment_bytes: int | None = None) -> InternalLog:
        return internal_log(logs, topic, recorded.get(topic) or kafka_random_uuid(uuid.uuid4), clock_ms, segment_bytes)

    offsets = open_internal("__consumer_offsets", settings.groups.offsets_topic_segment_bytes)
    txn_state = open_internal("__transaction_state", settings.broker.transaction_state_log_segment_bytes)
    share_state = open_internal("__share_group_state")

    def watch_internal_appends(appended: Callable[[TopicPartition], None]) -> None:
        for internal in (offsets, txn_state, share_state):
            internal.appended = appended

    def started() -> None:
        logs.remove_stray(catalog_store.removed_topic_ids)
        logdir.start()

    def stop() -> None:
        logs.close()
        if logs.clean:  # after a failed write, the next start recovers the logs
            logdir.mark_clean_shutdown()
        logdir.unlock()

    for internal, configs in (
        (offsets, OFFSETS_TOPIC_CONFIGS),
        (txn_state, TRANSACTION_TOPIC_CONFIGS),
        (share_state, SHARE_STATE_TOPIC_CONFIGS),
    ):
        topic = Topic(internal.log_tp.topic, internal.topic_id, 1, {**configs, **internal.configs})
        catalog_store.register_internal(topic)
    return {
        "logs": logs,
        "catalog_store": catalog_store,
        "offset_store": FileOffsetStore(offsets),
        "transaction_store": FileTransactionStore(txn_state),
        "share_state_store": FileShareStateStore(
            share_state, clock_ms, settings.groups.share_snapshot_update_records_per_snapshot
        ),
        "scram_store": FileScramCredentialStore(metadata),
        "acl_store": FileAclStore(metadata),
        "token_store": FileDelegationTokenStore(metadata),
        "quota_store": FileClientQuotaStore(metadata),
        "group_config_store": FileGroupConfigStore(metadata),
        "cluster_id": logdir.meta.cluster_id,
        "started": started,
        "stop": stop,
        "maintain": logs.maintain,
        "checkpoint": logs.checkpoint,
        "health": logs.health,
        "cleaner_checkpoints": FileCleanerCheckpoints(logdir),
        "compacted_internal": lambda: [
            (
                internal.log_tp,
                internal.log,
                {"cleanup.policy": "compact", "segment.bytes": str(internal.log.config.segment_bytes)},
            )
            for internal in (offsets, txn_state)
        ],
        "internal_topic_ids": {
            internal.log_tp.topic: internal.topic_id for internal in (offsets, txn_state, share_state)
        },
        "watch_internal_appends": watch_internal_appends,
    }


def internal_log(
    logs: FileLogStore,
    topic: str,
    topic_id: uuid.UUID,
    clock_ms: Callable[[], int],
    segment_bytes: int | None = None,
    *,
    sync_appends: bool = False,
) -> InternalLog:
    """An internal topic's one partition, with `segment.bytes` as the settings give it (else the log's
    default); `sync_appends` for the metadata log, fsynced on each append (ADR 120)."""
    configs = {} if segment_bytes is None else {"segment.bytes": str(segment_bytes)}
    return InternalLog(
        logs, TopicPartition(topic, 0), topic_id, crc32c_function(), clock_ms, configs, sync_appends=sync_appends
    )


# The configs Kafka's coordinators create their internal topics with (the ConfigRecords a Kafka log dir
# holds for them), besides segment.bytes from the settings.
OFFSETS_TOPIC_CONFIGS = {"cleanup.policy": "compact", "compression.type": "producer"}
TRANSACTION_TOPIC_CONFIGS = {
    "cleanup.policy": "compact",
    "compression.type": "uncompressed",
    "min.insync.replicas": "1",
    "unclean.leader.election.enable": "false",
}
SHARE_STATE_TOPIC_CONFIGS = {
    "cleanup.policy": "delete",
    "compression.type": "producer",
    "min.insync.replicas": "1",
    "retention.ms": "-1",
}
