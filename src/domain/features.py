"""Feature flags (KIP-584): what this broker supports and what the cluster has finalized.

Kafka 4.2's broker lists its supported features in ApiVersions (`metadata.version` 7-29, `kraft.version`,
`transaction.version`, `group.version`, `eligible.leader.replicas.version`, `share.version`,
`streams.version`, each 0 up to its latest production level) and the finalized levels beside them; a
client reads the finalized ones to choose a protocol (`group.version` >= 1 for the KIP-848 consumer
group protocol, `transaction.version` >= 2 for KIP-890's transactions V2).

trafka finalizes a feature only at the level it implements: each feature's `ceiling` is the highest
level it serves (the Kafka adapter computes it from the APIs served), the supported range is Kafka
4.2's capped at that ceiling (a feature whose ceiling is 0 is left out, as Kafka leaves out a feature
whose latest production level is 0), and the finalized level is the one recorded (by `UpdateFeatures`,
a KRaft FeatureLevelRecord) or else Kafka 4.2's bootstrap level, both capped at the ceiling, so a
client never learns of a protocol the broker cannot speak. Level 0 means not finalized (omitted).

`update` validates a batch of changes as Kafka's FeatureControlManager does for a single-node KRaft
quorum, all or nothing, and records them through the store.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import attrs

from .errors import ErrorCode

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
TRANSACTION_VERSION = "transaction.version"
GROUP_VERSION = "group.version"
ELIGIBLE_LEADER_REPLICAS_VERSION = "eligible.leader.replicas.version"
SHARE_VERSION = "share.version"
STREAMS_VERSION = "streams.version"

MINIMUM_METADATA_VERSION = 7  # IBP_3_3_IV3, Kafka 4's MetadataVersion.MINIMUM_VERSION
LATEST_METADATA_VERSION = 29  # IBP_4_2_IV1, Kafka 4.2's MetadataVersion.LATEST_PRODUCTION
METADATA_VERSION_43 = 30  # IBP_4_3_IV0: cordoned log dirs (KIP-1066)
METADATA_VERSION_44 = 33  # IBP_4_4_IV2, Kafka 4.4's MetadataVersion.LATEST_PRODUCTION

KAFKA_SUPPORTED: Mapping[str, tuple[int, int]] = {
    METADATA_VERSION: (MINIMUM_METADATA_VERSION, METADATA_VERSION_44),
    KRAFT_VERSION: (0, 1),
    TRANSACTION_VERSION: (0, 2),
    GROUP_VERSION: (0, 1),
    ELIGIBLE_LEADER_REPLICAS_VERSION: (0, 1),
    SHARE_VERSION: (0, 2),
    STREAMS_VERSION: (0, 1),
}
"""What a Kafka 4.2 broker lists as supported (BrokerFeatures.defaultSupportedFeatures, no unstable
versions): metadata.version from 3.3-IV3 (to 4.2-IV1 in 4.2: 4.3-IV0 and 4.4-IV2 here, which the
ceiling keeps at 4.2-IV1 on a broker pinned to 4.2, at 4.3-IV0 pinned to 4.3), every other feature
from 0 to its latest production level; `share.version` to Kafka 4.4's 2 (KIP-1191's dead-letter queue, ShareVersion.SV_2),
which the ceiling keeps at 1 on a broker pinned before 4.4."""

KAFKA_BOOTSTRAP: Mapping[str, int] = {
    METADATA_VERSION: LATEST_METADATA_VERSION,
    KRAFT_VERSION: 1,  # `kafka-storage format --standalone`: a single voter with a VotersRecord
    TRANSACTION_VERSION: 2,
    GROUP_VERSION: 1,
    ELIGIBLE_LEADER_REPLICAS_VERSION: 1,
    SHARE_VERSION: 1,
    STREAMS_VERSION: 1,
}
"""The levels a new Kafka 4.2 cluster is formatted with (release version 4.2): a new log dir opens in
Kafka 4.2 (ADR 64). A broker pinned to 4.4 formats `share.version` 2 as a new Kafka 4.4 cluster does
(ShareVersion.SV_2 bootstraps from 4.4-IV0, SV_1 from 4.2-IV0): `KAFKA_44_BOOTSTRAP`."""

KAFKA_43_BOOTSTRAP: Mapping[str, int] = {**KAFKA_BOOTSTRAP, METADATA_VERSION: METADATA_VERSION_43}
KAFKA_44_BOOTSTRAP: Mapping[str, int] = {**KAFKA_BOOTSTRAP, METADATA_VERSION: METADATA_VERSION_44, SHARE_VERSION: 2}

METADATA_CHANGED: frozenset[int] = frozenset({7, 8, 11, 13, 14, 15, 17, 23, 30, 32, 33})
"""The metadata.version levels from 7 up that change the metadata log's records (MetadataVersion's
didMetadataChange): a downgrade across one of them might lose metadata, so Kafka refuses it."""


class UpgradeType(enum.IntEnum):
    """UpdateFeatures' UpgradeType (v1+; v0's AllowDowngrade is SAFE_DOWNGRADE or UPGRADE)."""

    UNKNOWN = 0
    UPGRADE = 1
    SAFE_DOWNGRADE = 2
    UNSAFE_DOWNGRADE = 3

    @classmethod
    def of(cls, code: int) -> UpgradeType:
        return cls(code) if code in cls._value2member_map_ else cls.UNKNOWN


@attrs.frozen
class FeatureUpdate:
    name: str
    level: int
    upgrade: UpgradeType


@attrs.frozen
class FeatureUpdateError:
    """Why a batch of updates was refused (none of it applied): INVALID_UPDATE_VERSION with Kafka's words."""

    code: ErrorCode
    message: str


