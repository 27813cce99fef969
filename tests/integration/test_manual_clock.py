"""The manual clock (`clock="manual"`): the broker's deadlines pass only when the test advances it,
and at once when it does; the clients and the network stay on real time."""

from __future__ import annotations

import queue
import socket
import struct
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

import trafka
from tests.waiting import eventually, throughout

from .clients import TIMEOUT, client_log_fixture

client_log = client_log_fixture("trafka.tests.manual_clock", autouse=True)

SESSION_TIMEOUT_MS = 45000

# A group member in a process of its own, so that it can be killed: no LeaveGroup, no more heartbeats.
_MEMBER = textwrap.dedent(
    """
    import sys
    from confluent_kafka import Consumer
    consumer = Consumer({
        "bootstrap.servers": sys.argv[1], "group.id": "g", "session.timeout.ms": 45000,
        "heartbeat.interval.ms": 500, "auto.offset.reset": "earliest",
    })
    consumer.subscribe(["t"], on_assign=lambda c, ps: print("assigned", len(ps), flush=True))
    while True:
        consumer.poll(0.2)
    """
)


def _first_line(process: subprocess.Popen, timeout: float) -> bytes:
    """The process's first line of output, or b"" if none comes within `timeout` seconds."""
    lines: queue.Queue[bytes] = queue.Queue()
    assert process.stdout is not None
    threading.Thread(target=lambda: lines.put(process.stdout.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        return b""


def _assignment(consumer: Consumer, until, timeout: float = TIMEOUT) -> set[int]:
    """Poll until `until(partitions)` holds; the partitions assigned then."""

    def satisfied() -> set[int] | None:
        consumer.poll(0.2)
        assigned = {tp.partition for tp in consumer.assignment()}
        return assigned if until(assigned) else None

    return eventually(satisfied, timeout, what="the assignment", interval=0, state=consumer.assignment)


def test_a_killed_members_partitions_move_right_after_the_session_timeout_is_advanced_past():
    with trafka.Broker(clock="manual", topics={"t": 2}) as broker:
        member = subprocess.Popen([sys.executable, "-c", _MEMBER, broker.bootstrap_servers], stdout=subprocess.PIPE)
        try:
            assert _first_line(member, TIMEOUT).startswith(b"assigned")
            survivor = Consumer(
                {
                    "bootstrap.servers": broker.bootstrap_servers,
                    "group.id": "g",
                    "session.timeout.ms": SESSION_TIMEOUT_MS,
                    "heartbeat.interval.ms": 500,
                }
            )
            survivor.subscribe(["t"])
            assert _assignment(survivor, lambda ps: len(ps) == 1) in ({0}, {1})  # one partition each
        finally:
            member.kill()  # SIGKILL: no LeaveGroup
            member.wait(10)
        # Real seconds pass (the survivor heartbeats), the broker's clock does not: nothing moves.
        began = time.monotonic()
        throughout(lambda: survivor.poll(0.2), 2.0)
        assert len(survivor.assignment()) == 1
        broker.advance(SESSION_TIMEOUT_MS / 1000 + 1)  # advance(46)
        assert _assignment(survivor, lambda ps: ps == {0, 1}) == {0, 1}
        assert time.monotonic() - began < SESSION_TIMEOUT_MS / 1000  # well within the real timeout
        survivor.close()


def test_a_retention_of_an_hour_empties_a_topic_after_two_hours_are_advanced():
    with trafka.Broker(clock="manual") as broker:
        broker.create_topic("t", 1, {"retention.ms": str(3600_000)})
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0})
        for i in range(3):
            producer.produce("t", b"%d" % i)
        assert producer.flush(TIMEOUT) == 0
        assert len(broker.records("t")) == 3
        broker.advance(1800)  # half an hour: still within retention
        assert len(broker.records("t")) == 3
        broker.advance(7200)
        assert broker.records("t") == []
        producer.produce("t", b"new")  # the log goes on from where it was
        assert producer.flush(TIMEOUT) == 0
        assert [(r.offset, r.value) for r in broker.records("t")] == [(3, b"new")]


def test_advance_needs_a_manual_clock_and_only_moves_forwards():
    with trafka.Broker() as broker:
        with pytest.raises(trafka.testing.BrokerError, match='clock="manual"'):
            broker.advance(1)
    with trafka.Broker(clock="manual") as broker:
        start = broker.now_ms()
        time.sleep(0.05)
        assert broker.now_ms() == start  # real time passing does not move it
        assert broker.advance(1.5) == start + 1500 == broker.now_ms()
        with pytest.raises(trafka.testing.BrokerError, match="only moves forwards"):
            broker.advance(-1)


def test_an_open_transaction_is_aborted_right_after_its_timeout_is_advanced_past():
    with trafka.Broker(clock="manual", topics={"t": 1}) as broker:
        producer = Producer(
            {"bootstrap.servers": broker.bootstrap_servers, "transactional.id": "tx", "transaction.timeout.ms": 60000}
        )
        producer.init_transactions(TIMEOUT)
        producer.begin_transaction()
        producer.produce("t", b"open")
        assert producer.flush(TIMEOUT) == 0
        reader = Consumer(
            {"bootstrap.servers": broker.bootstrap_servers, "group.id": "r", "isolation.level": "read_committed"}
        )

        def last_stable_offset() -> int:
            return reader.get_watermark_offsets(TopicPartition("t", 0), timeout=TIMEOUT, cached=False)[1]

        assert last_stable_offset() == 0  # the open transaction holds it
        broker.advance(30)
        assert last_stable_offset() == 0
        broker.advance(31)  # 61 s: past transaction.timeout.ms, the coordinator aborts it
        assert last_stable_offset() == 2  # the record and the abort marker
        with pytest.raises(KafkaException):
            producer.commit_transaction(TIMEOUT)  # fenced: its transaction was aborted
        reader.close()


def _closed_within(sock, seconds: float) -> bool:
    """Whether the broker closes `sock` within `seconds` (a read returns b"" or the connection resets)."""
    sock.settimeout(seconds)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_an_idle_connection_is_closed_right_after_connections_max_idle_ms_is_advanced_past():
    with trafka.Broker(clock="manual", **{"connections.max.idle.ms": 600_000}) as broker:
        host, port = broker.bootstrap_servers.split(":")
        with socket.create_connection((host, int(port))) as sock:
            header = struct.pack(">hhih", 18, 0, 1, -1)  # ApiVersions v0, correlation id 1, no client id
            sock.sendall(struct.pack(">i", len(header)) + header)
            size = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
            assert len(sock.recv(size, socket.MSG_WAITALL)) == size  # answered: the broker read it at its "now"
            broker.advance(599)
            assert not _closed_within(sock, 0.5)  # real time passes; the broker's ten minutes have not
            broker.advance(2)
            assert _closed_within(sock, TIMEOUT)  # well before a quarter of ten real minutes
