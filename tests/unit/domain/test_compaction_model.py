"""The cleaner against a model of Kafka's compaction written from the design doc (§4.8) and the
LogCleaner header: for any writes, tombstones, transactions and segment rolls, the cleaned log read
from offset 0 is the uncleaned log reduced by those rules, offsets only grow, and nothing at or past
the first uncleanable offset changes."""

from __future__ import annotations

import uuid

import attrs
import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.batches import make_batch, read_batches
from tests.unit.conftest import Cluster
from trafka.adapters.compression import compress, decompress
from trafka.domain.compaction import Cleaner
from trafka.domain.compaction.manager import CleanerManager, MemoryCheckpoints, clean_now
from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition

TP = TopicPartition("c", 0)
RETENTION = 1000
KEYS = [b"a", b"b", b"c", b"d"]


@attrs.define
class ModelBatch:
    records: list[tuple[int, bytes, bytes | None]]  # offset, key, value
    aborted: bool = False
    horizon: int | None = None


class Model:
    """The log as the design doc describes it, batch by batch, with no control batches."""

    def __init__(self) -> None:
        self.batches: list[ModelBatch] = []
        self.end = 0
        self.active_base = 0
        self.first_dirty = 0

    def append(self, records: list[tuple[bytes, bytes | None]], aborted: bool = False) -> None:
        self.batches.append(ModelBatch([(self.end + i, k, v) for i, (k, v) in enumerate(records)], aborted))
        self.end += len(records)

    def marker(self) -> None:
        self.end += 1

    def roll(self) -> None:
        if self.end > self.active_base:
            self.active_base = self.end

    def clean(self, now: int) -> None:
        start, end = self.first_dirty, self.active_base
        if start >= end:
            return
        last: dict[bytes, int] = {}
        for batch in self.batches:
            if batch.aborted:
                continue
            for offset, key, _ in batch.records:
                if start <= offset < end:
                    last[key] = offset
        for batch in self.batches:
            if not batch.records or batch.records[0][0] >= end:
                continue
            if batch.aborted:
                batch.records = []
                continue
            batch.records = [
                (o, k, v)
                for o, k, v in batch.records
                if last.get(k, -1) <= o and (v is not None or batch.horizon is None or now < batch.horizon)
            ]
            if any(v is None for _, _, v in batch.records) and batch.horizon is None:
                batch.horizon = now + RETENTION
        self.first_dirty = end

    def visible(self) -> list[tuple[int, bytes, bytes | None]]:
        return [r for b in self.batches for r in b.records]


write = st.tuples(
    st.just("write"),
    st.lists(st.tuples(st.sampled_from(KEYS), st.none() | st.binary(max_size=3)), min_size=1, max_size=4),
)
txn = st.tuples(
    st.just("txn"),
    st.lists(st.tuples(st.sampled_from(KEYS), st.binary(max_size=3)), min_size=1, max_size=3),
    st.booleans(),
)
roll = st.tuples(st.just("roll"))
clean = st.tuples(st.just("clean"), st.integers(0, 2 * RETENTION))
ops = st.lists(st.one_of(write, txn, roll, clean), max_size=40)


def stored(cluster: Cluster, tp: TopicPartition = TP) -> list[tuple[int, bytes, bytes | None]]:
    """Every record from offset 0, fetched as a consumer does (a read stops at a segment's end)."""
    out = []
    offset = 0
    while True:
        fetched = cluster.replicas.fetch(tp, offset, 1 << 24, True)
        assert fetched.error == ErrorCode.NONE
        if not fetched.records:
            return out
        for batch in read_batches(fetched.records):
            offset = batch.base_offset + batch.last_offset_delta + 1
            if not batch.is_control_batch:
                out.extend((r.offset, r.key, r.value) for r in batch)


