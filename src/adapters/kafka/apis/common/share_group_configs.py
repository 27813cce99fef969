"""The GROUP config resource (type 32) holds a consumer group's `consumer.*` keys (KIP-848, the
domain's ConsumerGroupCoordinator), a share group's `share.*` keys and KIP-1191's
`errors.deadletterqueue.topic.name` and `errors.deadletterqueue.copy.record.enable` (the domain's
`groups.share.configs`), and a streams group's `streams.*` keys (KIP-1071, the StreamsGroupCoordinator's
`configs`), as Kafka's GroupConfig does. This module splits a resource's changes between the three,
validates all before applying any, and describes the union. A group's configs may be set before the group exists, as Kafka allows.
Authorization (ALTER_CONFIGS / DESCRIBE_CONFIGS on the group) is the config rooms'.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from trafka.domain.configs import ConfigEntry, ConfigSource, ConfigType
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.groups.share.configs import DEAD_LETTER_COPY_RECORD, DEAD_LETTER_TOPIC, INT_KEYS, SET
from trafka.domain.security.acls import AclOperation as Op
from trafka.domain.security.acls import ResourceType as Res

from ...request_context import ClientInfo
from ...runtime.share_dead_letters import dead_letter_refusal

if TYPE_CHECKING:
    from ...runtime.group_runtime import GroupRuntime
    from ...runtime.share_runtime import ShareRuntime
    from ...security.authorization import AuthorizationGate


class ConfiguresGroups(Protocol):
    """What a GROUP config resource reaches: the consumer and share groups, and the authorizer (dead letters)."""

    @property
    def groups(self) -> GroupRuntime: ...

    @property
    def share(self) -> ShareRuntime | None: ...

    @property
    def authorization(self) -> AuthorizationGate | None: ...


Changes = dict[str, tuple[int, str | None]]


def _is_share_key(name: str) -> bool:
    return name.startswith("share.") or name in (DEAD_LETTER_TOPIC, DEAD_LETTER_COPY_RECORD)


__all__ = ["SET", "alter", "dead_letter_refusal_for", "describe"]


def dead_letter_refusal_for(
    ctx: ConfiguresGroups, client: ClientInfo, changes: list[tuple[str, int, str | None]]
) -> tuple[ErrorCode, str | None] | None:
    """KIP-1191: a group's dead-letter topic carries the broker's prefix and its setter may WRITE it."""
    if ctx.share is None:
        return None
    gate = ctx.authorization

    def may_write(topic: str) -> bool:
        return gate is None or gate.allowed(client, Op.WRITE, Res.TOPIC, topic)

    return dead_letter_refusal(ctx.share.dead_letter_prefix, may_write, changes)


def alter(ctx: ConfiguresGroups, resource: Any, validate_only: bool) -> tuple[ErrorCode, str | None]:
    from trafka.domain.groups.streams.configs import is_streams_key  # the streams package loads on use (ADR 110)

    names = [c.name for c in resource.configs]
    if len(names) != len(set(names)):
        return ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys"
    share: Changes = {}
    consumer: Changes = {}
    streams: Changes = {}
    for c in resource.configs:
        family = share if _is_share_key(c.name) else streams if is_streams_key(c.name) else consumer
        family[c.name] = (int(c.config_operation), c.value)
    group_id = resource.resource_name
    try:
        if share and ctx.share is None:
            raise KafkaError(ErrorCode.INVALID_CONFIG, "Share groups are disabled.")
        if consumer and ctx.groups.consumer is None:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown group config name: {sorted(consumer)[0]}")
        if streams and ctx.groups.streams is None:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown group config name: {sorted(streams)[0]}")
        for only in (True, False) if not validate_only else (True,):
            if share and ctx.share is not None:
                ctx.share.groups.alter_configs(group_id, share, only)
            if consumer and ctx.groups.consumer is not None:
                ctx.groups.consumer.alter_group_configs(group_id, consumer, only)
            if streams and ctx.groups.streams is not None:
                ctx.groups.streams.alter_group_configs(group_id, streams, only)
    except KafkaError as error:
        return error.code, error.message
    return ErrorCode.NONE, None


def describe(ctx: ConfiguresGroups, group_id: str, keys: Iterable[str] | None) -> list[ConfigEntry]:
    wanted = None if keys is None else set(keys)
    entries = []
    if ctx.groups.consumer is not None:
        entries += ctx.groups.consumer.describe_group_configs(group_id, wanted)
    if ctx.groups.streams is not None:
        entries += ctx.groups.streams.describe_group_configs(group_id, wanted)
    if ctx.share is not None:
        for name, value, is_default in ctx.share.groups.describe_configs(group_id):
            if wanted is not None and name not in wanted:
                continue
            source = ConfigSource.DEFAULT_CONFIG if is_default else ConfigSource.GROUP_CONFIG
            kind = (
                ConfigType.INT
                if name in INT_KEYS
                else ConfigType.BOOLEAN
                if name == DEAD_LETTER_COPY_RECORD
                else ConfigType.STRING
            )
            entries.append(ConfigEntry(name, value, source, kind))
    return sorted(entries, key=lambda e: e.name)
