"""The controller mutation quota (KIP-599) the topic APIs share: CreateTopics, DeleteTopics and
CreatePartitions take one permit per partition created or deleted, after a topic is validated and
before it changes. From CreateTopics v6, DeleteTopics v5 and CreatePartitions v3 the quota is strict:
a topic asked for while the client's bucket is empty is THROTTLING_QUOTA_EXCEEDED; before, it is
served and the client only throttled. The response carries the throttle time, and the quota layer
(connection/quotas.py) mutes the connection for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.quotas import MutationQuota, QuotaSensors, QuotaType

from ...api import QuotaCharge
from ...request_context import ClientInfo

if TYPE_CHECKING:
    from collections.abc import Callable


class ChargesMutations(Protocol):
    """What a room that creates or deletes partitions reaches for the controller mutation quota."""

    @property
    def quotas(self) -> QuotaSensors: ...

    @property
    def clock_ms(self) -> Callable[[], int]: ...


def mutation_quota(ctx: ChargesMutations, client: ClientInfo, version: int, strict_since: int) -> MutationQuota | None:
    """This request's quota, or None when no controller_mutation_rate applies to the client."""
    return ctx.quotas.mutation_quota(client.principal.name, client.client_id, version >= strict_since, ctx.clock_ms())


def take(quota: MutationQuota | None, partitions: int) -> None:
    """Take the permits for one topic; KafkaError THROTTLING_QUOTA_EXCEEDED if the quota refuses them."""
    if quota is not None and not quota.acquire(partitions):
        raise KafkaError(ErrorCode.THROTTLING_QUOTA_EXCEEDED, ErrorCode.THROTTLING_QUOTA_EXCEEDED.message)


def throttle_of(quota: MutationQuota | None) -> int:
    return 0 if quota is None else quota.throttle_ms


def mutation_quota_use(
    sensors: QuotaSensors, request: Any, outcome: Any, user: str, client_id: str, percent: float, now: int
) -> QuotaCharge:
    """The topic APIs' `quota`: the response's controller mutation throttle (set by the handler) and
    the handler's time against the request quota; the larger wins."""
    bandwidth = getattr(outcome, "throttle_time_ms", 0) or 0
    request_throttle = sensors.record(QuotaType.REQUEST, user, client_id, percent, now)
    return QuotaCharge(outcome, QuotaType.CONTROLLER_MUTATION, bandwidth, request_throttle)
