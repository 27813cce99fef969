"""The GROUP config resource (type 32) made durable: what IncrementalAlterConfigs (or AlterConfigs)
leaves set on a group id is written to the GroupConfigStore (ConfigRecords of resource type GROUP in
the metadata log, as Kafka's controller writes them) and applied again to the coordinators when the
broker starts.

The coordinators (consumer groups' `consumer.*`, share groups' `share.*`, streams groups' `streams.*`) validate and hold the values.
This module records a change once they have validated it and before they apply it, then records again
any key whose served value differs (a number normalised), so a value is stored as it is served. These
writes go through the port at once, not through the unit of work: Kafka's controller writes the record
before the change is applied, and a change that could not be written is not applied (ADR 79). As in
Kafka, the configs belong to the group id: they may be set before the group exists and DeleteGroups
leaves them (Kafka's DeleteGroups only writes the group's tombstones; its GroupConfigManager forgets a
group only when its overrides are removed).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from trafka.domain.configs import ConfigEntry, ConfigSource
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.groups.recorded_configs import DurableGroupConfigs as DurableGroupConfigs  # the wiring names it here
from trafka.schema_codec.messages import IncrementalAlterConfigsRequest

# The GROUP configs' rules (`apis/common/share_group_configs`, `config_resources`) are imported in each
# function: at the first GROUP config altered or described, or at start when some are recorded, so a
# broker without any never loads them (ADR 124).
if TYPE_CHECKING:
    from trafka.domain.groups.modern import ConsumerGroupCoordinator
    from trafka.domain.groups.streams import StreamsGroupCoordinator

    from ..security.authorization import AuthorizationGate
    from .group_runtime import GroupRuntime
    from .share_runtime import ShareRuntime


class RecordsGroupConfigs(Protocol):
    """What the durable GROUP config resource reaches: the groups that validate and hold the values, the
    authorizer (dead-letter topics), and the store (None: not durable). The rooms that alter or describe
    configs declare these; the wiring passes its `BrokerServices`."""

    @property
    def groups(self) -> GroupRuntime: ...

    @property
    def share(self) -> ShareRuntime | None: ...

    @property
    def authorization(self) -> AuthorizationGate | None: ...

    @property
    def group_configs(self) -> DurableGroupConfigs | None: ...


log = logging.getLogger(__name__)

_Resource = IncrementalAlterConfigsRequest.AlterConfigsResource
_SET, _DELETE = 0, 1


def alter(ctx: RecordsGroupConfigs, resource: Any, validate_only: bool) -> tuple[ErrorCode, str | None]:
    """IncrementalAlterConfigs of one GROUP resource: validated by the coordinators, recorded, then
    applied (durable before it is served, as Kafka's controller writes the record before brokers apply
    it). The empty name is refused as Kafka's controller refuses it (no default group resource)."""
    from ..apis.common import share_group_configs

    if not resource.resource_name:
        return ErrorCode.INVALID_REQUEST, "Default group resources are not allowed."
    error, message = share_group_configs.alter(ctx, resource, True)
    durable = ctx.group_configs
    if error != ErrorCode.NONE or validate_only:
        return error, message
    group_id = resource.resource_name
    keys = {c.name for c in resource.configs}
    if durable is not None:  # SET and DELETE are the only operations the coordinators accept
        durable.record(group_id, {c.name: c.value for c in resource.configs if c.config_operation == _SET}, keys)
    error, message = share_group_configs.alter(ctx, resource, False)
    if durable is not None:  # as served (a number normalised, or the change refused after all)
        described = share_group_configs.describe(ctx, group_id, keys)
        now = {e.name: e.value for e in described if e.source == ConfigSource.GROUP_CONFIG and e.value is not None}
        durable.record(group_id, now, keys)
    return error, message


