"""Incremental fetch sessions (KIP-227), as Kafka's FetchSession.scala (`FetchManager`,
`FetchSessionCache`, the full, incremental, sessionless and error contexts).

A consumer that follows many partitions would otherwise name every one of them in every Fetch, and
the broker would answer every one of them, changed or not. With a session the broker remembers what
the client follows (fetch offset and max bytes per partition, and the high watermark and log start
offset it last answered), so a steady-state request names only the partitions whose fetch offset
moved, and the answer holds only the partitions that have records, a new high watermark or log start
offset, or an error.

The request's (session id, epoch) selects the context (`FetchSessionCache.new_context`):
- epoch 0 (INITIAL): a full request; a session it names is closed, and the answer opens a new one
  with every partition of the request if a slot is free (or one can be evicted), else id 0;
- epoch -1 (FINAL): a full request that closes the session it names and opens none (sessionless);
- any other epoch: incremental, on the session it names, whose epoch must be exactly that:
  FETCH_SESSION_ID_NOT_FOUND / INVALID_FETCH_SESSION_EPOCH otherwise, and FETCH_SESSION_TOPIC_ID_ERROR
  when the request's version uses topic ids and the session does not (or the other way round). The
  request's partitions are added or updated, its forgotten ones dropped; a session left empty is
  closed and the request served sessionless. The session's epoch moves on with each request.

`FetchSessionCache.respond` is given what was read for each partition of the context and answers
which partitions go into the response (Kafka's `maybeUpdateResponseData`); partitions that returned
records move to the end of the session, so the next answers start with the others.

Eviction, as Kafka's FetchSessionCacheShard: with every slot taken (`max.incremental.fetch.session.
cache.slots`, 1000), a new session takes the slot of the least recently used one if that was unused
for `MIN_EVICTION_MS` (2 minutes), else of the smallest session older than that, if the new one is
larger. trafka also bounds the partitions cached in all sessions together (`max_cached_partitions`):
a session that would pass it is not created (id 0: the client sends full requests), and an
incremental request that would grow one past it closes it (FETCH_SESSION_ID_NOT_FOUND: the client
starts again with a full request).

Pure: the time comes in as `now_ms`, session ids from the `new_id` function it is given (the
adapter's is random, as Kafka's).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from enum import Enum

from .errors import ErrorCode

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
MAX_SLOTS = 1000  # max.incremental.fetch.session.cache.slots
MIN_EVICTION_MS = 120_000  # Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS
MAX_CACHED_PARTITIONS = 100_000  # trafka's bound on the partitions all sessions cache together
_MAX_ID = 2**31 - 1

PartitionKey = tuple[Hashable, int]
"""(topic, partition): the topic by id from Fetch v13 on, by name before."""

Wanted = tuple[PartitionKey, int, int]
"""(partition, fetch offset, partition max bytes): one partition of a request, or of a session."""


def next_epoch(epoch: int) -> int:
    """Kafka's FetchMetadata.nextEpoch: the final epoch stays final, and the epoch wraps to 1."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _MAX_ID else epoch + 1


class CachedPartition:
    """What a session remembers of one partition (Kafka's CachedPartition)."""

    __slots__ = ("fetch_offset", "max_bytes", "high_watermark", "log_start_offset")

    def __init__(self, fetch_offset: int, max_bytes: int, high_watermark: int = -1, log_start_offset: int = -1):
        self.fetch_offset = fetch_offset
        self.max_bytes = max_bytes
        self.high_watermark = high_watermark
        self.log_start_offset = log_start_offset

    def must_respond(self, records: int, high_watermark: int, log_start_offset: int, error: int) -> bool:
        """Whether the answer includes this partition, remembering what it tells the client (Kafka's
        maybeUpdateResponseData): records, a changed high watermark or log start offset, an error."""
        respond = records > 0
        if self.high_watermark != high_watermark:
            self.high_watermark = high_watermark
            respond = True
        if self.log_start_offset != log_start_offset:
            self.log_start_offset = log_start_offset
            respond = True
        if error:
            self.high_watermark = -1  # so the partition is answered again once the error is gone
            respond = True
        return respond


