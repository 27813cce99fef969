"""Transactions V2 (KIP-890 part 2) through the domain on the in-memory adapter: partitions and groups
joined by Produce v12+ and TxnOffsetCommit v5+, the epoch bumped by every EndTxn v5, retries, fencing,
an exhausted epoch, strict marker epochs (KIP-1228), and TV1 and TV2 producers mixed on one broker."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

from tests.batches import read_batches
from tests.unit.domain.transactions.test_transactions import NOW, TP, Txns
from trafka.domain.errors import ErrorCode, KafkaError
from trafka.domain.groups import CommittedOffset
from trafka.domain.transactions import TxnState
from trafka.domain.transactions.coordinator import MAX_EPOCH, TV_2


class V2(Txns):
    """Txns whose batches name their produce version; sequences restart at 0 with each new epoch."""

    def __init__(self) -> None:
        super().__init__()
        self.next_sequence: dict[tuple[int, int], int] = {}

    def produce(self, tid: str, pid: int, epoch: int, values: list[bytes], version: int = 12) -> ErrorCode:
        sequence = self.next_sequence.get((pid, epoch), 0)
        builder = DefaultRecordBatchBuilder(
            magic=2,
            compression_type=0,
            is_transactional=True,
            producer_id=pid,
            producer_epoch=epoch,
            base_sequence=sequence,
            batch_size=1 << 20,
        )
        for i, value in enumerate(values):
            builder.append(i, timestamp=NOW, key=None, value=value, headers=[])
        result = self.cluster.replicas.produce(TP, bytes(builder.build()), NOW, tid, version)
        if result.error is ErrorCode.NONE:
            self.next_sequence[(pid, epoch)] = sequence + len(values)
        return result.error

    def end(self, tid: str, pid: int, epoch: int, commit: bool) -> tuple[ErrorCode, int, int]:
        error = self.service.end(tid, pid, epoch, commit, NOW, v2=True)
        txn = self.service.coordinator.get(tid)
        assert txn is not None
        return (error, txn.producer_id, txn.producer_epoch) if error is ErrorCode.NONE else (error, -1, -1)

    def marker_epochs(self) -> list[tuple[int, int]]:
        fetched = self.cluster.replicas.fetch(TP, 0, 1 << 30, True)
        return [(b.producer_id, b.producer_epoch) for b in read_batches(fetched.records) if b.is_control_batch]


def test_produce_v12_joins_the_transaction_and_end_txn_v5_bumps_the_epoch_into_the_markers():
    t = V2()
    txn = t.service.init_producer_id("tid", 60_000, NOW)
    pid, epoch = txn.producer_id, txn.producer_epoch
    assert t.produce("tid", pid, epoch, [b"c0"]) is ErrorCode.NONE  # no AddPartitionsToTxn
    assert txn.state is TxnState.ONGOING and TP in txn.partitions and txn.client_version == TV_2
    assert t.end("tid", pid, epoch, True) == (ErrorCode.NONE, pid, epoch + 1)
    assert t.marker_epochs() == [(pid, epoch + 1)]  # the marker carries the bumped epoch
    # the next transaction runs at the new epoch, its sequences from 0; the old epoch is fenced
    assert t.produce("tid", pid, epoch, [b"zombie"]) is ErrorCode.INVALID_PRODUCER_EPOCH
    assert t.produce("tid", pid, epoch + 1, [b"a0"]) is ErrorCode.NONE
    assert t.end("tid", pid, epoch + 1, False) == (ErrorCode.NONE, pid, epoch + 2)
    assert t.read(read_committed=True) == [b"c0"]
    assert t.read(read_committed=False) == [b"c0", b"a0"]


def test_a_retried_end_txn_is_recognised_by_its_epoch_one_behind():
    t = V2()
    txn = t.service.init_producer_id("tid", 60_000, NOW)
    pid, epoch = txn.producer_id, txn.producer_epoch
    t.produce("tid", pid, epoch, [b"x"])
    assert t.end("tid", pid, epoch, True) == (ErrorCode.NONE, pid, epoch + 1)
    assert t.end("tid", pid, epoch, True) == (ErrorCode.NONE, pid, epoch + 1)  # the same answer again
    assert t.end("tid", pid, epoch, False)[0] is ErrorCode.INVALID_TXN_STATE  # the other direction
    assert t.marker_epochs() == [(pid, epoch + 1)]  # no second marker
    assert t.end("tid", pid, epoch - 1, True)[0] is ErrorCode.PRODUCER_FENCED  # older still: fenced
    assert t.end("tid", pid + 1000, epoch + 1, True)[0] is ErrorCode.INVALID_PRODUCER_ID_MAPPING


def test_an_empty_abort_bumps_the_epoch_and_an_empty_commit_is_refused():
    t = V2()
    txn = t.service.init_producer_id("tid", 60_000, NOW)
    pid, epoch = txn.producer_id, txn.producer_epoch
    assert t.end("tid", pid, epoch, False) == (ErrorCode.NONE, pid, epoch + 1)
    assert txn.state is TxnState.COMPLETE_ABORT
    assert t.marker_epochs() == []  # no partition, no marker
    assert t.end("tid", pid, epoch + 1, True)[0] is ErrorCode.INVALID_TXN_STATE
    assert t.end("tid", pid, epoch + 1, False) == (ErrorCode.NONE, pid, epoch + 2)


def test_an_exhausted_epoch_moves_the_producer_to_a_new_id_and_the_retry_still_answers():
    t = V2()
    txn = t.service.init_producer_id("tid", 60_000, NOW)
    pid = txn.producer_id
    txn.producer_epoch = MAX_EPOCH - 1  # as after 32766 transactions
    t.produce("tid", pid, MAX_EPOCH - 1, [b"last"])
    error, new_pid, new_epoch = t.end("tid", pid, MAX_EPOCH - 1, True)
    assert error is ErrorCode.NONE and new_pid != pid and new_epoch == 0
    assert t.marker_epochs() == [(pid, MAX_EPOCH)]  # the markers take the last epoch of the old id
    assert txn.previous_producer_id == pid
    assert t.end("tid", pid, MAX_EPOCH - 1, True) == (ErrorCode.NONE, new_pid, 0)  # the retry, recognised
    assert t.produce("tid", new_pid, 0, [b"next"]) is ErrorCode.NONE
    assert t.end("tid", new_pid, 0, True) == (ErrorCode.NONE, new_pid, 1)
    assert t.read(read_committed=True) == [b"last", b"next"]


def test_txn_offset_commit_v5_joins_the_group_and_commits_with_the_transaction():
    t = V2()
    txn = t.service.init_producer_id("tid", 60_000, NOW)
    pid, epoch = txn.producer_id, txn.producer_epoch
    offsets = {TP: CommittedOffset(42, -1, "")}
    before = t.service.txn_offset_commit("tid", "g", pid, epoch, offsets, NOW)
    assert before == {TP: ErrorCode.INVALID_TXN_STATE}  # v4: AddOffsetsToTxn first
    assert t.service.txn_offset_commit("tid", "g", pid, epoch, offsets, NOW, add=True) == {TP: ErrorCode.NONE}
    assert txn.state is TxnState.ONGOING and txn.groups == {"g"}
    assert t.offsets.fetch("g", [TP]) == {TP: None}
    assert t.end("tid", pid, epoch, True)[0] is ErrorCode.NONE
    assert t.offsets.fetch("g", [TP])[TP].offset == 42
    stale = t.service.txn_offset_commit("tid", "g", pid, epoch, offsets, NOW, add=True)
    assert stale == {TP: ErrorCode.INVALID_PRODUCER_EPOCH}


def test_an_unadded_partition_is_transaction_abortable_from_produce_v11_and_invalid_before():
    t = V2()
    txn = t.service.init_producer_id("tid", 60_000, NOW)
    pid, epoch = txn.producer_id, txn.producer_epoch
    assert t.produce("tid", pid, epoch, [b"x"], version=11) is ErrorCode.TRANSACTION_ABORTABLE
    assert t.produce("tid", pid, epoch, [b"x"], version=10) is ErrorCode.INVALID_TXN_STATE
    assert t.produce("tid", pid, epoch + 1, [b"x"], version=12) is ErrorCode.INVALID_PRODUCER_EPOCH
    assert t.produce("other", pid, epoch, [b"x"], version=12) is ErrorCode.INVALID_PRODUCER_ID_MAPPING


def test_a_v1_transaction_keeps_its_epoch_and_its_old_rules():
    t = V2()
    txn = t.service.init_producer_id("tid", 60_000, NOW)
    pid, epoch = txn.producer_id, txn.producer_epoch
    assert t.service.add_partitions("tid", pid, epoch, [TP], NOW) == {TP: ErrorCode.NONE}
    assert t.produce("tid", pid, epoch, [b"v1"], version=9) is ErrorCode.NONE
    assert t.service.end("tid", pid, epoch, True, NOW) is ErrorCode.NONE
    assert (txn.producer_id, txn.producer_epoch) == (pid, epoch)
    assert t.marker_epochs() == [(pid, epoch)]
    assert t.service.end("tid", pid, epoch, True, NOW) is ErrorCode.NONE  # the v1 retry
    assert txn.client_version == 0


def test_markers_from_outside_are_checked_against_the_partitions_epoch():
    t = V2()
    txn = t.service.init_producer_id("tid", 60_000, NOW)
    pid, epoch = txn.producer_id, txn.producer_epoch
    t.produce("tid", pid, epoch, [b"x"])
    replicas = t.cluster.replicas
    assert replicas.write_marker(TP, pid, epoch, False, NOW, transaction_version=2) is ErrorCode.INVALID_PRODUCER_EPOCH
    assert replicas.write_marker(TP, pid, epoch - 1, False, NOW, transaction_version=0) is (
        ErrorCode.INVALID_PRODUCER_EPOCH
    )
    assert replicas.write_marker(TP, pid, epoch + 1, False, NOW, transaction_version=2) is ErrorCode.NONE
    assert replicas.write_marker(TP, pid, epoch + 1, False, NOW, transaction_version=1) is ErrorCode.NONE
    assert t.read(read_committed=True) == []


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]),
            st.sampled_from(["send", "commit", "abort", "retry", "zombie", "init", "offsets"]),
        ),
        max_size=40,
    )
)
def test_tv1_and_tv2_producers_mixed_keep_read_committed_exact_and_fencing_monotonic(steps):
    """Producer "a" runs transactions V1 (AddPartitionsToTxn, Produce v9, EndTxn v4), "b" and "c" V2.
    Whatever they do, read_committed shows exactly the committed records, in order, nothing of an
    aborted transaction; every epoch a producer is answered only grows; an old epoch never writes."""
    t = V2()
    v2 = {"a": False, "b": True, "c": True}
    current: dict[str, tuple[int, int]] = {}
    last_answer: dict[str, tuple[int, int]] = {}
    pending: dict[str, list[bytes]] = {p: [] for p in v2}
    committed: list[bytes] = []
    previous: dict[str, tuple[int, int]] = {}
    for p in v2:
        txn = t.service.init_producer_id(p, 60_000, NOW)
        current[p] = last_answer[p] = (txn.producer_id, txn.producer_epoch)
    for n, (p, action) in enumerate(steps):
        pid, epoch = current[p]
        if action == "send":
            value = f"{p}{n}".encode()
            if not v2[p]:
                t.service.add_partitions(p, pid, epoch, [TP], NOW)
            assert t.produce(p, pid, epoch, [value], version=12 if v2[p] else 9) is ErrorCode.NONE
            pending[p].append(value)
        elif action in ("commit", "abort"):
            commit = action == "commit"
            if v2[p]:
                error, new_pid, new_epoch = t.end(p, pid, epoch, commit)
                assert error is ErrorCode.NONE or (commit and not pending[p])
                if error is ErrorCode.NONE:
                    previous[p] = (pid, epoch)
                    current[p] = (new_pid, new_epoch)
            else:
                t.service.end(p, pid, epoch, commit, NOW)
            if commit:
                committed += pending[p]
            pending[p] = []
        elif action == "retry" and p in previous and v2[p]:
            txn = t.service.coordinator.get(p)
            assert txn is not None
            before = (txn.producer_id, txn.producer_epoch)
            completed = txn.state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)
            error, *_ = t.end(p, *previous[p], txn.state is TxnState.COMPLETE_COMMIT)
            assert error is (ErrorCode.NONE if completed else ErrorCode.PRODUCER_FENCED)
            assert (txn.producer_id, txn.producer_epoch) == before  # a retry changes nothing
        elif action == "zombie" and p in previous:
            old_pid, old_epoch = previous[p]
            assert t.produce(p, old_pid, old_epoch, [b"zombie"], version=12) is not ErrorCode.NONE
        elif action == "init":
            txn = t.service.init_producer_id(p, 60_000, NOW)  # aborts the open transaction
            pending[p] = []
            previous.pop(p, None)
            current[p] = (txn.producer_id, txn.producer_epoch)
        elif action == "offsets" and v2[p]:
            result = t.service.txn_offset_commit(p, "g", pid, epoch, {TP: CommittedOffset(n, -1, "")}, NOW, add=True)
            assert result == {TP: ErrorCode.NONE}
        answer = current[p]
        assert answer[0] != last_answer[p][0] or answer[1] >= last_answer[p][1]
        last_answer[p] = answer
    for p in v2:  # end what is open: everything pending is aborted
        pid, epoch = current[p]
        if v2[p]:
            t.end(p, pid, epoch, False)
        else:
            t.service.end(p, pid, epoch, False, NOW)
    visible, everything = t.read(read_committed=True), t.read(read_committed=False)
    assert sorted(visible) == sorted(committed)  # in offset order: transactions interleave
    assert visible == [value for value in everything if value in set(committed)]
    assert b"zombie" not in everything


def test_init_producer_id_aborts_a_transaction_that_only_joined_a_group():
    """A transaction with offsets and no partition is aborted by InitProducerId like any other (it used
    to meet an illegal transition, having no markers to write)."""
    t = V2()
    txn = t.service.init_producer_id("tid", 60_000, NOW)
    pid, epoch = txn.producer_id, txn.producer_epoch
    assert t.service.add_offsets("tid", pid, epoch, "g", NOW) is ErrorCode.NONE
    again = t.service.init_producer_id("tid", 60_000, NOW)
    assert (again.producer_id, again.producer_epoch, again.state) == (pid, epoch + 2, TxnState.COMPLETE_ABORT)


def test_init_producer_id_accepts_the_epoch_before_an_end_txn_bump_the_producer_never_saw():
    """KIP-360 under TV2: EndTxn v5 completed and bumped the epoch, the answer was lost (the broker went
    down); the producer re-initializes with the epoch it knows, one behind, and is given a newer one."""
    t = V2()
    txn = t.service.init_producer_id("tid", 60_000, NOW)
    pid, epoch = txn.producer_id, txn.producer_epoch
    t.produce("tid", pid, epoch, [b"x"])
    assert t.end("tid", pid, epoch, True)[0] is ErrorCode.NONE
    again = t.service.init_producer_id("tid", 60_000, NOW, pid, epoch)
    assert (again.producer_id, again.producer_epoch) == (pid, epoch + 2)
    assert t.read(read_committed=True) == [b"x"]  # the commit stands
    with pytest.raises(KafkaError):
        t.service.init_producer_id("tid", 60_000, NOW, pid, epoch)  # two behind now: fenced