@settings(max_examples=300, deadline=None)
@given(ops, st.sampled_from([0, 1, 4]))
def test_a_cleaned_log_is_the_log_reduced_by_kafkas_rules(operations, compression):
    cluster = Cluster()
    cluster.catalog.create("c", 1, 1, {"cleanup.policy": "compact", "delete.retention.ms": str(RETENTION)})
    cluster.replicas.admission.transaction_check = lambda *_: ErrorCode.NONE
    manager = CleanerManager(
        cluster.catalog,
        cluster.logs,
        cluster.policy,
        MemoryCheckpoints(),
        cluster.replicas.last_stable_offset,
        cluster.replicas.last_records_of_active_producers,
    )
    cleaner = Cleaner(crc32c.crc32c, decompress, compress, 1 << 20)
    model = Model()
    log = cluster.logs.get(TP)
    now = 1_000_000
    sequence = 0
    for op in operations:
        if op[0] == "write":
            assert (
                cluster.replicas.produce(TP, make_batch([(now, k, v) for k, v in op[1]], compression), now).error == 0
            )
            model.append(op[1])
        elif op[0] == "txn":
            batch = make_batch(
                [(now, k, v) for k, v in op[1]],
                compression,
                producer_id=7,
                producer_epoch=0,
                base_sequence=sequence,
                transactional=True,
            )
            sequence += len(op[1])
            assert cluster.replicas.produce(TP, batch, now, "txn").error == 0
            model.append(op[1], aborted=not op[2])
            assert cluster.replicas.write_marker(TP, 7, 0, op[2], now) == ErrorCode.NONE
            model.marker()
        elif op[0] == "roll":
            log.roll()
            model.roll()
        else:
            now += op[1]
            untouched_before = [r for r in stored(cluster) if r[0] >= model.active_base]
            chosen = manager.forced(TP, now)
            assert chosen is not None
            clean_now(manager, cleaner, chosen, now)
            model.clean(now)
            assert [r for r in stored(cluster) if r[0] >= model.active_base] == untouched_before
            assert manager.first_dirty_offset(TP) in (None, model.first_dirty)
        offsets = [r[0] for r in stored(cluster)]
        assert offsets == sorted(set(offsets))
        assert stored(cluster) == model.visible()
        assert cluster.replicas.watermarks(TP) == (0, model.end)


def _setup(configs: dict[str, str] | None = None) -> tuple[Cluster, CleanerManager, Cleaner]:
    cluster = Cluster()
    cluster.catalog.create(
        "c", 1, 1, {"cleanup.policy": "compact", "delete.retention.ms": str(RETENTION), **(configs or {})}
    )
    manager = CleanerManager(
        cluster.catalog,
        cluster.logs,
        cluster.policy,
        MemoryCheckpoints(),
        cluster.replicas.last_stable_offset,
        cluster.replicas.last_records_of_active_producers,
    )
    return cluster, manager, Cleaner(crc32c.crc32c, decompress, compress, 1 << 20)


def test_latest_values_stay_with_gaps_and_a_fetch_from_a_gap_gets_the_next_record():
    cluster, manager, cleaner = _setup()
    for i in range(10):
        cluster.replicas.produce(TP, make_batch([(i, KEYS[i % 2], b"v%d" % i)]), 0)
    cluster.logs.get(TP).roll()
    clean_now(manager, cleaner, manager.forced(TP, 5), 5)
    assert stored(cluster) == [(8, b"a", b"v8"), (9, b"b", b"v9")]
    fetched = cluster.replicas.fetch(TP, 3, 1 << 20, True)
    assert [b.base_offset for b in read_batches(fetched.records)] == [8, 9]
    assert cluster.replicas.watermarks(TP) == (0, 10)


