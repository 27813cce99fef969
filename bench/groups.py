"""KIP-848 consumer groups: broker CPU per ConsumerGroupHeartbeat, and what a join costs.

    python bench/groups.py [--members 10,100] [--partitions 100] [--rounds 20]

In-process, without sockets (as `bench/request_path.py` measures Produce): a memory-store broker with
one topic of `--partitions` partitions; `--members` - 1 members join a consumer group and heartbeat, each
heartbeat framed as librdkafka sends it (ConsumerGroupHeartbeat v1: member id, epoch and, once an
assignment changed, the owned partitions by topic id) and taken through `decode_request` -> the room's
handler -> `encode_response`, timed with `time.process_time`. The members revoke what they are told to
at once, as a consumer with nothing in flight does.

It prints, per member count:
- the CPU per steady heartbeat (a stable group; nothing changes, nothing is written);
- the CPU of the heartbeat with which the last member joins (the new target assignment: the uniform
  assignor over every member), and how many heartbeats the group needs until every member holds its
  final assignment;
- how many members had partitions revoked by that join (with the new protocol only those whose
  partitions the new member takes, and they keep fetching the rest: `members_stopped` counts those
  left with nothing; a classic eager rebalance revokes everything from all of them), and how many
  partitions changed owner (the sticky uniform assignor moves only the newcomer's share).

With `--clients`, the same join with real librdkafka consumers in one process (a producer thread
keeps writing, `auto.offset.reset=latest`), for both protocols (classic with cooperative-sticky and
the same heartbeat interval): the time from the newcomer's subscribe until its first record, and the
longest gap in records seen by any member already there, before and while the group takes the newcomer.

    python bench/groups.py --clients --members 10 [--heartbeat-ms 1000]
"""

from __future__ import annotations

import argparse
import itertools
import pathlib
import platform
import sys
import threading
import time

from trafka.adapters.kafka.context import ClientInfo
from trafka.adapters.kafka.wire.codec import decode_request, encode_response
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.schema_codec.messages import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse

CLIENT = ClientInfo("bench", "127.0.0.1")
_correlation = itertools.count(1)


def frame(request: ConsumerGroupHeartbeatRequest) -> bytes:
    request.with_header(correlation_id=next(_correlation), client_id="bench")
    return bytes(request.encode(header=True, framed=True))[4:]


class Member:
    def __init__(self, member_id: str, topic_id) -> None:
        self.member_id = member_id
        self.topic_id = topic_id
        self.epoch = 0
        self.owned: list[int] = []
        self.changed = True  # send owned partitions (a full heartbeat) when the assignment changed

    def request(self) -> bytes:
        Tp = ConsumerGroupHeartbeatRequest.TopicPartitions
        joining = self.epoch == 0
        return frame(
            ConsumerGroupHeartbeatRequest[1](
                group_id="bench",
                member_id=self.member_id,
                member_epoch=self.epoch,
                rebalance_timeout_ms=300_000 if joining else -1,
                subscribed_topic_names=["bench"] if joining else None,
                topic_partitions=[Tp(topic_id=self.topic_id, partitions=self.owned)] if self.changed else None,
            )
        )

    def answer(self, response: ConsumerGroupHeartbeatResponse) -> bool:
        """Take the answer; True if the member's partitions changed."""
        assert response.error_code == 0, response
        self.epoch = response.member_epoch
        self.changed = response.assignment is not None
        if response.assignment is None:
            return False
        owned = sorted(p for tp in response.assignment.topic_partitions for p in tp.partitions)
        moved = owned != self.owned
        self.owned = owned
        return moved


def serve(ctx, data: bytes):
    decoded = decode_request(data, ctx.registry)
    response = decoded.handler.handle(ctx, decoded.body, decoded.api_version, CLIENT)
    encoded = encode_response(response, decoded.api_version, decoded.correlation_id)
    return response, encoded


