"""What a consumer group coordinator is set up with: Kafka's `group.consumer.*` broker configs, and the
classic coordinator it shares group ids with (a port, so the two never import each other).

A leaf of `modern/`: the coordinator and the classic members it hosts both read these, and neither
module imports the other for them.
"""

from __future__ import annotations

import enum
from typing import Protocol

import attrs

from ...errors import ErrorCode
from ..model import Completion, Group


class MigrationPolicy(enum.Enum):
    """Kafka's `group.consumer.migration.policy` (ConsumerGroupMigrationPolicy), case-insensitive."""

    DISABLED = "disabled"
    UPGRADE = "upgrade"
    DOWNGRADE = "downgrade"
    BIDIRECTIONAL = "bidirectional"

    @classmethod
    def parse(cls, text: str) -> MigrationPolicy:
        try:
            return cls(text.strip().lower())
        except ValueError:
            names = ", ".join(p.value for p in cls)
            raise ValueError(f"group.consumer.migration.policy: {text!r} is not one of {names}") from None

    @property
    def upgrade_enabled(self) -> bool:
        return self in (MigrationPolicy.UPGRADE, MigrationPolicy.BIDIRECTIONAL)

    @property
    def downgrade_enabled(self) -> bool:
        return self in (MigrationPolicy.DOWNGRADE, MigrationPolicy.BIDIRECTIONAL)


class ClassicGroups(Protocol):
    """What the consumer coordinator needs of the classic one: the group ids both share."""

    def is_classic_group(self, group_id: str) -> bool: ...

    def is_empty_classic_group(self, group_id: str) -> bool: ...

    def delete(self, group_id: str) -> ErrorCode: ...

    def group(self, group_id: str) -> Group | None: ...

    def accepts_session_timeout(self, session_timeout_ms: int) -> bool: ...

    def release(self, group_id: str) -> list[Completion]:
        """The group is upgraded: gone from the classic table, its waiting requests answered."""
        ...

    def adopt(self, group: Group, now: int, rebalance: bool) -> list[Completion]:
        """A consumer group downgraded to this classic group: stored, and rebalanced if asked."""
        ...


@attrs.frozen
class ConsumerGroupSettings:
    """Kafka's `group.consumer.*` broker configs."""

    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 5_000
    max_size: int = 2**31 - 1
    assignors: tuple[str, ...] = ("uniform", "range")
    min_session_timeout_ms: int = 45_000
    max_session_timeout_ms: int = 60_000
    min_heartbeat_interval_ms: int = 5_000
    max_heartbeat_interval_ms: int = 15_000
    migration_policy: MigrationPolicy = MigrationPolicy.BIDIRECTIONAL
