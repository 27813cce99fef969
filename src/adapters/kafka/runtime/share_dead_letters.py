"""The share groups' dead-letter queue (KIP-1191) as Kafka 4.4 writes it (its ShareGroupDLQStateManager,
read from the 4.4.0 jars, ADR 86): a record archived by REJECT or by the delivery count limit is copied
to the group's `errors.deadletterqueue.topic.name`, once `share.version` 2 is finalized (Kafka's
SharePartitionManager asks `ShareVersion.supportsShareGroupDLQ` before each copy). GAP acknowledgements
(records the client never saw) are not copied.

Each copy is a new record stamped with the broker's time, carrying only the headers naming where it
came from: `__dlq.errors.topic`, `__dlq.errors.partition`, `__dlq.errors.offset`, `__dlq.errors.group`,
`__dlq.errors.delivery.count` and `__dlq.errors.message` ("Offset rejected by client." or "Offset
delivery count exceeded the threshold."); with the group's `errors.deadletterqueue.copy.record.enable`
it also carries the original key and value (never the original headers). The copy goes to partition
(source partition mod the dead-letter topic's partitions). This is the one share-group path that reads
records one by one, and it runs only for archived records of groups that name a topic.

Before writing, the topic is checked as Kafka's `validateDlqTopic` does, and a copy it refuses is logged
and dropped: a name starting with `__`; an existing topic whose `errors.deadletterqueue.group.enable`
is not true (its administrator did not opt in); a missing topic while the broker's
`errors.deadletterqueue.auto.create.topics.enable` is false (with it, the topic is created with the
broker's partition count, `errors.deadletterqueue.group.enable=true` and CreateTime timestamps, as
Kafka's CreateTopics there); a name without the broker's `errors.deadletterqueue.topic.name.prefix`
(`dlq.`). Setting a group's `errors.deadletterqueue.topic.name` also needs the prefix and WRITE on that
topic (`dead_letter_refusal`, ADR 68: stricter than Kafka, which checks the prefix only when writing).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from trafka.domain.catalog import TopicCatalog
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.groups.share.configs import DEAD_LETTER_COPY_RECORD, DEAD_LETTER_TOPIC, SET
from trafka.domain.replica_manager import ReplicaManager
from trafka.domain.topics import Topic, TopicPartition
from trafka.schema_codec.records import NewRecord, build_batch, decode_records, iter_batches

if TYPE_CHECKING:
    from trafka.domain.groups.share import Archived

log = logging.getLogger("trafka.groups")
MESSAGES = {"reject": b"Offset rejected by client.", "limit": b"Offset delivery count exceeded the threshold."}
MAX_READ = 8 << 20
OPT_IN = "errors.deadletterqueue.group.enable"
CREATED_WITH = {OPT_IN: "true", "message.timestamp.type": "CreateTime"}  # Kafka's DLQ topic auto-creation


def dead_letter_refusal(
    prefix: str, may_write: Callable[[str], bool], changes: Iterable[tuple[str, int, str | None]]
) -> tuple[ErrorCode, str] | None:
    """Why a group's configs may not name this dead-letter topic ((name, operation, value) each), or None."""
    for name, operation, value in changes:
        if name != DEAD_LETTER_TOPIC or operation != SET or not value:
            continue
        if not value.startswith(prefix):
            return ErrorCode.INVALID_CONFIG, f"The dead-letter topic name {value} must start with the prefix {prefix}"
        if not may_write(value):
            return ErrorCode.TOPIC_AUTHORIZATION_FAILED, f"Not authorized to write the dead-letter topic {value}"
    return None


