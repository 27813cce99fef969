"""What the console changes: create and delete topics, reset an empty group's offsets, delete a group.

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
from trafka.domain.offset_lookup import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP
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
    if view.share is not None and view.share.topic_deleted(topic.topic_id):  # its share-group state goes too
        view.share_changed()


@attrs.frozen
class OffsetReset:
    tp: TopicPartition
    current: int
    target: int


def _group_state(view: BrokerView, group_id: str) -> tuple[str, str]:
    """The group's kind (classic, consumer, share, streams) and its state as Kafka's tools print it."""
    classic = view.coordinator.group(group_id)
    if classic is not None:
        return "classic", classic.state.name.title().replace("_", "")
    if view.consumer_groups is not None and group_id in view.consumer_groups.groups:
        return "consumer", view.consumer_groups.groups[group_id].state.value
    if view.share is not None and group_id in view.share.coordinator.groups:
        return "share", view.share.coordinator.state(group_id).value
    if view.streams_groups is not None and group_id in view.streams_groups.groups:
        return "streams", view.streams_groups.state(group_id).value
    raise ConsoleError(f"Group {group_id} does not exist.")


def plan_reset(view: BrokerView, group_id: str, target: str, timestamp_ms: int | None) -> list[OffsetReset]:
    """The new offset of every partition the group has committed, as kafka-consumer-groups.sh
    --reset-offsets --all-topics --dry-run shows them; for a share group, of every share-partition's
    start offset, as kafka-share-groups.sh. Only an Empty group may be reset."""
    kind, state = _group_state(view, group_id)
    if state != "Empty":
        raise ConsoleError(
            f"Assignments can only be reset if the group '{group_id}' is inactive, but the current state is {state}."
        )
    if target not in RESET_TARGETS:
        raise ConsoleError(f"Reset to one of {', '.join(RESET_TARGETS)}, not {target!r}.")
    if target == "timestamp":
        if timestamp_ms is None:
            raise ConsoleError("Give a timestamp to reset to.")
        wanted = timestamp_ms
    else:
        wanted = {"earliest": EARLIEST_TIMESTAMP, "latest": LATEST_TIMESTAMP}[target]
    if kind == "share":
        assert view.share is not None
        current = {tp: sp.start_offset for tp, sp in view.share.group_partitions(group_id).items()}
    else:
        current = {tp: c.offset for tp, c in view.offsets.fetch(group_id, None).items() if c is not None}
    plan = []
    for tp, offset_now in sorted(current.items()):
        marks = view.replicas.watermarks(tp)
        if marks is None:
            continue
        found = view.replicas.list_offset(tp, wanted)
        offset = found.offset
        if found.error is not ErrorCode.NONE:
            raise ConsoleError(f"{tp}: {found.error.name}")
        if offset < 0:  # no record at or after the timestamp: the log end, as Kafka's tool does
            offset = marks[1]
        plan.append(OffsetReset(tp, offset_now, offset))
    return plan


def reset_offsets(view: BrokerView, group_id: str, plan: list[OffsetReset]) -> None:
    """Commit the plan as an admin would: OffsetCommit with generation (member epoch) -1, or for a share
    group AlterShareGroupOffsets; each only while the group is Empty."""
    kind, _ = _group_state(view, group_id)
    if kind == "share":
        assert view.share is not None
        error = view.share.alter_offsets(group_id, {r.tp: r.target for r in plan})
        view.share_changed()
        if error is not ErrorCode.NONE:
            raise ConsoleError(f"Offsets not reset: {error.name}")
        return
    fenced = None
    if kind == "consumer":
        assert view.consumer_groups is not None
        fenced = view.consumer_groups.validate_offset_commit(group_id, "", -1, 9)
    elif kind == "streams":
        assert view.streams_groups is not None
        fenced = view.streams_groups.validate_offset_commit(group_id, "", -1, 9)
    request = CommitRequest(group_id, "", -1, None, tuple((r.tp, CommittedOffset(r.target)) for r in plan))
    errors = view.offsets.commit(request, view.clock_ms(), fenced)
    failed = {str(tp): error.name for tp, error in errors.items() if error is not ErrorCode.NONE}
    if failed:
        raise ConsoleError(f"Offsets not reset: {failed}")


def delete_group(view: BrokerView, group_id: str) -> None:
    """DeleteGroups of one group (classic, consumer, share or streams), as the Kafka API does it."""
    _group_state(view, group_id)
    error = view.delete_group(group_id)
    if error is ErrorCode.NON_EMPTY_GROUP:
        raise ConsoleError(f"The group '{group_id}' is not empty: stop its consumers first.")
    if error is not ErrorCode.NONE:
        raise ConsoleError(f"Group {group_id} not deleted: {error.name}")
