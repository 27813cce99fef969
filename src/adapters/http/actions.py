"""What the console changes: create and delete topics, reset an empty group's offsets.

Each goes through the same domain services as the Kafka API (`TopicCatalog.create` / `delete`, the
offset manager's commit with generation -1, which only an Empty group accepts), so the console
obeys the broker's rules and records every change the same way. Failures are `ConsoleError`s with
a one-line message for the page.
"""

from __future__ import annotations

import attrs

from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.groups.group_metadata import CommittedOffset
from trafka.domain.groups.offsets import CommitRequest
from trafka.domain.groups.state import GroupState
from trafka.domain.replica_manager import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
from trafka.domain.topics import TopicPartition

from .view import BrokerView

RESET_TARGETS = ("earliest", "latest", "timestamp")


class ConsoleError(Exception):
    """An action the broker refused; the message is shown to the user."""


def create_topic(view: BrokerView, name: str, partitions: int, configs: dict[str, str]) -> None:
    try:
        view.catalog.create(name, partitions, -1, configs)
    except KafkaError as error:
        raise ConsoleError(error.message or error.code.name) from error


def delete_topic(view: BrokerView, name: str) -> None:
    topic = view.catalog.get(name)
    if topic is None:
        raise ConsoleError(f"The topic '{name}' does not exist.")
    if topic.is_internal:
        raise ConsoleError(f"Internal topic {name} cannot be deleted")
    view.catalog.delete(name)
    view.offsets.forget_topic(name)


@attrs.frozen
class OffsetReset:
    tp: TopicPartition
    current: int
    target: int


def plan_reset(view: BrokerView, group_id: str, target: str, timestamp_ms: int | None) -> list[OffsetReset]:
    """The new offset of every partition the group has committed, as kafka-consumer-groups.sh
    --reset-offsets --all-topics --dry-run shows them. Only an Empty group may be reset."""
    group = view.coordinator.group(group_id)
    if group is None:
        raise ConsoleError(f"Group {group_id} does not exist.")
    if group.state is not GroupState.EMPTY:
        raise ConsoleError(
            f"Assignments can only be reset if the group '{group_id}' is inactive, "
            f"but the current state is {group.state.name.title().replace('_', '')}."
        )
    if target not in RESET_TARGETS:
        raise ConsoleError(f"Reset to one of {', '.join(RESET_TARGETS)}, not {target!r}.")
    if target == "timestamp":
        if timestamp_ms is None:
            raise ConsoleError("Give a timestamp to reset to.")
        wanted = timestamp_ms
    else:
        wanted = {"earliest": EARLIEST_TIMESTAMP, "latest": LATEST_TIMESTAMP}[target]
    plan = []
    for tp, committed in sorted(view.offsets.fetch(group_id, None).items()):
        marks = view.replicas.watermarks(tp)
        if committed is None or marks is None:
            continue
        found = view.replicas.list_offset(tp, wanted)
        offset = found.offset
        if found.error is not ErrorCode.NONE:
            raise ConsoleError(f"{tp}: {found.error.name}")
        if offset < 0:  # no record at or after the timestamp: the log end, as Kafka's tool does
            offset = marks[1]
        plan.append(OffsetReset(tp, committed.offset, offset))
    return plan


def reset_offsets(view: BrokerView, group_id: str, plan: list[OffsetReset]) -> None:
    request = CommitRequest(group_id, "", -1, None, tuple((r.tp, CommittedOffset(r.target)) for r in plan))
    errors = view.offsets.commit(request, view.clock_ms())
    failed = {str(tp): error.name for tp, error in errors.items() if error is not ErrorCode.NONE}
    if failed:
        raise ConsoleError(f"Offsets not reset: {failed}")
