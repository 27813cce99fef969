"""The GROUP config resource as recorded: the overrides each group id holds, written through the
`GroupConfigStore` port (ConfigRecords of resource type GROUP in the metadata log, ADR 59) and
replayed once, when the broker starts. Only what changes is written; a key set back to its default
is written as removed."""

from __future__ import annotations

from collections.abc import Mapping

from trafka.domain.ports import GroupConfigStore


class DurableGroupConfigs:
    """The store and what it holds now (replayed once, at start)."""

    def __init__(self, store: GroupConfigStore) -> None:
        self.store = store
        self.recorded: dict[str, dict[str, str]] = {g: dict(c) for g, c in store.load().items()}

    def record(self, group_id: str, now: Mapping[str, str], keys: set[str]) -> None:
        """The overrides of `keys` are now `now` (a key missing from it is not overridden)."""
        before = self.recorded.get(group_id, {})
        changes = {k: now.get(k) for k in sorted(keys) if now.get(k) != before.get(k)}
        if not changes:
            return
        self.store.group_configs_changed(group_id, changes)
        after = {k: v for k, v in {**before, **changes}.items() if v is not None}
        if after:
            self.recorded[group_id] = after
        else:
            self.recorded.pop(group_id, None)
