"""Share sessions (Kafka's ShareSessionCache): a session's epoch and partitions, the epochs a request
opens and closes one with, and the connection each session was opened on (it closes with it).

A session is keyed by (group, member): epoch 0 opens it, each later request carries the next epoch
(1, 2, ... wrapping to 1), -1 closes it (`session_at` checks them)."""

from __future__ import annotations

import uuid

import attrs

from ...errors import ErrorCode
from ...topics import TopicPartition

FINAL_EPOCH = -1
INITIAL_EPOCH = 0
MAX_SHARE_SESSIONS = 2000  # Kafka's group.share.max.share.sessions: a bound on what clients make us keep

SessionKey = tuple[str, str]  # (group, member)


@attrs.define
class ShareSession:
    """A share session's epoch and partitions, keyed by (topic id, partition) as Kafka's
    CachedSharePartition: a topic deleted and created again under its name is another entry, so
    records of the new topic are only answered to a client that asked for them under the new id."""

    epoch: int  # the epoch the next request must carry
    partitions: dict[tuple[uuid.UUID, int], TopicPartition] = attrs.field(factory=dict)  # in the order added

    def bump(self) -> None:
        self.epoch = 1 if self.epoch >= 2**31 - 1 else self.epoch + 1

    def add(self, topic_id: uuid.UUID, tp: TopicPartition) -> None:
        self.partitions[(topic_id, tp.partition)] = tp

    def forget(self, topic_id: uuid.UUID, partition: int) -> None:
        self.partitions.pop((topic_id, partition), None)


def session_at(
    sessions: dict[SessionKey, ShareSession], key: SessionKey, epoch: int, max_sessions: int
) -> tuple[ErrorCode, ShareSession | None]:
    """The session a request at `epoch` works in (a new one at epoch 0, within `max_sessions`), its
    epoch moved on, or the error: INVALID_SHARE_SESSION_EPOCH for a wrong epoch,
    SHARE_SESSION_NOT_FOUND without a session, SHARE_SESSION_LIMIT_REACHED when full."""
    if epoch == INITIAL_EPOCH:
        if key not in sessions and len(sessions) >= max_sessions:
            return ErrorCode.SHARE_SESSION_LIMIT_REACHED, None
        sessions[key] = ShareSession(1)
        return ErrorCode.NONE, sessions[key]
    session = sessions.get(key)
    if session is None:
        return ErrorCode.SHARE_SESSION_NOT_FOUND, None
    if epoch == FINAL_EPOCH:
        return ErrorCode.NONE, session
    if epoch != session.epoch:
        return ErrorCode.INVALID_SHARE_SESSION_EPOCH, None
    session.bump()
    return ErrorCode.NONE, session


class SessionConnections:
    """The connection each session was opened on (an opaque key from the adapter), and the reverse."""

    def __init__(self) -> None:
        self._connection: dict[SessionKey, object] = {}
        self._sessions: dict[object, set[SessionKey]] = {}

    def bind(self, key: SessionKey, connection: object) -> None:
        self.unbind(key)
        if connection is not None:
            self._connection[key] = connection
            self._sessions.setdefault(connection, set()).add(key)

    def unbind(self, key: SessionKey) -> None:
        connection = self._connection.pop(key, None)
        if connection is not None:
            keys = self._sessions.get(connection)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._sessions[connection]

    def closed(self, connection: object) -> set[SessionKey]:
        """The connection closed: the sessions opened on it, no longer bound to it."""
        keys = self._sessions.pop(connection, set())
        for key in keys:
            self._connection.pop(key, None)
        return keys
