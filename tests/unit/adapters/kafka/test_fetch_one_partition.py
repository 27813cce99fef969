"""A parked Fetch of one partition without a session or quota is completed by its own completion (ADR
130), proven against the general one (`completion`: `_read` and `_answer` over every partition).

Hypothesis builds a partition's history before and after the park (plain appends kept for the parked
Fetch or not, transactional batches, commit and abort markers, records deleted below, the topic deleted),
and after every step both completions, expired or not, must give the same answer: the same partition
tuple and the same bytes at the request's version, or both None (too little, still parked). Fetches by
name (v12) and by topic id (v13+), both isolation levels, fetch offsets around the log end, partition and
request max bytes below and above the batches, min bytes from one byte to more than an append brings.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.batches import make_batch
from trafka.adapters.kafka.api import Parked
from trafka.adapters.kafka.apis import fetch as room
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.domain.errors import ErrorCode
from trafka.domain.topics import TopicPartition
from trafka.schema_codec.messages import FetchRequest

CLIENT = ClientInfo("test", "127.0.0.1")
TP = TopicPartition("a", 0)
NOW = 1_000

step = st.one_of(
    st.tuples(st.just("plain"), st.integers(1, 3), st.integers(0, 120), st.booleans()),  # kept for the Fetch?
    st.tuples(st.just("txn"), st.integers(5, 6), st.integers(1, 2)),
    st.tuples(st.just("marker"), st.integers(5, 6), st.booleans()),
    st.tuples(st.just("delete records"), st.integers(0, 3)),
    st.tuples(st.just("delete topic")),
)


def build(tmp_store: str | None):
    storage = {"kind": "memory"} if tmp_store is None else {"kind": "filesystem", "data_dir": tmp_store}
    settings = load_settings(overrides={"storage": storage})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("a", 1, 1)
    return ctx


def apply(ctx, sequences: dict[int, int], action: tuple) -> None:
    replicas, kind = ctx.services.replicas, action[0]
    if not ctx.services.catalog.has_partition(TP):
        return
    if kind == "plain":
        _, count, size, kept = action
        replicas.produce_many([(TP, make_batch([(NOW + i, None, b"p" * size) for i in range(count)]), None, 3)], NOW)
        if not kept:
            replicas.forget_appended()
    elif kind == "txn":
        _, producer_id, count = action
        sequence = sequences.get(producer_id, 0)
        batch = make_batch(
            [(NOW, None, b"t" * 30)] * count,
            producer_id=producer_id,
            producer_epoch=0,
            base_sequence=sequence,
            transactional=True,
        )
        (result,) = replicas.produce_many([(TP, batch, "tx", 3)], NOW)
        if result.error is ErrorCode.NONE:
            sequences[producer_id] = sequence + count
    elif kind == "marker":
        _, producer_id, commit = action
        replicas.forget_appended()
        replicas.write_marker(TP, producer_id, 0, commit, NOW)
    elif kind == "delete records":
        replicas.forget_appended()
        end = replicas.watermarks(TP)[1]
        replicas.delete_records(TP, max(end - action[1], 0))
    else:
        replicas.forget_appended()
        ctx.services.catalog.delete("a")


def fetch_request(version: int, topic_id, offset: int, isolation: int, sizes: tuple[int, int, int]):
    partition_max, request_max, min_bytes = sizes
    Topic = FetchRequest.FetchTopic
    key = {"topic_id": topic_id} if version >= 13 else {"topic": "a"}
    partition = Topic.FetchPartition(
        version=version, partition=0, fetch_offset=offset, partition_max_bytes=partition_max
    )
    fields = {"replica_id": -1} if version < 15 else {}
    return FetchRequest(
        version=version,
        max_wait_ms=5_000,
        min_bytes=min_bytes,
        max_bytes=request_max,
        isolation_level=isolation,
        session_id=0,
        session_epoch=-1,
        topics=[Topic(version=version, partitions=[partition], **key)],
        forgotten_topics_data=[],
        rack_id="",
        **fields,
    )


def same(version: int, mine, general) -> None:
    if general is None:
        assert mine is None
        return
    assert mine is not None
    assert (mine.topics, mine.error_code, mine.session_id) == (general.topics, general.error_code, general.session_id)
    assert mine.encode_pieces(version, 9) == general.encode_pieces(version, 9)


@pytest.mark.parametrize("store", ["memory", "filesystem"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    before=st.lists(step, max_size=5),
    after=st.lists(step, min_size=1, max_size=5),
    version=st.sampled_from([12, 13, 16, 18]),
    isolation=st.sampled_from([0, 1]),
    back=st.integers(0, 2),
    sizes=st.tuples(st.sampled_from([1, 60, 200, 1 << 20]), st.sampled_from([1, 150, 1 << 20]), st.integers(1, 300)),
)
def test_the_one_partition_completion_answers_what_the_general_one_answers(
    store, tmp_path_factory, before, after, version, isolation, back, sizes
):
    ctx = build(None if store == "memory" else str(tmp_path_factory.mktemp("log")))
    sequences: dict[int, int] = {}
    for action in before:
        apply(ctx, sequences, action)
    if not ctx.services.catalog.has_partition(TP):
        return
    view = ctx.view(room.Uses)
    topic_id = ctx.services.catalog.get("a").topic_id
    offset = max(ctx.services.replicas.watermarks(TP)[1] - back, 0)
    request = fetch_request(version, topic_id, offset, isolation, sizes)
    by_id = version >= 13
    targets = room._targets(view, room._wanted(request, by_id), by_id, CLIENT, False)
    mine = room.one_partition_completion(view, request, targets[0], by_id)
    general = room.completion(view, request, targets, None, None, by_id)
    outcome = room.handle_fetch(view, request, version, CLIENT)
    if type(outcome) is Parked:
        assert type(outcome.complete) is room.OnePartitionCompletion  # it parks with this completion
    for action in after:
        apply(ctx, sequences, action)
        for expired in (False, True):
            same(version, mine(expired), general(expired))


def _kind(complete) -> str:
    return getattr(complete, "__qualname__", type(complete).__qualname__)


def _outcome(version: int, outcome):
    """What a handler's outcome answers now: the answer's bytes, or the park's keys and wait."""
    if type(outcome) is Parked:
        return ("parked", list(outcome.keys), outcome.max_wait_ms)
    return ("answer", outcome.encode_pieces(version, 9))


