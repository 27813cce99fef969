"""A Fetch completed by an append answers from the appended bytes (ADR 127), proven against the read.

Hypothesis builds a log as the read_committed contract does (plain batches, open, committed and
aborted transactions, rolls, compaction, restarts), parks a Fetch at the log end, lets things happen
before the append (a roll, transaction markers, other appends), then appends one Produce's batches
through `produce_many` (one batch, a group of plain batches, transactional and idempotent ones). While
the append is still kept (before `forget_appended`), every fetch around it (the parked position, the
appended base, its neighbours), at partition max bytes below, at and above the batches' size, with and
without the first-batch rule and both isolation levels, must answer exactly what the log's read answers
(`fetch_read.read` with no appended bytes), on both stores, and as `bytes`.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.batches import make_batch
from tests.contract.test_read_committed_fetch import KEYS, NOW, TP, Broker, build, steps
from trafka.domain import fetch_read
from trafka.domain.errors import ErrorCode

between = st.lists(
    st.one_of(
        st.tuples(st.just("roll")),
        st.tuples(st.just("end"), st.integers(3, 4), st.booleans()),
        st.tuples(st.just("plain"), st.integers(1, 3), st.integers(0, 80)),
        st.tuples(st.just("txn"), st.integers(3, 4), st.integers(1, 3), st.integers(0, 80)),
    ),
    max_size=4,
)  # producers 3 and 4: the plan's (1 and 2) have sequences `build` kept to itself
# The append's record sets: plain ones are grouped into one write; transactional (producers 5, 6) and
# idempotent (producer 7) ones are appended one by one.
record_set = st.tuples(st.sampled_from(["plain", "plain", "txn", "idempotent"]), st.integers(1, 4), st.integers(0, 150))


def the_append(broker: Broker, sets) -> list[bytes]:
    sequences: dict[int, int] = {}
    batches, ids = [], []
    for i, (kind, count, size) in enumerate(sets):
        producer_id = {"plain": -1, "txn": 5 + i % 2, "idempotent": 7}[kind]
        sequence = sequences.get(producer_id, 0)
        records = [(NOW + j, KEYS[(size + j) % len(KEYS)], b"w" * size) for j in range(count)]
        batches.append(
            make_batch(
                records,
                producer_id=producer_id,
                producer_epoch=-1 if producer_id < 0 else 0,
                base_sequence=-1 if producer_id < 0 else sequence,
                transactional=kind == "txn",
            )
        )
        sequences[producer_id] = sequence + count
        ids.append("tx" if kind == "txn" else None)
    results = broker.replicas.produce_many([(TP, batch, i, 3) for batch, i in zip(batches, ids)], NOW)
    assert all(r.error is ErrorCode.NONE for r in results), results
    return batches


def after_the_append(broker: Broker, step: str, sets) -> None:
    if step == "roll":
        broker.log.roll()
    elif step == "clean":
        broker.log.roll()
        broker.clean()
    else:  # markers end the append's transactions (producers 5 and 6)
        for producer_id in {5 + i % 2 for i, (kind, _, _) in enumerate(sets) if kind == "txn"}:
            assert broker.replicas.write_marker(TP, producer_id, 0, step == "commit", NOW) is ErrorCode.NONE


def assert_fetches_agree(broker: Broker, parked: int, base: int, appended: list[bytes]) -> int:
    """Every fetch around the append answers what the read answers; how many did not read the log."""
    log, replicas = broker.log, broker.replicas
    reads = count_reads(log)
    unread = 0
    start, end = log.log_start_offset, log.log_end_offset
    offsets = {start - 1, start, parked, base - 1, base, base + 1, end - 1, end, end + 1}
    sizes = {len(appended[-1]), sum(len(b) for b in appended)}
    max_bytes = {1, 61, 100, 300, 1 << 20} | {s + d for s in sizes for d in (-1, 0, 1)}
    for offset in sorted(offsets):
        for limit in sorted(max_bytes):
            for min_one in (True, False):
                for committed in (True, False):
                    stable = replicas.last_stable_offset(TP, log)
                    read = fetch_read.read(log, offset, limit, min_one, committed, stable)
                    before = len(reads)
                    answered = replicas.fetch(TP, offset, limit, min_one, committed)
                    unread += len(reads) == before and offset == base
                    assert answered == read, (offset, limit, min_one, committed)
                    assert type(answered.records) is bytes
    return unread


def count_reads(log) -> list[str]:
    """The log's reads, listed as they are called (the instance's `read` and `read_below` wrapped)."""
    calls: list[str] = []
    for name in ("read", "read_below"):
        method = getattr(log, name)

        def wrapped(*args, _method=method, _name=name):
            calls.append(_name)
            return _method(*args)

        setattr(log, name, wrapped)
    return calls


@pytest.mark.parametrize("kind", ["memory", "filesystem"])
@settings(
    max_examples=int(os.environ.get("TRAFKA_FETCH_EXAMPLES", "80")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    plan=steps,
    before_append=between,
    sets=st.lists(record_set, min_size=1, max_size=4),
    after=st.lists(st.sampled_from(["commit", "abort", "roll", "clean"]), max_size=2),
)
def test_a_fetch_completed_by_an_append_answers_what_the_read_answers(kind, plan, before_append, sets, after):
    broker = Broker(kind)
    try:
        build(broker, plan)
        parked = broker.log.log_end_offset  # the Fetch parks at the log end
        build(broker, before_append)
        base = broker.log.log_end_offset
        appended = the_append(broker, sets)
        for step in after:  # what may change the log before a Fetch is tried (outside a Produce's notify)
            after_the_append(broker, step, sets)
        event("parked at the appended base" if parked == base else "parked below the appended base")
        unread = assert_fetches_agree(broker, parked, base, appended)
        event("answered from the append" if unread else "every fetch read the log")
    finally:
        broker.close()


@pytest.mark.parametrize("kind", ["memory", "filesystem"])
def test_each_layout_at_once(kind):
    """Fixed cases: an open transaction below the append, an aborted and a committed one before it, a
    roll between the park and the append, a group of plain batches larger than a partition's max bytes."""
    broker = Broker(kind)
    try:
        build(broker, [("plain", 3, 50), ("txn", 1, 2, 40), ("end", 1, False), ("txn", 2, 1, 30), ("end", 2, True)])
        parked = broker.log.log_end_offset
        build(broker, [("roll",)])
        appended = the_append(broker, [("plain", 2, 120), ("plain", 1, 10), ("plain", 3, 60)])
        assert assert_fetches_agree(broker, parked, parked, appended) > 0
        build(broker, [("txn", 3, 2, 20)])  # open below what follows
        base = broker.log.log_end_offset
        appended = the_append(broker, [("txn", 1, 5)])
        assert assert_fetches_agree(broker, base, base, appended) > 0  # read_uncommitted's
    finally:
        broker.close()