def dead_letter_writer(
    catalog: TopicCatalog,
    replicas: ReplicaManager,
    config: Callable[[str, str], str],
    clock_ms: Callable[[], int],
    prefix: str,
    auto_create: bool = False,
    appended: Callable[[list[TopicPartition]], None] = lambda partitions: None,
) -> Callable[[Iterable[tuple[str, TopicPartition, Archived]]], int]:
    """A function copying archived ranges to their groups' dead-letter topics; it returns the records copied.
    `auto_create`: the broker's errors.deadletterqueue.auto.create.topics.enable. `appended` is told the
    dead-letter partitions written, once per call, as a Produce notifies: a Fetch parked on one wakes."""

    def target_of(group_id: str, name: str) -> Topic | None:
        """The dead-letter topic, created if missing and allowed; None (logged) where Kafka refuses it."""
        target = catalog.get(name)
        refusal = None
        if name.startswith("__"):
            refusal = "cannot start with __"
        elif target is not None and target.configs.get(OPT_IN, "false").lower() != "true":
            refusal = f"DLQ is not enabled on it ({OPT_IN})"
        elif target is None and not auto_create:
            refusal = "it does not exist and auto create is disabled"
        elif prefix and not name.startswith(prefix):
            refusal = f"it does not comply with the DLQ topic prefix {prefix}"
        if refusal is not None:
            log.warning("share group %s: dead-letter topic %s refused: %s", group_id, name, refusal)
            return None
        if target is None:
            try:
                target = catalog.create(name, configs=CREATED_WITH)
            except KafkaError as error:
                log.warning("share group %s: dead-letter topic %s not created: %s", group_id, name, error.message)
                return None
        return target

    def write(archived: Iterable[tuple[str, TopicPartition, Archived]]) -> int:
        copied = 0
        written: dict[TopicPartition, None] = {}
        for group_id, tp, a in archived:
            if a.reason not in MESSAGES:
                continue
            target_name = config(group_id, DEAD_LETTER_TOPIC)
            if not target_name:
                continue
            target = target_of(group_id, target_name)
            if target is None:
                continue
            copy_record = config(group_id, DEAD_LETTER_COPY_RECORD).strip().lower() == "true"
            batch = _copies(group_id, tp, a, replicas, copy_record, clock_ms())
            if batch is None:
                continue
            target_tp = TopicPartition(target_name, tp.partition % target.partition_count)
            result = replicas.produce(target_tp, batch, clock_ms())
            if result.error is not ErrorCode.NONE:
                log.warning(
                    "share group %s: dead-letter write to %s failed: %s", group_id, target_name, result.error.name
                )
                continue
            copied += result.records_count
            written[target_tp] = None
        if written:
            appended(list(written))
        return copied

    return write


def _copies(
    group_id: str, tp: TopicPartition, a: Archived, replicas: ReplicaManager, copy_record: bool, now_ms: int
) -> bytes | None:
    copies: list[NewRecord] = []
    offset = a.first
    while offset <= a.last:
        fetched = replicas.fetch(tp, offset, MAX_READ, min_one_batch=True)
        if fetched.error is not ErrorCode.NONE or not fetched.records:
            break
        before = offset
        for header, batch in iter_batches(fetched.records):
            if offset > a.last:
                break
            offset = header.next_offset
            if header.is_control:
                continue
            for record in decode_records(batch, replicas.decompress):
                if a.first <= record.offset <= a.last:
                    key, value = (record.key, record.value) if copy_record else (None, None)
                    copies.append(NewRecord(now_ms, key, value, _context(group_id, tp, record.offset, a)))
        if offset == before:  # no whole batch came back
            break
    return build_batch(copies, replicas.checksum) if copies else None


def _context(group_id: str, tp: TopicPartition, offset: int, a: Archived) -> list[tuple[str, bytes]]:
    """Kafka 4.4's context headers, in its order."""
    return [
        ("__dlq.errors.topic", tp.topic.encode()),
        ("__dlq.errors.partition", str(tp.partition).encode()),
        ("__dlq.errors.offset", str(offset).encode()),
        ("__dlq.errors.group", group_id.encode()),
        ("__dlq.errors.delivery.count", str(a.delivery_count).encode()),
        ("__dlq.errors.message", MESSAGES[a.reason]),
    ]