def run(members: int, partitions: int, rounds: int) -> dict:
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    ctx = bootstrap(settings, default_adapters(settings))
    topic = ctx.catalog.create("bench", partitions, 1)
    group = [Member(f"member-{i:04d}", topic.topic_id) for i in range(members - 1)]
    for _ in range(10):  # join and settle
        for m in group:
            response, _ = serve(ctx, m.request())
            m.answer(response)
    assert sorted(p for m in group for p in m.owned) == list(range(partitions)), "the group did not settle"
    frames_ = [m.request() for m in group]
    start = time.process_time()
    for _ in range(rounds):
        for data in frames_:
            serve(ctx, data)
    steady_us = (time.process_time() - start) / (rounds * len(group)) * 1e6
    newcomer = Member("member-new", topic.topic_id)
    before = {m.member_id: list(m.owned) for m in group}
    start = time.process_time()
    response, _ = serve(ctx, newcomer.request())
    join_us = (time.process_time() - start) * 1e6
    newcomer.answer(response)
    everyone = [*group, newcomer]
    owner_before = {p: m.member_id for m in group for p in m.owned}
    heartbeats, revoked = 0, set()
    for _ in range(20):
        if (
            all(m.epoch == ctx.groups.consumer.groups["bench"].assignment_epoch for m in everyone)
            and sum(len(m.owned) for m in everyone) == partitions
        ):
            break
        for m in everyone:
            heartbeats += 1
            response, _ = serve(ctx, m.request())
            m.answer(response)
            if m is not newcomer and not set(before[m.member_id]) <= set(m.owned):
                revoked.add(m.member_id)
    return {
        "members": members,
        "partitions": partitions,
        "steady_heartbeat_us": round(steady_us, 1),
        "join_heartbeat_us": round(join_us, 1),
        "heartbeats_to_settle": heartbeats,
        "members_revoked": len(revoked),
        "members_stopped": sum(1 for m in group if not m.owned),
        "partitions_moved": sum(1 for m in everyone for p in m.owned if owner_before.get(p) != m.member_id),
        "newcomer_partitions": len(newcomer.owned),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", default="10,100")
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--clients", action="store_true", help="also run real librdkafka consumers, both protocols")
    parser.add_argument("--heartbeat-ms", type=int, default=1000)
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    for n in (int(x) for x in args.members.split(",")):
        print(run(n, args.partitions, args.rounds))
    if args.clients:
        for n in (int(x) for x in args.members.split(",")):
            for protocol in ("consumer", "classic"):
                print(clients_run(protocol, n, args.partitions, args.heartbeat_ms))


# -- with real clients -------------------------------------------------------------------------------


def clients_run(protocol: str, members: int, partitions: int, heartbeat_ms: int) -> dict:
    """`members` - 1 librdkafka consumers (`group.protocol=<protocol>`) share a topic a producer keeps
    writing to; one more joins. Measured: from the newcomer's subscribe until its first record, and the
    longest gap in records among the members already there while the group takes it (against their
    longest gap before the join), separately for the members that gave partitions to the newcomer
    ("revoking") and those whose partitions did not move ("untouched"). librdkafka pauses the fetchers
    of all of a member's partitions while it revokes any (its incremental rebalance), drops what it had
    prefetched, and resumes fetching at its broker thread's next wake-up (up to about 1 s), so the zero
    pause is for untouched members only; with 100 partitions every member gives one up."""
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from tests.integration.broker import BrokerProcess

    env = {
        "TRAFKA_GROUPS_CONSUMER_HEARTBEAT_INTERVAL_MS": str(heartbeat_ms),
        "TRAFKA_GROUPS_INITIAL_REBALANCE_DELAY_MS": "0",
    }
    broker = BrokerProcess(["--memory"], env=env).start()
    stop = threading.Event()
    try:
        bootstrap = broker.bootstrap
        admin = AdminClient({"bootstrap.servers": bootstrap})  # referenced until the result is in
        admin.create_topics([NewTopic("bench", partitions, 1)])["bench"].result(10)

        def produce() -> None:
            producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "log_level": 0})
            n = 0
            while not stop.is_set():
                producer.produce("bench", value=b"x" * 100, partition=n % partitions)
                n += 1
                if n % 200 == 0:
                    producer.poll(0)
                    time.sleep(0.01)
            producer.flush(5)

        def consumer() -> Consumer:
            conf = {
                "bootstrap.servers": bootstrap,
                "group.id": "bench",
                "group.protocol": protocol,
                "auto.offset.reset": "latest",
                "log_level": 0,
            }
            if protocol == "classic":
                conf["heartbeat.interval.ms"] = heartbeat_ms
                conf["partition.assignment.strategy"] = "cooperative-sticky"
            return Consumer(conf)

        threading.Thread(target=produce, daemon=True).start()
        group = [consumer() for _ in range(members - 1)]
        for c in group:
            c.subscribe(["bench"])
        last: dict[int, float] = {}
        gaps: dict[int, float] = {}

        def poll_all(until: float, measure: bool) -> None:
            while time.monotonic() < until:
                for i, c in enumerate(group):
                    m = c.poll(0)
                    now = time.monotonic()
                    if m is not None and not m.error():
                        if measure and i in last:
                            gaps[i] = max(gaps.get(i, 0.0), now - last[i])
                        last[i] = now
                time.sleep(0.001)

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and sum(len(c.assignment()) for c in group) < partitions:
            poll_all(time.monotonic() + 0.2, False)
        poll_all(time.monotonic() + 3, True)
        gap_before = max(gaps.values(), default=0.0)
        gaps.clear()
        held = [{tp.partition for tp in c.assignment()} for c in group]
        newcomer = consumer()
        joined = time.monotonic()
        newcomer.subscribe(["bench"])
        first = None
        while time.monotonic() < joined + 60 and first is None:
            m = newcomer.poll(0.01)
            if m is not None and not m.error():
                first = time.monotonic() - joined
            poll_all(time.monotonic() + 0.01, True)
        poll_all(time.monotonic() + 2 * heartbeat_ms / 1000, True)
        revoking = [i for i, c in enumerate(group) if held[i] - {tp.partition for tp in c.assignment()}]
        untouched = [i for i in range(len(group)) if i not in revoking]
        result = {
            "protocol": protocol,
            "members": members,
            "partitions": partitions,
            "heartbeat_ms": heartbeat_ms,
            "newcomer_first_record_s": None if first is None else round(first, 3),
            "others_longest_gap_before_s": round(gap_before, 3),
            "others_longest_gap_during_s": round(max(gaps.values(), default=0.0), 3),
            "revoking_members": len(revoking),
            "revoking_longest_gap_during_s": round(max((gaps.get(i, 0.0) for i in revoking), default=0.0), 3),
            "untouched_members": len(untouched),
            "untouched_longest_gap_during_s": round(max((gaps.get(i, 0.0) for i in untouched), default=0.0), 3),
        }
        for c in [*group, newcomer]:
            c.close()
        return result
    finally:
        stop.set()
        broker.stop()


if __name__ == "__main__":
    main()
