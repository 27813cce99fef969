"""The group coordinators the settings ask for: KIP-848's consumer groups and KIP-1071's streams groups."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from trafka.domain.catalog import TopicCatalog
from trafka.domain.groups.group_ids import ClassicOrShareGroupIds

from ..config.settings import ConfigError, Settings

if TYPE_CHECKING:
    from trafka.domain.groups.metadata_hash import MetadataHasher
    from trafka.domain.groups.modern import ConsumerGroupCoordinator, ConsumerGroupSettings
    from trafka.domain.groups.modern.consumer import ClassicGroups, TopicLookup
    from trafka.domain.groups.streams import StreamsGroupCoordinator


def metadata_hasher() -> MetadataHasher:
    """KIP-1101's group metadata hashes, with python-xxhash's XXH3-64 as Kafka's hash4j (ADR 138)."""
    import xxhash

    from trafka.domain.groups.metadata_hash import MetadataHasher

    return MetadataHasher(xxhash.xxh3_64_intdigest)


def consumer_protocol_enabled(settings: Settings) -> bool:
    """Is `consumer` among `group.coordinator.rebalance.protocols`? Its `group.consumer.*` settings are
    checked now: a configuration error stops the start, as when the coordinator was built at start (it
    is built at its first use, ADR 118)."""
    if "consumer" not in {p.strip() for p in settings.groups.rebalance_protocols.split(",")}:
        return False
    consumer_settings(settings)
    return True


def consumer_settings(settings: Settings) -> ConsumerGroupSettings:
    from trafka.domain.groups.modern.assignors import assignor_names
    from trafka.domain.groups.modern.settings import ConsumerGroupSettings, MigrationPolicy

    groups = settings.groups
    try:
        migration_policy = MigrationPolicy.parse(groups.consumer_migration_policy)
    except ValueError as exc:
        raise ConfigError(f"invalid configuration: {exc}") from exc
    return ConsumerGroupSettings(
        session_timeout_ms=groups.consumer_session_timeout_ms,
        heartbeat_interval_ms=groups.consumer_heartbeat_interval_ms,
        max_size=groups.consumer_max_size,
        assignors=assignor_names(groups.consumer_assignors),
        min_session_timeout_ms=groups.consumer_min_session_timeout_ms,
        max_session_timeout_ms=groups.consumer_max_session_timeout_ms,
        min_heartbeat_interval_ms=groups.consumer_min_heartbeat_interval_ms,
        max_heartbeat_interval_ms=groups.consumer_max_heartbeat_interval_ms,
        migration_policy=migration_policy,
    )


def consumer_groups_from(
    settings: Settings, topics: TopicLookup, classic: ClassicGroups
) -> ConsumerGroupCoordinator | None:
    """The KIP-848 coordinator, unless `group.coordinator.rebalance.protocols` leaves `consumer` out."""
    if "consumer" not in {p.strip() for p in settings.groups.rebalance_protocols.split(",")}:
        return None
    from trafka.adapters.kafka.wire.consumer_protocol import KafkaPythonConsumerProtocol
    from trafka.domain.groups.modern.consumer import ConsumerGroupCoordinator

    return ConsumerGroupCoordinator(
        consumer_settings(settings),
        topics,
        classic,
        lambda: str(uuid.uuid4()),
        KafkaPythonConsumerProtocol(),
        metadata_hasher(),
    )


def streams_plugin(settings: Settings) -> str:
    """`group.streams.topology.description.plugin.class`, checked at start (the coordinator is built at
    the first streams group request, ADR 110): only Kafka's in-memory plugin can be honoured."""
    plugin = settings.groups.streams_topology_description_plugin_class.strip()
    if not plugin:
        return plugin  # the default: nothing to check, and the descriptions' module stays unloaded (ADR 118)
    from trafka.domain.groups.streams.description import IN_MEMORY_PLUGIN

    if plugin != IN_MEMORY_PLUGIN:
        raise ConfigError(
            f"group.streams.topology.description.plugin.class: {plugin!r} cannot be loaded (a Java class); "
            f"trafka keeps descriptions in memory with {IN_MEMORY_PLUGIN}"
        )
    return plugin


def streams_groups_from(
    settings: Settings,
    catalog: TopicCatalog,
    group_ids: ClassicOrShareGroupIds,
    is_consumer_group: Callable[[str], bool],
) -> StreamsGroupCoordinator:
    """The KIP-1071 coordinator (served while `streams.version` is finalized at 1, ADR 82)."""
    from trafka.domain.groups.streams import StreamsGroupCoordinator, StreamsGroupSettings

    groups = settings.groups
    streams = StreamsGroupCoordinator(
        StreamsGroupSettings(
            session_timeout_ms=groups.streams_session_timeout_ms,
            heartbeat_interval_ms=groups.streams_heartbeat_interval_ms,
            num_standby_replicas=groups.streams_num_standby_replicas,
            max_standby_replicas=groups.streams_max_standby_replicas,
            max_size=groups.streams_max_size,
            min_session_timeout_ms=groups.streams_min_session_timeout_ms,
            max_session_timeout_ms=groups.streams_max_session_timeout_ms,
            min_heartbeat_interval_ms=groups.streams_min_heartbeat_interval_ms,
            max_heartbeat_interval_ms=groups.streams_max_heartbeat_interval_ms,
            initial_rebalance_delay_ms=groups.streams_initial_rebalance_delay_ms,
        ),
        catalog,
        group_ids,
        is_consumer_group,
        metadata_hasher(),
    )
    streams.describes_topologies = bool(streams_plugin(settings))
    group_ids.streams = streams
    return streams
