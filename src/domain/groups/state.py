"""The classic consumer group's states and every transition between them, in one table.

    Empty ──member joins──▶ PreparingRebalance ──join completes──▶ CompletingRebalance
      ▲                      ▲   │ (no members left)                  │ leader syncs
      │                      │   ▼                                    ▼
      └──────────────────────┴─ Empty            Stable ◀─────────────┘
                             └────────── rebalance ◀── Stable / CompletingRebalance
    Empty ──delete──▶ Dead

A transition not in `TRANSITIONS` is a bug in the coordinator and raises `IllegalTransition`.
"""

from __future__ import annotations

import enum


class GroupState(enum.Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


class GroupEvent(enum.Enum):
    REBALANCE = "a member joined, left, changed or expired"
    JOIN_COMPLETED = "every member rejoined, or the rebalance timed out, with members left"
    JOIN_COMPLETED_EMPTY = "the rebalance completed with no members left"
    LEADER_SYNCED = "the leader sent the assignment"
    DELETED = "the group was deleted"


S, E = GroupState, GroupEvent

TRANSITIONS: dict[tuple[GroupState, GroupEvent], GroupState] = {
    (S.EMPTY, E.REBALANCE): S.PREPARING_REBALANCE,
    (S.PREPARING_REBALANCE, E.REBALANCE): S.PREPARING_REBALANCE,
    (S.COMPLETING_REBALANCE, E.REBALANCE): S.PREPARING_REBALANCE,
    (S.STABLE, E.REBALANCE): S.PREPARING_REBALANCE,
    (S.PREPARING_REBALANCE, E.JOIN_COMPLETED): S.COMPLETING_REBALANCE,
    (S.PREPARING_REBALANCE, E.JOIN_COMPLETED_EMPTY): S.EMPTY,
    (S.COMPLETING_REBALANCE, E.LEADER_SYNCED): S.STABLE,
    (S.EMPTY, E.DELETED): S.DEAD,
    (S.DEAD, E.DELETED): S.DEAD,
}


class IllegalTransition(Exception):
    def __init__(self, state: GroupState, event: GroupEvent) -> None:
        super().__init__(f"no transition from {state.value} on {event.name}")
        self.state = state
        self.event = event


def next_state(state: GroupState, event: GroupEvent) -> GroupState:
    try:
        return TRANSITIONS[(state, event)]
    except KeyError:
        raise IllegalTransition(state, event) from None