def test_a_tombstone_goes_after_delete_retention_from_its_first_cleaning():
    cluster, manager, cleaner = _setup()
    log = cluster.logs.get(TP)
    cluster.replicas.produce(TP, make_batch([(0, b"a", b"1"), (0, b"b", b"2")]), 0)
    cluster.replicas.produce(TP, make_batch([(0, b"a", None)]), 0)
    log.roll()
    clean_now(manager, cleaner, manager.forced(TP, 100), 100)
    assert stored(cluster) == [(1, b"b", b"2"), (2, b"a", None)]
    (tombstone_batch,) = read_batches(cluster.replicas.fetch(TP, 2, 1 << 20, True).records)
    assert [r.timestamp for r in tombstone_batch] == [0]  # the record keeps its timestamp under the horizon base
    raw = cluster.replicas.fetch(TP, 2, 1 << 20, True).records
    assert raw[22] & 0x40 and int.from_bytes(raw[27:35], "big") == 100 + RETENTION  # KIP-534 horizon
    cluster.replicas.produce(TP, make_batch([(0, b"c", b"3")]), 0)
    log.roll()
    clean_now(manager, cleaner, manager.forced(TP, 100 + RETENTION - 1), 100 + RETENTION - 1)
    assert (2, b"a", None) in stored(cluster)
    cluster.replicas.produce(TP, make_batch([(0, b"d", b"4")]), 0)
    log.roll()
    clean_now(manager, cleaner, manager.forced(TP, 100 + RETENTION), 100 + RETENTION)
    assert stored(cluster) == [(1, b"b", b"2"), (3, b"c", b"3"), (4, b"d", b"4")]


def test_the_dirty_ratio_and_the_lags_decide_what_is_taken():
    cluster, manager, cleaner = _setup({"min.cleanable.dirty.ratio": "0.5", "min.compaction.lag.ms": "1000"})
    log = cluster.logs.get(TP)
    for i in range(4):
        cluster.replicas.produce(TP, make_batch([(0, b"k", b"v%d" % i)]), 0)
    assert manager.grab_filthiest(0) is None  # everything is in the active segment
    log.roll()
    assert manager.grab_filthiest(500) is None  # within min.compaction.lag.ms
    chosen = manager.grab_filthiest(1001)
    assert chosen is not None and chosen[0].cleanable_ratio == 1.0
    clean_now(manager, cleaner, chosen, 1001)
    assert stored(cluster) == [(3, b"k", b"v3")]
    assert manager.grab_filthiest(5000) is None  # nothing dirty now


def test_max_compaction_lag_forces_a_log_below_the_ratio():
    cluster, manager, cleaner = _setup({"min.cleanable.dirty.ratio": "0.99", "max.compaction.lag.ms": "1000"})
    log = cluster.logs.get(TP)
    cluster.replicas.produce(TP, make_batch([(10, b"k", b"v" * 100)]), 0)
    log.roll()
    clean_now(manager, cleaner, manager.forced(TP, 20), 20)
    cluster.replicas.produce(TP, make_batch([(30, b"k", b"w")]), 0)
    log.roll()
    cluster.replicas.produce(TP, make_batch([(40, b"x", b"y")]), 0)
    assert manager.grab_filthiest(500) is None  # a small dirty segment, below the ratio
    chosen = manager.grab_filthiest(1031)
    assert chosen is not None and chosen[0].needs_compaction_now


def test_the_last_batch_of_an_idempotent_producer_is_kept_empty():
    cluster, manager, cleaner = _setup()
    log = cluster.logs.get(TP)
    cluster.replicas.produce(TP, make_batch([(0, b"k", b"1")], producer_id=3, producer_epoch=0, base_sequence=0), 0)
    cluster.replicas.produce(TP, make_batch([(0, b"k", b"2")]), 0)
    log.roll()
    cluster.replicas.produce(TP, make_batch([(0, b"z", b"3")]), 0)
    clean_now(manager, cleaner, manager.forced(TP, 1), 1)
    batches = read_batches(cluster.replicas.fetch(TP, 0, 1 << 20, True).records)
    assert [(b.base_offset, len(list(b))) for b in batches] == [(0, 0), (1, 1)]
    assert batches[0].producer_id == 3
    # the producer's next sequence is still accepted after a rebuild of its state from the log
    cluster.replicas._producers._states.clear()
    nxt = make_batch([(0, b"k", b"4")], producer_id=3, producer_epoch=0, base_sequence=1)
    assert cluster.replicas.produce(TP, nxt, 0).error == ErrorCode.NONE


