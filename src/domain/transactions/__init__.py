"""Transactions: the coordinator state machine and the service that writes its markers."""

from .coordinator import Marker, TransactionCoordinator, TxnMetadata
from .service import TransactionService
from .state import IllegalTxnTransition, TxnEvent, TxnState

__all__ = [
    "IllegalTxnTransition",
    "Marker",
    "TransactionCoordinator",
    "TransactionService",
    "TxnEvent",
    "TxnMetadata",
    "TxnState",
]
