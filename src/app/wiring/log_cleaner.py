"""The log cleaner's place in the wiring: the slot the adapters carry, where the running broker's cleaner
(`trafka.app.cleaner`) is kept once the broker starts."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from ..cleaner.runtime import LogCleaner


@attrs.define
class CleanerSlot:
    """Where the running broker's log cleaner is kept (set when the broker starts)."""

    cleaner: LogCleaner | None = None
