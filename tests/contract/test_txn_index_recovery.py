"""The `.txnindex` rebuilt by recovery from the control records, as Kafka's LogSegment.recover does:
the broker writes the index as markers are appended (ReplicaManager.write_marker, the real writer
here), and a recovered segment's index comes back byte for byte, with transactions that span
segments and interleave with other producers. Which segments are rebuilt follows Kafka's LogLoader:
all after an unclean shutdown, damaged ones after a clean one."""

from __future__ import annotations

import os
import struct

import pytest

from tests.batches import make_batch
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition

TP = TopicPartition("t", 0)
NOW = 1_700_000_000_000


class Broker:
    """A broker on a data dir, driven through its domain services (no sockets)."""

    def __init__(self, path) -> None:
        self.path = path
        self.sequences: dict[int, int] = {}
        self.open()

    def open(self) -> None:
        settings = load_settings(overrides={"storage": {"data_dir": str(self.path)}})
        self.adapters = default_adapters(settings)
        self.ctx = bootstrap(settings, self.adapters)
        # the transaction coordinator is not under test: batches go straight to the partition
        self.ctx.services.replicas.admission.transaction_check = lambda *_: ErrorCode.NONE

    def stop(self, clean: bool) -> None:
        if clean:
            self.ctx.services.replicas.snapshot_producers()
        self.adapters.stop()
        if not clean:  # as after kill -9: no clean-shutdown marker, no final producer snapshot
            os.remove(self.path / ".kafka_cleanshutdown")

    def send(self, producer_id: int, count: int = 3, transactional: bool = True) -> None:
        sequence = self.sequences.get(producer_id, 0)
        batch = make_batch(
            [(NOW, None, b"x" * 200)] * count,
            producer_id=producer_id,
            producer_epoch=0,
            base_sequence=sequence,
            transactional=transactional,
        )
        self.sequences[producer_id] = sequence + count
        assert self.ctx.services.replicas.produce(TP, batch, NOW, "tx").error == 0

    def end(self, producer_id: int, commit: bool) -> None:
        assert self.ctx.services.replicas.write_marker(TP, producer_id, 0, commit, NOW) == 0

    def aborted(self) -> list:
        """Every aborted transaction the partition's index lists, as read_committed fetches see them."""
        return self.adapters.logs.get(TP).aborted_transactions(0, 1 << 62)

    def txn_indexes(self) -> dict[str, bytes]:
        directory = self.path / "t-0"
        return {
            name: (directory / name).read_bytes()
            for name in sorted(os.listdir(directory))
            if name.endswith(".txnindex")
        }


@pytest.fixture
def broker(tmp_path):
    broker = Broker(tmp_path / "logs")
    broker.ctx.services.catalog.create("t", 1, 1, {"internal.segment.bytes": "2000"})
    # two transactional producers interleaved, transactions spanning segments, one plain producer
    broker.send(1)
    broker.send(2)
    broker.send(1)
    broker.send(3, transactional=False)
    broker.end(2, commit=False)  # aborted while producer 1's transaction is open: last stable offset 0
    broker.send(2)
    broker.send(1)
    broker.end(1, commit=False)
    broker.end(2, commit=True)
    broker.send(1)
    broker.send(2)
    broker.end(1, commit=False)
    broker.end(2, commit=False)
    broker.end(1, commit=False)  # a marker closing no transaction: no entry, as in Kafka
    broker.send(3, transactional=False)
    yield broker
    broker.adapters.stop()


def test_the_fixture_spans_segments_and_aborts_where_kafka_would_index(broker):
    indexes = broker.txn_indexes()
    assert len(indexes) >= 2 and len(broker.ctx.services.replicas.segment_infos(TP)) >= 4
    entries = [struct.unpack(">hqqqq", data[i : i + 34]) for data in indexes.values() for i in range(0, len(data), 34)]
    assert [e[1] for e in entries] == [2, 1, 1, 2]
    assert entries[0][4] == 0  # producer 1's open transaction holds the last stable offset back


def test_an_unclean_shutdown_rebuilds_every_txnindex_byte_for_byte(broker):
    written, aborted = broker.txn_indexes(), broker.aborted()
    broker.stop(clean=False)
    for name in written:
        os.remove(broker.path / "t-0" / name)
    broker.open()
    assert broker.txn_indexes() == written
    assert broker.aborted() == aborted


def test_a_truncated_txnindex_is_rebuilt_after_an_unclean_shutdown(broker):
    written = broker.txn_indexes()
    broker.stop(clean=False)
    for name, data in written.items():
        (broker.path / "t-0" / name).write_bytes(data[:40])  # one entry and a torn one
    broker.open()
    assert broker.txn_indexes() == written


def test_an_entry_ending_before_its_segment_fails_kafkas_sanity_check_and_the_segment_is_recovered(broker):
    written = broker.txn_indexes()
    broker.stop(clean=True)
    name = list(written)[-1]
    (broker.path / "t-0" / name).write_bytes(struct.pack(">hqqqq", 0, 9, 0, 0, 0))
    broker.open()
    assert broker.txn_indexes() == written


def test_a_lost_offset_index_makes_the_segment_recovered_with_its_txnindex(broker):
    written = broker.txn_indexes()
    broker.stop(clean=True)
    name = list(written)[0]
    os.remove(broker.path / "t-0" / name)
    os.remove(broker.path / "t-0" / name.replace(".txnindex", ".index"))
    broker.open()
    assert broker.txn_indexes() == written


def test_after_a_clean_shutdown_a_missing_txnindex_beside_intact_indexes_is_an_empty_one_as_in_kafka(broker):
    """Kafka creates the file only for segments with aborted transactions, so it cannot tell a lost
    one from none; neither can trafka. (After an unclean shutdown it is rebuilt, above.)"""
    written = broker.txn_indexes()
    broker.stop(clean=True)
    name = list(written)[0]
    os.remove(broker.path / "t-0" / name)
    broker.open()
    assert name not in broker.txn_indexes()
    entries = sum(len(d) // 34 for d in written.values())
    assert len(broker.aborted()) == entries - len(written[name]) // 34


def test_a_clean_restart_leaves_the_indexes_alone(broker):
    written = broker.txn_indexes()
    mtimes = {n: os.stat(broker.path / "t-0" / n).st_mtime_ns for n in written}
    broker.stop(clean=True)
    broker.open()
    assert broker.txn_indexes() == written
    assert {n: os.stat(broker.path / "t-0" / n).st_mtime_ns for n in written} == mtimes
