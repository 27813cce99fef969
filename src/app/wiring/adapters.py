"""The adapters a broker is wired with (`Adapters`), and the production ones (`default_adapters`): the
memory store, or a log dir's filesystem store (`log_dir.py`, imported only for a data dir, ADR 110)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from trafka.adapters.compression import decompress as inflate
from trafka.adapters.kafka.services import UnobservedBroker
from trafka.adapters.memory import (
    MemoryAclStore,
    MemoryCatalogStore,
    MemoryClientQuotaStore,
    MemoryLogStore,
    MemoryOffsetStore,
    MemoryScramCredentialStore,
    MemoryTransactionStore,
)
from trafka.adapters.memory.group_config_store import MemoryGroupConfigStore
from trafka.adapters.memory.security_store import MemoryDelegationTokenStore
from trafka.adapters.memory.share_state_store import MemoryShareStateStore
from trafka.domain.batch import Checksum
from trafka.domain.batch_records import Decompress
from trafka.domain.compaction.manager import CleanerCheckpoints, MemoryCheckpoints
from trafka.domain.ports import (
    AclStore,
    BrokerObserver,
    CatalogStore,
    ClientQuotaStore,
    GroupConfigStore,
    LogStore,
    OffsetStore,
    PartitionLog,
    ScramCredentialStore,
    ShareStateStore,
    TransactionStore,
)
from trafka.domain.topics import TopicPartition, kafka_random_uuid

from .. import extras
from ..config.settings import Settings
from .checksum import crc32c_function
from .clock import Clock, WallClock, clock_from
from .log_cleaner import CleanerSlot

if TYPE_CHECKING:
    from trafka.adapters.filesystem.fileio import LogDirHealth
    from trafka.domain.security.delegation_tokens import DelegationTokenStore


class LogDirUnusable(Exception):
    """The log dir cannot be opened (locked by another broker, not a log dir, not writable...); the
    message names it. `trafka serve` exits 1, as Kafka does."""


@attrs.frozen
class Adapters:
    logs: LogStore
    catalog_store: CatalogStore
    offset_store: OffsetStore
    transaction_store: TransactionStore
    clock_ms: Callable[[], int]
    new_topic_id: Callable[[], uuid.UUID]
    checksum: Checksum
    decompress: Decompress
    new_member_id: Callable[[str], str]
    scram_store: ScramCredentialStore
    acl_store: AclStore
    quota_store: ClientQuotaStore
    cluster_id: str | None = None  # a log dir's own cluster id wins over the configured one
    started: Callable[[], None] = lambda: None  # after the catalog and logs are loaded
    stop: Callable[[], None] = lambda: None  # after the server stopped: flush, checkpoint, mark clean
    maintain: Callable[[int], None] = lambda now_ms: None  # every second: flush.ms
    checkpoint: Callable[[], None] = lambda: None  # periodically: flush and write recovery points
    health: LogDirHealth | None = None  # the log dir's write failures (filesystem store only)
    observer: BrokerObserver = attrs.field(factory=UnobservedBroker)  # the metrics, with the HTTP listener
    share_state_store: ShareStateStore = attrs.field(factory=MemoryShareStateStore)  # __share_group_state
    group_config_store: GroupConfigStore = attrs.field(factory=MemoryGroupConfigStore)  # GROUP ConfigRecords
    token_store: DelegationTokenStore = attrs.field(factory=MemoryDelegationTokenStore)  # delegation tokens
    clock: Clock = attrs.field(factory=WallClock)  # clock_ms's clock: what deadline waiters ask and listen to
    # The log cleaner's first dirty offsets (cleaner-offset-checkpoint in a log dir), and the cleaner itself.
    cleaner_checkpoints: CleanerCheckpoints = attrs.field(factory=MemoryCheckpoints)
    cleaning: CleanerSlot = attrs.field(factory=CleanerSlot)
    compacted_internal: Callable[[], list[tuple[TopicPartition, PartitionLog, dict[str, str]]]] = list
    internal_topic_ids: Mapping[str, uuid.UUID] = attrs.field(factory=dict)  # the log dir's internal topics
    # Given the function to call after each append to an internal topic Fetch reads (ADR 108).
    watch_internal_appends: Callable[[Callable[[TopicPartition], None]], None] = lambda appended: None


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def _observer(settings: Settings) -> BrokerObserver:
    """The HTTP listener's metrics when it is on; nothing otherwise (its libraries load only with it)."""
    if settings.http.port is None:
        return UnobservedBroker()
    extras.require("console", "the HTTP listener (--http-port, http.port)")
    from trafka.adapters.http.metrics import BrokerMetrics

    return BrokerMetrics()


def default_adapters(settings: Settings) -> Adapters:
    """The production adapters: the filesystem store (or memory with `kind = "memory"`)."""
    clock = clock_from(settings.broker.clock)
    clock_ms = clock.now_ms  # the filesystem store stamps segments and internal batches with it
    common: dict[str, Any] = {
        "observer": _observer(settings),
        "clock": clock,
        "clock_ms": clock.now_ms,
        "new_topic_id": lambda: kafka_random_uuid(uuid.uuid4),
        "checksum": crc32c_function(),
        "decompress": inflate,
        "new_member_id": lambda client_id: f"{client_id}-{uuid.uuid4()}",
    }
    if settings.storage.kind == "memory":
        return Adapters(
            logs=MemoryLogStore(topic_defaults_from(settings), clock_ms),
            catalog_store=MemoryCatalogStore(),
            offset_store=MemoryOffsetStore(),
            transaction_store=MemoryTransactionStore(),
            scram_store=MemoryScramCredentialStore(),
            acl_store=MemoryAclStore(),
            quota_store=MemoryClientQuotaStore(),
            **common,
        )
    from trafka.adapters.filesystem import DataDirError, LogDir

    from .log_dir import log_dir_stores

    try:
        logdir = LogDir.open(
            settings.storage.data_dir,
            settings.broker.node_id,
            kafka_random_uuid(uuid.uuid4),
            kafka_random_uuid(uuid.uuid4),
        )
    except DataDirError as exc:
        raise LogDirUnusable(str(exc)) from exc
    return Adapters(**log_dir_stores(logdir, settings, topic_defaults_from(settings), clock_ms), **common)


def topic_defaults_from(settings: Settings) -> dict[str, str]:
    """The broker's defaults for topic configs that the configuration sets (Kafka's log.* keys)."""
    log_settings = settings.log
    values = {
        "retention.ms": log_settings.retention_ms,
        "retention.bytes": log_settings.retention_bytes,
        "segment.bytes": log_settings.segment_bytes,
        "segment.ms": log_settings.roll_ms,
        "flush.messages": log_settings.flush_interval_messages,
        "flush.ms": log_settings.flush_interval_ms,
        "index.interval.bytes": log_settings.index_interval_bytes,
    }
    return {name: str(value) for name, value in values.items() if value is not None}