def test_an_aborted_transaction_goes_at_once_and_its_marker_after_its_horizon():
    cluster, manager, cleaner = _setup()
    cluster.replicas.admission.transaction_check = lambda *_: ErrorCode.NONE
    log = cluster.logs.get(TP)
    txn = make_batch([(0, b"k", b"x")], producer_id=5, producer_epoch=0, base_sequence=0, transactional=True)
    assert cluster.replicas.produce(TP, txn, 0, "txn").error == 0
    cluster.replicas.write_marker(TP, 5, 0, False, 0)
    for i in range(3):
        cluster.replicas.produce(TP, make_batch([(0, b"k", b"%d" % i)]), 0)
    log.roll()
    clean_now(manager, cleaner, manager.forced(TP, 10), 10)
    batches = read_batches(cluster.replicas.fetch(TP, 0, 1 << 20, True).records)
    # the aborted data batch is its producer's last: kept empty; the marker stays while it was seen
    assert [(b.base_offset, b.is_control_batch, len(list(b))) for b in batches] == [
        (0, False, 0),
        (1, True, 1),
        (4, False, 1),
    ]
    assert cluster.logs.get(TP).aborted_transactions(0, 10)


def test_only_batches_that_keep_some_records_but_not_all_are_decoded():
    """A batch of the dirty section whose records all go, or whose records are all their keys' last
    (none a tombstone), is dropped or copied as it is without being decoded (ADR 54); a batch that
    keeps some is rebuilt. Counted by the inflations of compressed batches in the recopy pass."""
    from trafka.adapters.memory import MemoryLogStore
    from trafka.domain.batch import BatchHeader, assign_offsets, validate_batches
    from trafka.domain.compaction import CompactionConfig, cleanable_offsets, log_to_clean
    from trafka.domain.topics import Topic

    log = MemoryLogStore().create(TP, Topic("c", uuid.UUID(int=5), 1, {}))
    written = [
        [(b"a", b"1"), (b"b", b"1")],  # both superseded: dropped, not decoded
        [(b"a", b"2"), (b"c", b"1")],  # a superseded, c kept: rebuilt
        [(b"a", b"3"), (b"b", b"2")],  # both their keys' last: copied as is
        [(b"d", None), (b"e", b"1")],  # d a tombstone kept with its horizon: rebuilt
    ]
    for records in written:
        raw = make_batch([(1, k, v and v * 200) for k, v in records], compression=1)  # gzip pays at 200 B
        validated = validate_batches(raw, crc32c.crc32c, 1 << 20)
        log.append(validated.buffer, assign_offsets(validated, log.log_end_offset, 0, crc32c.crc32c))
    log.roll()
    inflated: list[int] = []

    def counting(codec: int, payload: bytes) -> bytes:
        inflated.append(codec)
        return decompress(codec, payload)

    segments = log.segment_infos()
    first, uncleanable, _ = cleanable_offsets(segments, 0, log.log_end_offset, None, log.log_end_offset, 5, 0)
    cleaner = Cleaner(crc32c.crc32c, counting, compress, 1 << 20)
    before = [bytes(b) for _, b in log.segment_batches(0)]
    cleaner.clean(log, log_to_clean(TP, segments, first, uncleanable), CompactionConfig(), {}, 5, log.replace_segments)
    assert len(inflated) == 4 + 2  # the map pass reads all four; the recopy decodes two
    after = [bytes(b) for _, b in log.segment_batches(0)]
    assert before[2] in after  # the batch kept whole is the very bytes
    assert [BatchHeader.parse(b).base_offset for b in after] == [2, 4, 6]
