"""The share groups' dead-letter topic (KIP-1191, beyond Kafka 4.2): a record archived by REJECT or by
the delivery count limit is copied to the group's `errors.deadletterqueue.topic.name`, so no rejected
job vanishes silently. GAP acknowledgements (records the client never saw) are not copied.

Each copy keeps the record's key, value, headers and timestamp, and adds headers naming where it came
from: `__dlq.errors.group.id`, `__dlq.errors.topic`, `__dlq.errors.partition`, `__dlq.errors.offset`,
`__dlq.errors.delivery.count` and `__dlq.errors.reason` (`reject` or `delivery.count.limit`). The copy
goes to partition (source partition mod the dead-letter topic's partitions). This is the one share-group
path that reads records one by one, and it runs only for archived records of groups that name a topic.
A dead-letter topic that does not exist is logged and skipped (it is not created).

KIP-1191's safeguards (ADR 68): the broker may write any topic, so a group's configurer could otherwise
have records written where they may not write. A copy is written only to a topic whose name starts
with the broker's `errors.deadletterqueue.topic.name.prefix` (`dlq.`) and whose own config
`errors.deadletterqueue.group.enable` is true (the topic's administrator opts in); setting a group's
`errors.deadletterqueue.topic.name` needs the prefix and WRITE on that topic (`dead_letter_refusal`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from trafka.domain.catalog import TopicCatalog
from trafka.domain.errors import ErrorCode
from trafka.domain.groups.share import Archived
from trafka.domain.groups.share.configs import DEAD_LETTER_TOPIC, SET
from trafka.domain.replica_manager import ReplicaManager
from trafka.domain.topics import TopicPartition

log = logging.getLogger("trafka.groups")
REASONS = {"reject": b"reject", "limit": b"delivery.count.limit"}
MAX_READ = 8 << 20
OPT_IN = "errors.deadletterqueue.group.enable"


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
) -> Callable[[Iterable[tuple[str, TopicPartition, Archived]]], int]:
    """A function copying archived ranges to their groups' dead-letter topics; it returns the records copied."""

    def write(archived: Iterable[tuple[str, TopicPartition, Archived]]) -> int:
        copied = 0
        for group_id, tp, a in archived:
            if a.reason not in REASONS:
                continue
            target_name = config(group_id, DEAD_LETTER_TOPIC)
            if not target_name:
                continue
            target = catalog.get(target_name)
            if target is None:
                log.warning("share group %s: dead-letter topic %s does not exist", group_id, target_name)
                continue
            if not target_name.startswith(prefix) or target.configs.get(OPT_IN, "false").lower() != "true":
                log.warning(
                    "share group %s: %s is no dead-letter topic (name prefix %s, %s=true)",
                    group_id,
                    target_name,
                    prefix,
                    OPT_IN,
                )
                continue
            batch = _copies(group_id, tp, a, replicas)
            if batch is None:
                continue
            result = replicas.produce(
                TopicPartition(target_name, tp.partition % target.partition_count), batch, clock_ms()
            )
            if result.error is not ErrorCode.NONE:
                log.warning(
                    "share group %s: dead-letter write to %s failed: %s", group_id, target_name, result.error.name
                )
                continue
            copied += result.records_count
        return copied

    return write


def _copies(group_id: str, tp: TopicPartition, a: Archived, replicas: ReplicaManager) -> bytes | None:
    # kafka-python's record batch reader and builder (2.x and 3.x alike), imported on the first copy
    # only: `import kafka` loads its whole client, which a broker's start should not pay for.
    import warnings

    with warnings.catch_warnings():  # kafka-python 3.0.12 warns on import (its schema loader), ADR 92
        warnings.filterwarnings("ignore", r"(read|open)_text is deprecated", DeprecationWarning)
        from kafka.record.default_records import DefaultRecordBatchBuilder
        from kafka.record.memory_records import MemoryRecords

    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 30,
    )
    n = 0
    offset = a.first
    while offset <= a.last:
        fetched = replicas.fetch(tp, offset, MAX_READ, min_one_batch=True)
        if fetched.error is not ErrorCode.NONE or not fetched.records:
            break
        records = MemoryRecords(fetched.records)
        while offset <= a.last and records.has_next():
            batch = records.next_batch()
            offset = batch.base_offset + batch.last_offset_delta + 1
            if batch.is_control_batch:
                continue
            for record in batch:
                if a.first <= record.offset <= a.last:
                    headers = [*record.headers, *_provenance(group_id, tp, record.offset, a)]
                    builder.append(n, timestamp=record.timestamp, key=record.key, value=record.value, headers=headers)
                    n += 1
    return bytes(builder.build()) if n else None


def _provenance(group_id: str, tp: TopicPartition, offset: int, a: Archived) -> list[tuple[str, bytes]]:
    return [
        ("__dlq.errors.group.id", group_id.encode()),
        ("__dlq.errors.topic", tp.topic.encode()),
        ("__dlq.errors.partition", str(tp.partition).encode()),
        ("__dlq.errors.offset", str(offset).encode()),
        ("__dlq.errors.delivery.count", str(a.delivery_count).encode()),
        ("__dlq.errors.reason", REASONS[a.reason]),
    ]
