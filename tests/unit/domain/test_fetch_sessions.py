"""Fetch sessions (KIP-227) in the domain: the contexts of Kafka's FetchManager, what an incremental
answer holds, eviction, the partition bound, and (hypothesis) a client that follows the protocol as
Kafka's FetchSessionHandler does always gets read exactly what it follows, at its own offsets."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from trafka.domain.errors import ErrorCode
from trafka.domain.fetch_sessions import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    ContextKind,
    FetchSessionCache,
    next_epoch,
)

A0, A1, B0 = ("a", 0), ("a", 1), ("b", 0)


def cache(**kwargs) -> FetchSessionCache:
    ids = itertools.count(7)
    return FetchSessionCache(lambda: next(ids), **kwargs)


def read(context, records=0, hw=10, start=0, error=0):
    return [(records, hw, start, error)] * len(context.wanted)


def open_session(c, wanted, now=0):
    context = c.new_context(False, 0, INITIAL_EPOCH, wanted, [], now)
    assert context.kind is ContextKind.FULL
    session_id, error, keep = c.respond(context, read(context), now)
    assert error is ErrorCode.NONE and all(keep)
    return session_id


def test_epochs_wrap_to_one_and_the_final_epoch_stays():
    assert next_epoch(0) == 1
    assert next_epoch(2**31 - 1) == 1
    assert next_epoch(-1) == -1


def test_a_full_request_opens_a_session_and_the_next_request_names_nothing():
    c = cache()
    session_id = open_session(c, [(A0, 5, 100), (B0, 3, 100)])
    assert session_id == 7 and len(c) == 1 and c.cached_partitions == 2
    context = c.new_context(False, session_id, 1, [], [], 1)
    assert context.kind is ContextKind.INCREMENTAL
    assert context.wanted == [(A0, 5, 100), (B0, 3, 100)]  # offsets from the session
    # nothing changed: an empty answer
    assert c.respond(context, read(context), 1) == (7, ErrorCode.NONE, [False, False])


def test_an_incremental_answer_holds_records_new_watermarks_and_errors_and_rotates_partitions():
    c = cache()
    session_id = open_session(c, [(A0, 5, 100), (A1, 5, 100), (B0, 3, 100)])
    context = c.new_context(False, session_id, 1, [], [], 1)
    reads = [(50, 10, 0, 0), (0, 11, 0, 0), (0, 10, 0, 3)]  # records; a new high watermark; an error
    assert c.respond(context, reads, 1) == (session_id, ErrorCode.NONE, [True, True, True])
    # A0 returned records: it goes to the end; the errored partition is answered again once fine
    context = c.new_context(False, session_id, 2, [(A0, 6, 100)], [], 2)
    assert [key for key, _, _ in context.wanted] == [A1, B0, A0]
    assert context.wanted[2] == (A0, 6, 100)
    reads = [(0, 11, 0, 0), (0, 10, 0, 0), (0, 10, 0, 0)]
    assert c.respond(context, reads, 2)[2] == [False, True, False]
    context = c.new_context(False, session_id, 3, [], [], 3)
    assert c.respond(context, [(0, 11, 0, 0), (0, 10, 0, 0), (0, 10, 5, 0)], 3)[2] == [False, False, True]


def test_forgotten_partitions_leave_and_an_emptied_session_closes():
    c = cache()
    session_id = open_session(c, [(A0, 5, 100), (B0, 3, 100)])
    context = c.new_context(False, session_id, 1, [], [B0], 1)
    assert [key for key, _, _ in context.wanted] == [A0] and c.cached_partitions == 1
    c.respond(context, read(context), 1)
    context = c.new_context(False, session_id, 2, [(B0, 9, 100)], [A0], 2)  # replaced, not emptied
    assert [key for key, _, _ in context.wanted] == [B0]
    c.respond(context, read(context), 2)
    context = c.new_context(False, session_id, 3, [], [B0], 3)
    assert context.kind is ContextKind.SESSIONLESS and context.wanted == []
    assert c.respond(context, [], 3) == (0, ErrorCode.NONE, [])
    assert len(c) == 0 and c.cached_partitions == 0


def test_session_errors():
    c = cache()
    session_id = open_session(c, [(A0, 5, 100)])
    unknown = c.new_context(False, session_id + 1, 1, [], [], 1)
    assert (unknown.kind, unknown.error) == (ContextKind.ERROR, ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
    stale = c.new_context(False, session_id, 2, [], [], 1)
    assert stale.error is ErrorCode.INVALID_FETCH_SESSION_EPOCH
    ids = c.new_context(True, session_id, 1, [], [], 1)
    assert ids.error is ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR
    assert c.respond(stale, [], 1) == (0, ErrorCode.INVALID_FETCH_SESSION_EPOCH, [])


def test_a_duplicate_request_of_the_same_epoch_is_answered_with_an_epoch_error():
    c = cache()
    session_id = open_session(c, [(A0, 5, 100)])
    first = c.new_context(False, session_id, 1, [], [], 1)
    second = c.new_context(False, session_id, 2, [], [], 1)  # came while the first waited
    assert c.respond(second, read(second), 1)[1] is ErrorCode.NONE
    assert c.respond(first, read(first), 1) == (session_id, ErrorCode.INVALID_FETCH_SESSION_EPOCH, [])


def test_epoch_zero_with_a_session_replaces_it_and_final_epoch_closes_it():
    c = cache()
    first = open_session(c, [(A0, 5, 100)])
    context = c.new_context(False, first, INITIAL_EPOCH, [(B0, 1, 100)], [], 1)
    assert context.kind is ContextKind.FULL and c.get(first) is None
    second, _, _ = c.respond(context, read(context), 1)
    assert second not in (0, first)
    context = c.new_context(False, second, FINAL_EPOCH, [(B0, 1, 100)], [], 2)
    assert context.kind is ContextKind.SESSIONLESS and len(c) == 0
    assert c.respond(context, read(context), 2) == (0, ErrorCode.NONE, [True])


def test_a_full_cache_evicts_a_stale_session_else_a_smaller_old_one_else_opens_none():
    c = cache(max_slots=2, eviction_ms=100)
    s1 = open_session(c, [(A0, 0, 1)], now=0)
    s2 = open_session(c, [(A0, 0, 1), (B0, 0, 1)], now=50)
    assert open_session(c, [(A0, 0, 1)], now=60) == 0  # nothing stale, nothing old enough
    # s1 unused for more than 100 ms: evicted for anyone
    s3 = open_session(c, [(A0, 0, 1)], now=101)
    assert c.get(s1) is None and c.get(s3) is not None and c.evictions == 1
    c.new_context(False, s2, 1, [], [], 120)  # s2 used now, s3 (created at 101) not stale at 190
    assert open_session(c, [(A0, 0, 1)], now=190) == 0  # s2 is old but not smaller than a 1-partition session
    s4 = open_session(c, [(A0, 0, 1), (A1, 0, 1), (B0, 0, 1)], now=190)  # larger than s2, which is old
    assert s4 and c.get(s2) is None and c.evictions == 2


def test_cached_partitions_are_bounded():
    c = cache(max_cached_partitions=3)
    s1 = open_session(c, [(A0, 0, 1), (A1, 0, 1)])
    assert open_session(c, [(A0, 0, 1), (B0, 0, 1)]) == 0  # would pass the bound: no session
    grown = c.new_context(False, s1, 1, [(B0, 0, 1), (("c", 0), 0, 1)], [], 1)
    assert grown.error is ErrorCode.FETCH_SESSION_ID_NOT_FOUND  # the client starts again with a full request
    assert c.get(s1) is None and c.cached_partitions == 0


class Client:
    """Kafka's FetchSessionHandler, reduced: it sends what changed since its last request."""

    def __init__(self) -> None:
        self.session_id = 0
        self.epoch = INITIAL_EPOCH
        self.sent: dict = {}  # what the broker's session holds, as this client believes

    def request(self, wants: dict) -> tuple[int, int, list, list]:
        if self.epoch == INITIAL_EPOCH:
            return self.session_id, self.epoch, [(k, o, 100) for k, o in wants.items()], []
        changed = [(k, o, 100) for k, o in wants.items() if self.sent.get(k) != o]
        forgotten = [k for k in self.sent if k not in wants]
        return self.session_id, self.epoch, changed, forgotten

    def answered(self, wants: dict, session_id: int, error: ErrorCode) -> None:
        if error is not ErrorCode.NONE or session_id == 0:
            self.session_id, self.epoch, self.sent = 0, INITIAL_EPOCH, {}
            return
        self.session_id, self.epoch, self.sent = session_id, next_epoch(self.epoch), dict(wants)


keys = st.sampled_from([A0, A1, B0, ("c", 3)])
steps = st.lists(st.dictionaries(keys, st.integers(0, 5), max_size=4), min_size=1, max_size=25)


@settings(max_examples=200, deadline=None)
@given(steps=steps, slots=st.integers(0, 2), bound=st.integers(1, 6))
def test_a_client_always_reads_what_it_follows(steps, slots, bound):
    c = cache(max_slots=slots, max_cached_partitions=bound)
    client = Client()
    for now, wants in enumerate(steps):
        session_id, epoch, requested, forgotten = client.request(wants)
        context = c.new_context(False, session_id, epoch, requested, forgotten, now)
        answer_id, error, _ = c.respond(context, read(context), now)
        if context.kind is not ContextKind.ERROR:
            assert sorted((k, o) for k, o, _ in context.wanted) == sorted(wants.items())
        client.answered(wants, answer_id, error)
        assert c.cached_partitions == sum(len(c.get(i).partitions) for i in list(c._sessions))
        assert c.cached_partitions <= bound and len(c) <= slots
