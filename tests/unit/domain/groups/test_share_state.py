"""ShareUpdate deltas (`domain.groups.share.state`): an update carries only the state batches that
changed, and laying it over the earlier state gives the new state exactly, for any progression of a
share-partition (start offset moving on, records acquired, acknowledged, archived, released)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from trafka.domain.groups.share.state import apply_update, delivery_complete_count, delta

run = st.tuples(st.integers(1, 5), st.sampled_from([0, 2, 4]), st.integers(0, 5))


def contiguous(start: int, runs: list[tuple[int, int, int]]) -> list[tuple[int, int, int, int]]:
    batches, offset = [], start
    for length, state, count in runs:
        batches.append((offset, offset + length - 1, state, count))
        offset += length
    return batches


@given(
    start=st.integers(0, 50),
    old_runs=st.lists(run, max_size=6),
    advance=st.integers(0, 10),
    new_runs=st.lists(run, max_size=8),
    keep=st.integers(0, 6),
)
def test_an_update_laid_over_the_old_state_gives_the_new_state(start, old_runs, advance, new_runs, keep):
    old = contiguous(start, old_runs)
    # the new state keeps some of the old batches as they were (unchanged), the rest is new
    kept = [b for b in old[:keep] if b[0] >= start + advance]
    new_start = kept[0][0] if kept else start + advance
    after = kept[-1][1] + 1 if kept else new_start
    new = kept + contiguous(after, new_runs)
    changed = delta(start, old, new_start, new)
    old_end = old[-1][1] if old else start - 1
    new_end = new[-1][1] if new else new_start - 1
    if new_end < old_end:
        assert changed is None
        return
    assert changed is not None
    assert all(b not in old for b in changed)  # only what changed
    assert apply_update(start, old, new_start, changed) == (new_start, new)


def test_an_update_cuts_the_batches_it_overlaps_and_the_start_offset_drops_what_is_below():
    old = [(0, 9, 0, 1), (10, 19, 2, 1)]
    assert apply_update(0, old, 5, [(7, 12, 4, 2)]) == (5, [(5, 6, 0, 1), (7, 12, 4, 2), (13, 19, 2, 1)])
    assert apply_update(0, old, -1, [(3, 3, 2, 1)]) == (0, [(0, 2, 0, 1), (3, 3, 2, 1), (4, 9, 0, 1), (10, 19, 2, 1)])


def test_a_reset_backwards_needs_a_snapshot():
    assert delta(10, [(10, 12, 2, 1)], 3, []) is None


def test_delivery_complete_count_counts_acknowledged_and_archived_offsets_from_the_start():
    assert delivery_complete_count(5, [(3, 7, 2, 1), (8, 9, 0, 1), (10, 11, 4, 5)]) == 3 + 2
