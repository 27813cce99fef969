"""`trafka consume`'s consumer: Fetch from each partition's leader, records read by trafka's record
batch codec, and, with a group, a member of a classic consumer group (ADR 101).

Without a group it fetches the partitions it was given from the offsets it was given. With one it
joins as Kafka's classic consumer protocol does (JoinGroup, with the member id the coordinator asks
for; the leader assigns the subscribed topic's partitions by the range assignor, SyncGroup hands each
member its share), starts at the committed offsets (else at the reset policy's end), heartbeats while
it polls, rejoins when the coordinator says a rebalance is on, commits every five seconds and on
close, and leaves the group on close. Blocking calls on the operator commands' `wire.Client`; the
caller's loop owns the time.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

from trafka.schema_codec.messages import compiled
from trafka.schema_codec.records import iter_batches

from .admin import EARLIEST, LATEST, Admin, TopicPartition
from .wire import BrokerError, raise_for

OFFSET_OUT_OF_RANGE = 1
REBALANCE_IN_PROGRESS = 27
ILLEGAL_GENERATION = 22
UNKNOWN_MEMBER_ID = 25
MEMBER_ID_REQUIRED = 79
NOT_COORDINATOR_YET = (14, 15, 16)  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
SESSION_TIMEOUT_MS = 45_000
REBALANCE_TIMEOUT_MS = 300_000
HEARTBEAT_S = 3.0
AUTO_COMMIT_S = 5.0
PARTITION_MAX_BYTES = 1 << 20
_BY_NAME = 12  # Fetch v13 names topics by id


class ConsumedRecord(NamedTuple):
    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]


def range_assignment(members: dict[str, list[str]], partitions: dict[str, int]) -> dict[str, dict[str, list[int]]]:
    """Kafka's RangeAssignor: per topic, members in id order take consecutive ranges, the first ones one
    partition more when the count does not divide."""
    out: dict[str, dict[str, list[int]]] = {m: {} for m in members}
    for topic in sorted({t for ts in members.values() for t in ts}):
        subscribers = sorted(m for m, ts in members.items() if topic in ts)
        count = partitions.get(topic, 0)
        per, extra = divmod(count, len(subscribers))
        start = 0
        for index, member in enumerate(subscribers):
            size = per + (1 if index < extra else 0)
            if size:
                out[member][topic] = list(range(start, start + size))
            start += size
    return out


class Consumer:
    def __init__(self, admin: Admin, topic: str, group: str | None, reset: int) -> None:
        self.admin = admin
        self.client = admin.client
        self.topic = topic
        self.group = group
        self.reset = reset  # EARLIEST or LATEST, for a partition with no committed offset
        self.positions: dict[TopicPartition, int] = {}
        self.leaders: dict[TopicPartition, int] = {}
        self.member_id = ""
        self.generation = -1
        self._committed: dict[TopicPartition, int] = {}
        self._coordinator = -1
        self._next_heartbeat = 0.0
        self._next_commit = 0.0

    # -- without a group -----------------------------------------------------------------------------

    def assign(self, partitions: list[int], start: int | None) -> None:
        """Fetch `partitions` from `start` (an offset), or from the reset end when None."""
        tps = [TopicPartition(self.topic, p) for p in partitions]
        self.leaders = self.admin.leaders(tps)
        if start is not None:
            self.positions = dict.fromkeys(tps, start)
        else:
            self.positions = {
                tp: o.offset for tp, o in self.admin.list_partition_offsets(dict.fromkeys(tps, self.reset)).items()
            }

    # -- a classic group -----------------------------------------------------------------------------

    def join(self) -> None:
        """JoinGroup and SyncGroup until the coordinator hands this member its partitions."""
        Subscription = compiled("ConsumerProtocolSubscription")
        metadata = Subscription(version=0, topics=[self.topic], user_data=None).encode(0, header=True)
        Protocol = compiled("JoinGroupRequest").JoinGroupRequestProtocol
        assert self.group is not None
        deadline = time.monotonic() + self.client.timeout
        while True:
            self._coordinator = self.client.coordinator(self.group)
            joined = self.client.send(
                "JoinGroup",
                to=self._coordinator,
                wait=REBALANCE_TIMEOUT_MS / 1000 + self.client.timeout,  # the coordinator answers once all rejoined
                group_id=self.group,
                session_timeout_ms=SESSION_TIMEOUT_MS,
                rebalance_timeout_ms=REBALANCE_TIMEOUT_MS,
                member_id=self.member_id,
                group_instance_id=None,
                protocol_type="consumer",
                protocols=[Protocol(name="range", metadata=metadata)],
                reason=None,
            )
            if joined.error_code == MEMBER_ID_REQUIRED:
                self.member_id = joined.member_id
                continue
            if joined.error_code in (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION):
                self.member_id = ""
                continue
            if joined.error_code in NOT_COORDINATOR_YET and time.monotonic() < deadline:
                time.sleep(0.1)  # the coordinator moved or is loading: found again
                continue
            raise_for(joined.error_code, f"joining group {self.group}")
            self.member_id, self.generation = joined.member_id, joined.generation_id
            assignments = []
            if joined.leader == self.member_id and not joined.skip_assignment:
                assignments = self._assign(joined.members)
            synced = self.client.send(
                "SyncGroup",
                to=self._coordinator,
                wait=REBALANCE_TIMEOUT_MS / 1000 + self.client.timeout,
                group_id=self.group,
                generation_id=self.generation,
                member_id=self.member_id,
                group_instance_id=None,
                protocol_type="consumer",
                protocol_name=joined.protocol_name,
                assignments=assignments,
            )
            if synced.error_code in (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID):
                continue
            raise_for(synced.error_code, f"syncing group {self.group}")
            break
        mine: list[TopicPartition] = []
        if synced.assignment:
            decoded = compiled("ConsumerProtocolAssignment").decode(synced.assignment, header=True)
            mine = [TopicPartition(t.topic, p) for t in decoded.assigned_partitions for p in t.partitions]
        self._start_assigned(mine)
        self._next_heartbeat = time.monotonic() + HEARTBEAT_S
        self._next_commit = time.monotonic() + AUTO_COMMIT_S

    def _assign(self, members: list[Any]) -> list[Any]:
        Subscription = compiled("ConsumerProtocolSubscription")
        Assignment = compiled("ConsumerProtocolAssignment")
        subscriptions = {m.member_id: list(Subscription.decode(m.metadata, header=True).topics) for m in members}
        topics = sorted({t for ts in subscriptions.values() for t in ts})
        counts = {t.name: len(t.partitions) for t in self.client.metadata(topics).topics if not t.error_code}
        Sync = compiled("SyncGroupRequest").SyncGroupRequestAssignment
        out = []
        for member, owned in range_assignment(subscriptions, counts).items():
            assigned = [Assignment.TopicPartition(topic=t, partitions=ps) for t, ps in sorted(owned.items())]
            data = Assignment(version=0, assigned_partitions=assigned, user_data=None).encode(0, header=True)
            out.append(Sync(member_id=member, assignment=data))
        return out

    def _start_assigned(self, tps: list[TopicPartition]) -> None:
        self.leaders = self.admin.leaders(tps) if tps else {}
        committed = {tp: o.offset for tp, o in self.admin.list_group_offsets(self.group or "").items() if tp in tps}
        missing = [tp for tp in tps if tp not in committed]
        reset = self.admin.list_partition_offsets(dict.fromkeys(missing, self.reset)) if missing else {}
        self.positions = {tp: committed[tp] if tp in committed else reset[tp].offset for tp in tps}
        self._committed = dict(committed)

    def _heartbeat(self) -> None:
        now = time.monotonic()
        if self.group is None:
            return
        if now >= self._next_commit:
            self.commit()
            self._next_commit = now + AUTO_COMMIT_S
        if now < self._next_heartbeat:
            return
        self._next_heartbeat = now + HEARTBEAT_S
        answer = self.client.send(
            "Heartbeat",
            to=self._coordinator,
            group_id=self.group,
            generation_id=self.generation,
            member_id=self.member_id,
            group_instance_id=None,
        )
        if answer.error_code == REBALANCE_IN_PROGRESS:
            self.commit()
            self.join()
        elif answer.error_code in (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID):
            self.member_id = "" if answer.error_code == UNKNOWN_MEMBER_ID else self.member_id
            self.join()
        else:
            raise_for(answer.error_code, f"group {self.group}")

    def commit(self) -> None:
        """The positions reached, as this member's commit (nothing when nothing moved)."""
        if self.group is None:
            return
        moved = {tp: o for tp, o in self.positions.items() if self._committed.get(tp) != o}
        if not moved:
            return
        try:
            self.admin.commit_offsets(self.group, moved, self.generation, self.member_id, self._coordinator)
        except BrokerError:
            return  # a rebalance took the partitions: their new owner goes on from the last commit
        self._committed.update(moved)

    def close(self) -> None:
        if self.group is None or not self.member_id:
            return
        try:
            self.commit()
        finally:
            Member = compiled("LeaveGroupRequest").MemberIdentity
            self.client.send(
                "LeaveGroup",
                to=self._coordinator,
                group_id=self.group,
                member_id=self.member_id,
                members=[Member(member_id=self.member_id, group_instance_id=None, reason="the consumer is closing")],
            )

    # -- fetching ------------------------------------------------------------------------------------

    def poll(self, wait_ms: int, limit: int) -> list[ConsumedRecord]:
        """Records from every leader (waiting up to `wait_ms` for the first), at most `limit`."""
        from trafka.adapters.compression import decompress

        self._heartbeat()
        Topic = compiled("FetchRequest").FetchTopic
        out: list[ConsumedRecord] = []
        for leader in sorted(set(self.leaders.values())):
            mine = sorted(tp for tp, node in self.leaders.items() if node == leader)
            answer = self.client.send(
                "Fetch",
                to=leader,
                cap=_BY_NAME,
                cluster_id=None,
                replica_id=-1,
                max_wait_ms=wait_ms,
                min_bytes=1,
                max_bytes=50 << 20,
                isolation_level=0,
                session_id=0,
                session_epoch=-1,
                topics=[
                    Topic(
                        topic=self.topic,
                        partitions=[
                            Topic.FetchPartition(
                                partition=tp.partition,
                                current_leader_epoch=-1,
                                fetch_offset=self.positions[tp],
                                last_fetched_epoch=-1,
                                log_start_offset=-1,
                                partition_max_bytes=PARTITION_MAX_BYTES,
                            )
                            for tp in mine
                        ],
                    )
                ],
                forgotten_topics_data=[],
                rack_id="",
            )
            raise_for(answer.error_code)
            for topic in answer.responses:
                for p in topic.partitions:
                    tp = TopicPartition(topic.topic, p.partition_index)
                    if p.error_code == OFFSET_OUT_OF_RANGE:
                        spec = {tp: self.reset}
                        self.positions[tp] = self.admin.list_partition_offsets(spec)[tp].offset
                        continue
                    raise_for(p.error_code, f"{tp.topic}-{tp.partition}")
                    out += self._records(tp, p.records or b"", decompress, limit - len(out))
        return out

    def _records(self, tp: TopicPartition, data: bytes, decompress: Any, limit: int) -> list[ConsumedRecord]:
        from trafka.schema_codec.records import decode_records

        out: list[ConsumedRecord] = []
        position = self.positions[tp]
        for header, batch in iter_batches(data):
            if len(out) >= limit:
                break
            if header.is_control:
                position = max(position, header.next_offset)
                continue
            for record in decode_records(batch, decompress):
                if record.offset < position:
                    continue
                if len(out) >= limit:
                    break
                out.append(ConsumedRecord(tp.topic, tp.partition, *record))
                position = record.offset + 1
            else:
                position = max(position, header.next_offset)
        self.positions[tp] = position
        return out


__all__ = ["EARLIEST", "LATEST", "ConsumedRecord", "Consumer", "range_assignment"]
