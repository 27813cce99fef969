"""The aborted transaction index of an internal log (`__consumer_offsets`): the coordinator's abort
marker indexes the transaction from its first batch, as Kafka's log indexes every abort, also for a
transaction begun before the broker restarted; a commit indexes nothing. Each append is told to the
wiring (`appended`), which wakes the Fetch requests parked on the partition (ADR 115)."""

from __future__ import annotations

import uuid

import crc32c

from trafka.adapters.filesystem import FileLogStore, InternalLog, LogDir
from trafka.domain.control import AbortedTxn
from trafka.domain.topics import TopicPartition

OFFSETS = TopicPartition("__consumer_offsets", 0)


def _log(tmp_path) -> tuple[InternalLog, LogDir]:
    logdir = LogDir.open(str(tmp_path / "logs"), 1, uuid.UUID(int=1), uuid.UUID(int=2))
    logs = FileLogStore(logdir, crc32c.crc32c, lambda: 0)
    return InternalLog(logs, OFFSETS, uuid.UUID(int=3), crc32c.crc32c, lambda: 0), logdir


def test_an_abort_is_indexed_from_the_transactions_first_batch_and_a_commit_is_not(tmp_path):
    internal, _ = _log(tmp_path)
    appended: list[TopicPartition] = []
    internal.appended = appended.append
    internal.append([(b"plain", b"0")])  # offset 0
    internal.append([(b"k", b"1")], producer_id=7, producer_epoch=0)  # 1: producer 7 begins
    internal.append([(b"k", b"2")], producer_id=8, producer_epoch=0)  # 2: producer 8 begins
    internal.append([(b"k", b"3")], producer_id=7, producer_epoch=0)  # 3
    internal.append_marker(7, 0, commit=False)  # 4: 8's transaction is still open (the stable offset)
    internal.append_marker(8, 0, commit=True)  # 5
    assert internal.log.aborted_transactions(0, 10) == [AbortedTxn(7, 1, 4, 2)]
    assert appended == [OFFSETS] * 6


def test_a_transaction_begun_before_a_restart_is_indexed_when_it_aborts_after_it(tmp_path):
    before, logdir = _log(tmp_path)
    before.append([(b"k", b"1")], producer_id=7, producer_epoch=0)
    before.log.close()
    logdir.unlock()
    after, _ = _log(tmp_path)
    after.append_marker(7, 0, commit=False)
    assert after.log.aborted_transactions(0, 10) == [AbortedTxn(7, 0, 1, 2)]
