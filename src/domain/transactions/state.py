"""A transaction's states and transitions, in one table (Kafka's TransactionState).

On a single node the coordinator writes the markers itself, inside the EndTxn call, so the Prepare
states last only for that call; they are kept so the log of transaction states reads like Kafka's.
"""

from __future__ import annotations

import enum


class TxnState(enum.IntEnum):
    """Values as Kafka stores them in `__transaction_state`."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def kafka_name(self) -> str:
        return "".join(word.title() for word in self.name.split("_"))


class TxnEvent(enum.Enum):
    INIT = "InitProducerId"
    ADD = "AddPartitionsToTxn / AddOffsetsToTxn"
    COMMIT = "EndTxn(commit)"
    ABORT = "EndTxn(abort) or a timeout"
    MARKERS_WRITTEN = "every marker is in its partition"


T, E = TxnState, TxnEvent

TRANSITIONS: dict[tuple[TxnState, TxnEvent], TxnState] = {
    (T.EMPTY, E.INIT): T.EMPTY,
    (T.COMPLETE_COMMIT, E.INIT): T.EMPTY,
    (T.COMPLETE_ABORT, E.INIT): T.EMPTY,
    (T.EMPTY, E.ADD): T.ONGOING,
    (T.ONGOING, E.ADD): T.ONGOING,
    (T.COMPLETE_COMMIT, E.ADD): T.ONGOING,
    (T.COMPLETE_ABORT, E.ADD): T.ONGOING,
    (T.ONGOING, E.COMMIT): T.PREPARE_COMMIT,
    (T.ONGOING, E.ABORT): T.PREPARE_ABORT,
    (T.PREPARE_COMMIT, E.MARKERS_WRITTEN): T.COMPLETE_COMMIT,
    (T.PREPARE_ABORT, E.MARKERS_WRITTEN): T.COMPLETE_ABORT,
}


class IllegalTxnTransition(Exception):
    def __init__(self, state: TxnState, event: TxnEvent) -> None:
        super().__init__(f"no transaction transition from {state.kafka_name} on {event.name}")


def next_txn_state(state: TxnState, event: TxnEvent) -> TxnState:
    try:
        return TRANSITIONS[(state, event)]
    except KeyError:
        raise IllegalTxnTransition(state, event) from None