class FetchSession:
    __slots__ = ("id", "uses_topic_ids", "created_ms", "last_used_ms", "epoch", "partitions")

    def __init__(self, session_id: int, uses_topic_ids: bool, now_ms: int) -> None:
        self.id = session_id
        self.uses_topic_ids = uses_topic_ids
        self.created_ms = now_ms
        self.last_used_ms = now_ms
        self.epoch = next_epoch(INITIAL_EPOCH)
        self.partitions: dict[PartitionKey, CachedPartition] = {}  # in answering order

    def wanted(self) -> list[Wanted]:
        return [(key, p.fetch_offset, p.max_bytes) for key, p in self.partitions.items()]


class ContextKind(Enum):
    SESSIONLESS = "sessionless"
    FULL = "full"
    INCREMENTAL = "incremental"
    ERROR = "error"


class FetchContext:
    """What one Fetch request reads (`wanted`), and how its answer is made (`FetchSessionCache.respond`)."""

    __slots__ = ("kind", "error", "wanted", "session", "request_epoch", "uses_topic_ids")

    def __init__(
        self,
        kind: ContextKind,
        wanted: list[Wanted],
        error: ErrorCode = ErrorCode.NONE,
        session: FetchSession | None = None,
        request_epoch: int = INITIAL_EPOCH,
        uses_topic_ids: bool = False,
    ) -> None:
        self.kind = kind
        self.error = error
        self.wanted = wanted
        self.session = session
        self.request_epoch = request_epoch
        self.uses_topic_ids = uses_topic_ids


Read = tuple[int, int, int, int]
"""What was read for one partition of a context: (record bytes, high watermark, log start offset, error)."""


