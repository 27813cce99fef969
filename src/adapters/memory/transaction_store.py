"""Transaction coordinator state kept in memory."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from trafka.domain.transactions import TxnMetadata


class MemoryTransactionStore:
    def __init__(self) -> None:
        self._txns: dict[str, TxnMetadata] = {}

    def load(self) -> list[TxnMetadata]:
        return [attrs.evolve(t, partitions=set(t.partitions), groups=set(t.groups)) for t in self._txns.values()]

    def record(self, txn: TxnMetadata) -> None:
        self._txns[txn.transactional_id] = attrs.evolve(txn, partitions=set(txn.partitions), groups=set(txn.groups))

    def remove(self, transactional_id: str) -> None:
        self._txns.pop(transactional_id, None)