@pytest.mark.parametrize("store", ["memory", "filesystem"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    before=st.lists(step, max_size=5),
    after=st.lists(step, min_size=1, max_size=3),
    version=st.sampled_from([7, 11, 12, 13, 16, 18]),
    isolation=st.sampled_from([0, 1]),
    back=st.integers(-1, 2),
    sizes=st.tuples(st.sampled_from([1, 60, 200, 1 << 20]), st.sampled_from([0, 1, 150, 1 << 20]), st.integers(0, 300)),
    max_wait=st.sampled_from([0, 5_000]),
    unknown=st.booleans(),
)
def test_a_sessionless_one_partition_fetch_is_handled_as_the_general_path_handles_it(
    store, tmp_path_factory, before, after, version, isolation, back, sizes, max_wait, unknown
):
    """ADR 134: `handle_fetch` serves librdkafka's request (sessionless, one partition) without asking the
    session cache and reads that partition alone; it answers, or parks with the same keys and wait and a
    completion that answers, what the general path (`_handle`) does, for unknown topics too."""
    import uuid

    ctx = build(None if store == "memory" else str(tmp_path_factory.mktemp("log")))
    sequences: dict[int, int] = {}
    for action in before:
        apply(ctx, sequences, action)
    if not ctx.services.catalog.has_partition(TP):
        return
    view = ctx.view(room.Uses)
    topic_id = uuid.uuid4() if unknown else ctx.services.catalog.get("a").topic_id
    offset = max(ctx.services.replicas.watermarks(TP)[1] - back, 0)
    request = fetch_request(version, topic_id, offset, isolation, sizes)
    request.max_wait_ms = max_wait
    if version < 12:
        request.rack_id = ""
    mine = room.handle_fetch(view, request, version, CLIENT)
    general = room._handle(view, request, version, CLIENT, version >= 13)
    assert _outcome(version, mine) == _outcome(version, general)
    if type(mine) is not Parked:
        return
    assert _kind(mine.complete) == _kind(general.complete)
    for action in after:
        apply(ctx, sequences, action)
        for expired in (False, True):
            same(version, mine.complete(expired), general.complete(expired))


def test_the_session_cache_is_asked_for_any_other_fetch(monkeypatch):
    """Only a sessionless request without a session id of one partition skips `_handle` (ADR 134): a
    request that opens or closes a session, or reads two partitions, is served by it."""
    ctx = build(None)
    view = ctx.view(room.Uses)
    topic_id = ctx.services.catalog.get("a").topic_id
    general = []
    original = room._handle
    monkeypatch.setattr(room, "_handle", lambda *args: general.append(args) or original(*args))
    request = fetch_request(16, topic_id, 0, 0, (1 << 20, 1 << 20, 1))
    assert type(room.handle_fetch(view, request, 16, CLIENT)) is Parked and not general
    for change in ({"session_epoch": 0}, {"session_id": 5}):
        other = fetch_request(16, topic_id, 0, 0, (1 << 20, 1 << 20, 1))
        for name, value in change.items():
            setattr(other, name, value)
        room.handle_fetch(view, other, 16, CLIENT)
    two = fetch_request(16, topic_id, 0, 0, (1 << 20, 1 << 20, 1))
    two.topics[0].partitions.append(two.topics[0].partitions[0])
    room.handle_fetch(view, two, 16, CLIENT)
    assert len(general) == 3