class FeatureLevelStore(Protocol):
    """Where finalized feature levels are recorded (KRaft FeatureLevelRecords in `__cluster_metadata`)."""

    def feature_levels(self) -> Mapping[str, int]:
        """The levels recorded, by feature name (0 included: a feature turned off)."""

    def feature_levels_changed(self, levels: Mapping[str, int]) -> None:
        """Record new finalized levels (0: no longer finalized); durable before it returns."""


class FeatureControl:
    """The supported and finalized features of this single-node cluster. `ceilings`: the highest level
    of each feature this broker implements (a missing feature: 0)."""

    def __init__(self, store: FeatureLevelStore, node_id: int, bootstrap: Mapping[str, int] = KAFKA_BOOTSTRAP) -> None:
        self._store = store
        self._node_id = node_id
        self._bootstrap = bootstrap  # the levels of a new log dir, where the store records none
        self.changes = 0  # updates recorded since start-up: the finalized epoch where no metadata log keeps one
        # Called when eligible leader replicas are turned on: at a new log dir's bootstrap (Kafka's
        # ActivationRecordsGenerator) or by an UpdateFeatures naming them (ConfigurationControlManager),
        # where Kafka writes the cluster-level min.insync.replicas (the wiring: BrokerConfigs.elr_safety)
        self.elr_turned_on: Callable[[], None] = lambda: None

    def supported(self, ceilings: Mapping[str, int]) -> dict[str, tuple[int, int]]:
        """Kafka 4.2's supported ranges capped at what this broker implements; features whose cap is 0
        left out."""
        supported = {}
        for name, (low, high) in KAFKA_SUPPORTED.items():
            top = min(high, ceilings.get(name, 0))
            if top > 0 and top >= low:
                supported[name] = (low, top)
        return supported

    def finalized(self, ceilings: Mapping[str, int]) -> dict[str, int]:
        """The finalized level of each feature above 0: recorded or bootstrapped, capped at the ceiling."""
        recorded = self._store.feature_levels()
        finalized = {}
        for name, (low, high) in self.supported(ceilings).items():
            level = min(recorded.get(name, self._bootstrap[name]), high)
            if level > 0 and level >= low:
                finalized[name] = level
        return finalized

    def record_bootstrapped(self, ceilings: Mapping[str, int]) -> None:
        """Record the levels in force that the store does not hold (the bootstrapped ones), as
        `kafka-storage format` writes them into a new log dir: a Kafka node opening the metadata log
        then finalizes what this broker does (ADR 64). kraft.version is no FeatureLevelRecord in Kafka."""
        recorded = self._store.feature_levels()
        missing = {
            name: level
            for name, level in self.finalized(ceilings).items()
            if name not in recorded and name != KRAFT_VERSION
        }
        if missing:
            self._store.feature_levels_changed(missing)
            if missing.get(ELIGIBLE_LEADER_REPLICAS_VERSION, 0) > 0:
                self.elr_turned_on()

    def update(
        self, updates: Sequence[FeatureUpdate], ceilings: Mapping[str, int], validate_only: bool
    ) -> FeatureUpdateError | None:
        """Apply every update or none (Kafka's FeatureControlManager.updateFeatures), recording the new
        levels unless `validate_only`. None when they are (or would be) applied."""
        supported = self.supported(ceilings)
        finalized = self.finalized(ceilings)
        changes: dict[str, int] = {}
        for update in updates:
            error = self._check(update, supported, finalized)
            if error is not None:
                return FeatureUpdateError(
                    ErrorCode.INVALID_UPDATE_VERSION,
                    f"Invalid update version {update.level} for feature {update.name}. {error}",
                )
            changes[update.name] = update.level
        changes = {name: level for name, level in changes.items() if level != finalized.get(name, 0)}
        if changes and not validate_only:
            self._store.feature_levels_changed(changes)
            self.changes += 1
        if not validate_only and any(u.name == ELIGIBLE_LEADER_REPLICAS_VERSION and u.level > 0 for u in updates):
            self.elr_turned_on()  # as Kafka, whenever the request names the feature at a level above 0
        return None

    def _check(
        self, update: FeatureUpdate, supported: Mapping[str, tuple[int, int]], finalized: Mapping[str, int]
    ) -> str | None:
        if update.upgrade == UpgradeType.UNKNOWN:
            return "The controller does not support the given upgrade type."
        if update.level < 0:
            return "A feature version cannot be less than 0."
        current = finalized.get(update.name, 0)
        low, high = supported.get(update.name, (0, 0))
        if update.name not in supported and update.level > 0:
            return f"Local controller {self._node_id} does not support this feature."
        if (
            update.level != 0
            and not low <= update.level <= high
            or update.name == METADATA_VERSION
            and update.level < low
        ):
            return f"Local controller {self._node_id} only supports versions {low}-{high}"
        if update.level < current and update.upgrade == UpgradeType.UPGRADE:
            return (
                "Can't downgrade the version of this feature without setting the upgrade type to either safe"
                " or unsafe downgrade."
            )
        if update.level > current and update.upgrade != UpgradeType.UPGRADE:
            return "Can't downgrade to a newer version."
        if update.name == KRAFT_VERSION and update.level < current:
            return "Downgrading kraft.version is not supported."
        if update.name == METADATA_VERSION and update.level < current:
            if any(level in METADATA_CHANGED for level in range(update.level + 1, current + 1)):
                if update.upgrade == UpgradeType.UNSAFE_DOWNGRADE:
                    return "Unsafe metadata downgrade is not supported in this version."
                return "Refusing to perform the requested downgrade because it might delete metadata information."
        return None
