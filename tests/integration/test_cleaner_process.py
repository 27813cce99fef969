"""The cleaner process (ADR 54) cleans a filesystem log exactly as the in-process Cleaner does, byte
for byte, and a cleaner process killed mid-cleaning leaves a readable log that the next cleaning
finishes."""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings

from tests.batches import read_batches
from tests.contract.test_compaction_contract import CLEANER, CONFIG, TP, FileStore, append, batches, everything
from trafka.app.cleaner.process import CleanerProcess, ProcessGone
from trafka.domain.compaction import cleanable_offsets, log_to_clean


def to_clean(log, now: int, checkpoint: int | None):
    segments = log.segment_infos()
    first, uncleanable, _ = cleanable_offsets(
        segments, log.log_start_offset, log.log_end_offset, checkpoint, log.log_end_offset, now, 0
    )
    return log_to_clean(TP, segments, first, uncleanable)


@pytest.fixture(scope="module")
def process():
    process = CleanerProcess()
    yield process
    process.stop()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=batches, second=batches)
def test_the_process_cleans_as_the_cleaner_does_in_process(tmp_path_factory, process, first, second):
    here = FileStore(str(tmp_path_factory.mktemp("here")))
    there = FileStore(str(tmp_path_factory.mktemp("there")))
    checkpoints: list[int | None] = [None, None]
    for now, writes in ((2_000, first), (4_000, second)):
        for rs, compression in writes:
            for files in (here, there):
                append(files.log, [(now, k, v) for k, v in rs], compression)
        for files in (here, there):
            files.log.roll()
        expected = CLEANER.clean(
            here.log, to_clean(here.log, now, checkpoints[0]), CONFIG, {}, now, here.log.replace_segments
        )
        got = process.clean(
            there.log,
            to_clean(there.log, now, checkpoints[1]),
            CONFIG,
            {},
            now,
            1 << 20,
            0.9,
            float("inf"),
            there.log.replace_segments,
        )
        assert got == expected  # the next first dirty offset and the statistics
        checkpoints = [expected[0], got[0]]
        assert everything(there.log) == everything(here.log)
        assert [s.base_offset for s in there.log.segment_infos()] == [s.base_offset for s in here.log.segment_infos()]
    there.restart(clean=False)  # what the process wrote survives a kill -9 of the broker
    assert everything(there.log) == everything(here.log)


def test_a_cleaner_process_killed_mid_cleaning_leaves_a_readable_log_the_next_cleaning_finishes(tmp_path):
    files = FileStore(str(tmp_path / "logs"))
    for i in range(400):
        append(files.log, [(i, b"k%d" % (i % 4), b"v%d" % i * 10)])
    files.log.roll()
    before = everything(files.log)
    latest = {b"k%d" % k: b"v%d" % i * 10 for i in range(396, 400) for k in [i % 4]}
    process = CleanerProcess()
    swaps: list[list[int]] = []

    killer = threading.Timer(0.1, process.stop)

    def swap(cleaned, old_bases):
        swaps.append(old_bases)
        files.log.replace_segments(cleaned, old_bases)
        if len(swaps) == 1:  # killed between swaps (throttled to 20 kB/s, a group takes ~40 ms)
            killer.start()

    try:
        with pytest.raises(ProcessGone):
            process.clean(files.log, to_clean(files.log, 5_000, None), CONFIG, {}, 5_000, 1 << 20, 0.9, 20_000, swap)
    finally:
        killer.cancel()
    assert swaps  # killed after the first swap, before the cleaning ended (ProcessGone)
    survivors = {r.key: r.value for b in read_batches(everything(files.log)) for r in b}
    assert {k: survivors[k] for k in latest} == latest  # every key's last value is still there
    assert before  # (the log was dirty)
    again = CleanerProcess()  # the next cleaning (a new process) removes the leftover and finishes
    try:
        deadline = time.monotonic() + 30
        end, _ = again.clean(
            files.log,
            to_clean(files.log, 5_000, None),
            CONFIG,
            {},
            5_000,
            1 << 20,
            0.9,
            float("inf"),
            files.log.replace_segments,
        )
        assert time.monotonic() < deadline and end == 400
    finally:
        again.stop()
    after = {r.key: r.value for b in read_batches(everything(files.log)) for r in b}
    assert after == latest
    files.restart(clean=True)
    leftovers = [p.name for p in (tmp_path / "logs" / "c-0").iterdir() if p.suffix in (".cleaned", ".swap", ".deleted")]
    assert leftovers == []