class FetchSessionCache:
    def __init__(
        self,
        new_id: Callable[[], int],
        max_slots: int = MAX_SLOTS,
        eviction_ms: int = MIN_EVICTION_MS,
        max_cached_partitions: int = MAX_CACHED_PARTITIONS,
    ) -> None:
        """`new_id` gives a candidate session id in 1..2**31-2 (drawn again while it is taken)."""
        self.max_slots = max_slots
        self.eviction_ms = eviction_ms
        self.max_cached_partitions = max_cached_partitions
        self._new_candidate = new_id
        self._sessions: dict[int, FetchSession] = {}  # least recently used first
        self.cached_partitions = 0
        self.evictions = 0

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, session_id: int) -> FetchSession | None:
        return self._sessions.get(session_id)

    # -- a request -------------------------------------------------------------------------------------

    def new_context(
        self,
        uses_topic_ids: bool,
        session_id: int,
        epoch: int,
        requested: Sequence[Wanted],
        forgotten: Sequence[PartitionKey],
        now_ms: int,
    ) -> FetchContext:
        """Kafka's FetchManager.newContext."""
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            if session_id != INVALID_SESSION_ID:
                self.remove(session_id)
            kind = ContextKind.SESSIONLESS if epoch == FINAL_EPOCH else ContextKind.FULL
            return FetchContext(kind, list(requested), uses_topic_ids=uses_topic_ids)
        session = self._sessions.get(session_id)
        if session is None:
            return FetchContext(ContextKind.ERROR, [], ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            return FetchContext(ContextKind.ERROR, [], ErrorCode.INVALID_FETCH_SESSION_EPOCH)
        if session.uses_topic_ids != uses_topic_ids:
            return FetchContext(ContextKind.ERROR, [], ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
        partitions = session.partitions
        before = len(partitions)
        for key, fetch_offset, max_bytes in requested:
            cached = partitions.get(key)
            if cached is None:
                partitions[key] = CachedPartition(fetch_offset, max_bytes)
            else:
                cached.fetch_offset, cached.max_bytes = fetch_offset, max_bytes
        for key in forgotten:
            partitions.pop(key, None)
        self.cached_partitions += len(partitions) - before
        if not partitions:
            self.remove(session.id)
            return FetchContext(ContextKind.SESSIONLESS, list(requested), uses_topic_ids=uses_topic_ids)
        if self.cached_partitions > self.max_cached_partitions:
            self.remove(session.id)
            return FetchContext(ContextKind.ERROR, [], ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        self._touch(session, now_ms)
        session.epoch = next_epoch(session.epoch)
        return FetchContext(ContextKind.INCREMENTAL, session.wanted(), session=session, request_epoch=epoch)

    def respond(self, context: FetchContext, reads: Sequence[Read], now_ms: int) -> tuple[int, ErrorCode, list[bool]]:
        """The answer's (session id, top-level error, whether each partition of `context.wanted` is in
        it), remembering what it tells the client."""
        kind = context.kind
        if kind is ContextKind.ERROR:
            return INVALID_SESSION_ID, context.error, []
        if kind is ContextKind.SESSIONLESS:
            return INVALID_SESSION_ID, ErrorCode.NONE, [True] * len(reads)
        if kind is ContextKind.FULL:
            return self._open(context, reads, now_ms), ErrorCode.NONE, [True] * len(reads)
        session = context.session
        assert session is not None
        if session.epoch != next_epoch(context.request_epoch):  # another request of the session came first
            return session.id, ErrorCode.INVALID_FETCH_SESSION_EPOCH, []
        partitions = session.partitions
        keep = []
        moved = []
        for (key, _, _), (records, high_watermark, log_start_offset, error) in zip(context.wanted, reads, strict=True):
            cached = partitions.get(key)
            if cached is None:  # forgotten by a later request of the session while this one waited
                keep.append(False)
                continue
            respond = cached.must_respond(records, high_watermark, log_start_offset, error)
            keep.append(respond)
            if respond and records:
                moved.append(key)
        for key in moved:  # partitions that returned records go to the end
            partitions[key] = partitions.pop(key)
        return session.id, ErrorCode.NONE, keep

    # -- the cache -------------------------------------------------------------------------------------

    def remove(self, session_id: int) -> FetchSession | None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            self.cached_partitions -= len(session.partitions)
        return session

    def _touch(self, session: FetchSession, now_ms: int) -> None:
        session.last_used_ms = now_ms
        self._sessions[session.id] = self._sessions.pop(session.id)  # most recently used last

    def _open(self, context: FetchContext, reads: Sequence[Read], now_ms: int) -> int:
        """Kafka's FullFetchContext.updateAndGenerateResponseData: a new session for the request's
        partitions, if there is room for it."""
        size = len(context.wanted)
        if size == 0 or self.cached_partitions + size > self.max_cached_partitions:
            return INVALID_SESSION_ID
        if len(self._sessions) >= self.max_slots and not self._evict_for(size, now_ms):
            return INVALID_SESSION_ID
        session = FetchSession(self._new_id(), context.uses_topic_ids, now_ms)
        for (key, fetch_offset, max_bytes), (_, high_watermark, log_start_offset, _) in zip(
            context.wanted, reads, strict=True
        ):
            session.partitions[key] = CachedPartition(fetch_offset, max_bytes, high_watermark, log_start_offset)
        self._sessions[session.id] = session
        self.cached_partitions += len(session.partitions)
        return session.id

    def _evict_for(self, size: int, now_ms: int) -> bool:
        """Kafka's tryEvict: the least recently used session if it is stale, else the smallest one older
        than the eviction time if the new session is larger than it."""
        if not self._sessions or self.max_slots <= 0:
            return False
        oldest = next(iter(self._sessions.values()))
        if now_ms - oldest.last_used_ms > self.eviction_ms:
            self.remove(oldest.id)
            self.evictions += 1
            return True
        evictable = [s for s in self._sessions.values() if now_ms - s.created_ms > self.eviction_ms]
        if not evictable:
            return False
        smallest = min(evictable, key=lambda s: (len(s.partitions), s.id))
        if size <= len(smallest.partitions):
            return False
        self.remove(smallest.id)
        self.evictions += 1
        return True

    def _new_id(self) -> int:
        while True:
            session_id: int = self._new_candidate()
            if session_id not in self._sessions and session_id != INVALID_SESSION_ID:
                return session_id
