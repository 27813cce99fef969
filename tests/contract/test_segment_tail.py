"""The active segment's tail in memory (ADR 57): every lookup it answers is the one the header scan
from the offset index gives, through appends of one or many batches, index entries, a limit-cut tail,
a failed append rolled back, a reopen from disk (clean and recovering) and sealing."""

from __future__ import annotations

import errno
import os
import tempfile

import crc32c
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.batches import make_batch
from trafka.adapters.filesystem import fileio, segment, segment_reader
from trafka.adapters.filesystem.segment import Segment
from trafka.domain.batch import assign_offsets, validate_batches

BASE = 100


def _batches(counts: list[int], size: int, base: int) -> tuple[bytes, list]:
    """Batches of `counts` records each, offsets assigned from `base`: (bytes, [(pos, header)])."""
    raw = b"".join(make_batch([(1_000 + n, None, b"v" * size)] * n) for n in counts)
    validated = validate_batches(raw, crc32c.crc32c, len(raw) + 1)
    headers = assign_offsets(validated, base, 0, crc32c.crc32c)
    positions, pos = [], 0
    for header in headers:
        positions.append((pos, header))
        pos += header.size
    return bytes(validated.buffer), positions


def _scanned(seg: Segment, offset: int) -> int | None:
    """The reference: walk every batch header from the segment's start."""
    for pos, header in seg.headers(0):
        if header.last_offset >= offset:
            return pos
    return None


def _agrees(seg: Segment) -> None:
    for offset in range(BASE - 1, seg.next_offset + 3):
        assert seg.position_of(offset) == _scanned(seg, offset), offset
    if seg.next_offset > BASE:  # a read at any batch start gives whole batches from there
        pos = seg.position_of(seg.next_offset - 1)
        assert pos is not None and seg.read_from(pos, 1 << 20, True)


appends = st.lists(st.lists(st.integers(1, 4), min_size=1, max_size=3), min_size=1, max_size=40)


@settings(max_examples=40, deadline=None)
@given(appends=appends, interval=st.sampled_from([0, 100, 300, 4096]), size=st.integers(0, 60))
def test_the_tail_answers_as_the_scan_does(appends, interval, size):
    with tempfile.TemporaryDirectory() as d:
        seg = Segment(d, BASE, interval)
        for counts in appends:
            data, positions = _batches(counts, size, seg.next_offset)
            seg.append(data, positions)
            _agrees(seg)
        seg.close()
        for recover in (False, True):  # reopened: the tail is read back from the last index entry
            again = Segment(d, BASE, interval)
            again.load(recover, crc32c.crc32c)
            _agrees(again)
            again.seal()  # sealed: no tail, the scan answers
            _agrees(again)
            again.close()


def test_a_tail_cut_at_its_limit_scans_on_from_its_last_batch(monkeypatch):
    monkeypatch.setattr(segment, "TAIL_LIMIT", 3)  # the writer's limit and the reader's, one value
    monkeypatch.setattr(segment_reader, "TAIL_LIMIT", 3)
    with tempfile.TemporaryDirectory() as d:
        seg = Segment(d, BASE, 1 << 20)
        for _ in range(8):
            data, positions = _batches([2], 10, seg.next_offset)
            seg.append(data, positions)
        assert len(seg._tail_offsets) == 3
        _agrees(seg)
        seg.close()


class _FailIndexWrites(fileio.FileIO):
    def __init__(self, log_fd: int) -> None:
        self.log_fd = log_fd

    def write(self, fd, data):
        if fd != self.log_fd:
            raise OSError(errno.EIO, "injected")
        return super().write(fd, data)


def test_a_rolled_back_append_leaves_the_tail_as_it_was(monkeypatch):
    with tempfile.TemporaryDirectory() as d:
        seg = Segment(d, BASE, 150)
        for _ in range(5):
            data, positions = _batches([1], 10, seg.next_offset)
            seg.append(data, positions)
        before = (list(seg._tail_offsets), list(seg._tail_positions), seg.next_offset, seg.size)
        data, positions = _batches([3, 3, 3], 40, seg.next_offset)  # crosses the index interval
        monkeypatch.setattr(fileio, "io", lambda: _FailIndexWrites(seg._log_fd))
        try:
            seg.append(data, positions)
        except OSError:
            pass
        else:
            raise AssertionError("the index write should have failed")
        monkeypatch.undo()
        assert (list(seg._tail_offsets), list(seg._tail_positions), seg.next_offset, seg.size) == before
        assert os.path.getsize(seg.log_path) == seg.size
        _agrees(seg)
        seg.close()


def _bookkeeping(seg: Segment) -> tuple:
    return (
        seg.next_offset,
        seg.max_timestamp,
        seg.offset_of_max_timestamp,
        list(seg._index),
        list(seg._time_index),
        seg._bytes_since_index,
        list(seg._tail_offsets),
        list(seg._tail_positions),
    )


@settings(max_examples=40, deadline=None)
@given(appends=appends, interval=st.sampled_from([0, 100, 300, 4096]), size=st.integers(0, 60))
def test_appends_of_several_batches_keep_the_books_the_recovery_scan_keeps(appends, interval, size):
    """The in-memory bookkeeping of appends of one or several batches (index entries, max timestamp,
    tail) is what `_track` gives batch by batch when the segment is recovered from its file."""
    with tempfile.TemporaryDirectory() as d:
        seg = Segment(d, BASE, interval)
        for counts in appends:
            data, positions = _batches(counts, size, seg.next_offset)
            seg.append(data, positions)
        appended = _bookkeeping(seg)
        seg.close()
        again = Segment(d, BASE, interval)
        again.load(True, crc32c.crc32c)
        assert _bookkeeping(again) == appended
        again.close()
