"""Transactions: the coordinator state machine and the service that writes its markers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .coordinator import Marker, TransactionCoordinator, TxnMetadata
    from .service import TransactionService
    from .state import IllegalTxnTransition, TxnEvent, TxnState

# Each name's module, imported on first use (ADR 124): a broker builds its transaction coordinator at the
# first transactional (or idempotent) request, or at start when the transaction log holds transactions;
# the settings read `transaction.max.timeout.ms`'s default from `limits` alone.
_EXPORTS = {
    "IllegalTxnTransition": "state",
    "Marker": "coordinator",
    "TransactionCoordinator": "coordinator",
    "TransactionService": "service",
    "TxnEvent": "state",
    "TxnMetadata": "coordinator",
    "TxnState": "state",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "IllegalTxnTransition",
    "Marker",
    "TransactionCoordinator",
    "TransactionService",
    "TxnEvent",
    "TxnMetadata",
    "TxnState",
]