def replace(ctx: RecordsGroupConfigs, resource: Any, validate_only: bool) -> tuple[ErrorCode, str | None]:
    """AlterConfigs (the legacy, whole-set replacement) of one GROUP resource, as Kafka's controller
    takes it: the given keys set, every other override of the group removed."""
    from ..apis.common.config_resources import GROUP_RESOURCE

    names = [c.name for c in resource.configs]
    if len(names) != len(set(names)):
        return ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys"
    current = _overridden(ctx, resource.resource_name)
    Config = _Resource.AlterableConfig
    configs = [Config(name=c.name, config_operation=_SET, value=c.value) for c in resource.configs]
    configs += [Config(name=n, config_operation=_DELETE, value=None) for n in sorted(current - set(names))]
    incremental = _Resource(resource_type=GROUP_RESOURCE, resource_name=resource.resource_name, configs=configs)
    return alter(ctx, incremental, validate_only)


def describe(ctx: RecordsGroupConfigs, group_id: str) -> list[ConfigEntry]:
    """Every config of the group id, as DescribeConfigs of its GROUP resource answers (the console)."""
    from ..apis.common import share_group_configs

    return share_group_configs.describe(ctx, group_id, None)


def _overridden(ctx: RecordsGroupConfigs, group_id: str) -> set[str]:
    from ..apis.common import share_group_configs

    return {e.name for e in share_group_configs.describe(ctx, group_id, None) if e.source == ConfigSource.GROUP_CONFIG}


def restore(ctx: RecordsGroupConfigs) -> None:
    """Apply the recorded overrides at start. A value the broker refuses now (its bounds changed, share
    groups turned off) is logged and left out, and stays recorded."""
    durable = ctx.group_configs
    if durable is None or not durable.recorded:
        return
    from ..apis.common import share_group_configs

    for group_id, configs in sorted(durable.recorded.items()):
        error, _ = share_group_configs.alter(ctx, _set(group_id, configs), False)
        if error == ErrorCode.NONE:
            continue
        for name, value in sorted(configs.items()):  # one by one: keep what is still valid
            error, message = share_group_configs.alter(ctx, _set(group_id, {name: value}), False)
            if error != ErrorCode.NONE:
                log.warning("group %r: recorded config %s=%s not applied: %s", group_id, name, value, message)


def restore_consumer_groups(durable: DurableGroupConfigs, consumer: ConsumerGroupCoordinator) -> None:
    """The recorded `consumer.*` overrides, before the consumer groups are loaded from
    `__consumer_offsets`: a loaded member's session deadline follows its group's session timeout.
    (`restore` applies everything again once the broker's context exists.)"""
    for group_id, configs in sorted(durable.recorded.items()):
        changes = {name: (_SET, value) for name, value in sorted(configs.items()) if name.startswith("consumer.")}
        if changes and not _consumer_alter(consumer, group_id, changes):  # together, else one by one
            for name, change in changes.items():
                _consumer_alter(consumer, group_id, {name: change})


def restore_streams_groups(durable: DurableGroupConfigs, streams: StreamsGroupCoordinator) -> None:
    """The recorded `streams.*` overrides, before the streams groups are loaded (their members'
    sessions follow the group's session timeout), as `restore_consumer_groups`."""
    from trafka.domain.groups.streams.configs import is_streams_key  # with the streams coordinator

    for group_id, configs in sorted(durable.recorded.items()):
        changes = {name: (_SET, value) for name, value in sorted(configs.items()) if is_streams_key(name)}
        for batch in [changes] + [{name: change} for name, change in changes.items()]:
            try:
                streams.alter_group_configs(group_id, batch, False)
            except KafkaError:
                continue  # logged by `restore`, which meets the same refusal
            if batch is changes:
                break


def _consumer_alter(consumer: ConsumerGroupCoordinator, group_id: str, changes: dict[str, Any]) -> bool:
    try:
        consumer.alter_group_configs(group_id, changes, False)
    except KafkaError:
        return False  # logged by `restore`, which meets the same refusal
    return True


def _set(group_id: str, configs: Mapping[str, str]) -> Any:
    from ..apis.common.config_resources import GROUP_RESOURCE

    Config = _Resource.AlterableConfig
    return _Resource(
        resource_type=GROUP_RESOURCE,
        resource_name=group_id,
        configs=[Config(name=k, config_operation=_SET, value=v) for k, v in sorted(configs.items())],
    )
