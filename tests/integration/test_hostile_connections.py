"""Hostile connections (issue 27, row 8): idle ones closed, too many refused or kept waiting, and a
broker at its descriptor limit keeps serving the connections it has, as Kafka's Selector and
ConnectionQuotas do (`connections.max.idle.ms`, `max.connections.per.ip` and its overrides,
`max.connections`)."""

from __future__ import annotations

import contextlib
import socket
import time

import pytest
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse

from tests.waiting import throughout

from .broker import DATA_DIR_ENV, BrokerProcess
from .secured import secured_broker
from .wire import WireClient

METADATA_BOUND_S = 2.0


def served(client: WireClient) -> bool:
    started = time.monotonic()
    answer = client.request(MetadataRequest[1](topics=[]), MetadataResponse, 1)
    return bool(answer.brokers) and time.monotonic() - started < METADATA_BOUND_S


def closed_within(client: WireClient, seconds: float) -> bool:
    client.sock.settimeout(seconds)
    try:
        return client.is_closed_by_peer()
    except TimeoutError:
        return False


def connect_from(bootstrap: str, source: str) -> WireClient:
    host, port = bootstrap.rsplit(":", 1)
    client = WireClient.__new__(WireClient)
    client.sock = socket.create_connection((host, int(port)), timeout=10, source_address=(source, 0))
    client.correlation_id = 0
    return client


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    # Kafka's default idle time (10 min): the held connections of the limit test wait idle while the
    # refused one is watched, for up to seconds on a loaded machine.
    config = """
[server]
listeners = "PLAINTEXT://127.0.0.1:0"
max_connections_per_ip = 6
max_connections_per_ip_overrides = "127.0.0.2:1"
"""
    with secured_broker(tmp_path_factory.mktemp("hostile-connections"), config) as listeners:
        yield listeners["PLAINTEXT"]


@pytest.fixture(scope="module")
def quickly_idle(tmp_path_factory):
    config = """
[server]
listeners = "PLAINTEXT://127.0.0.1:0"
connections_max_idle_ms = 1000
"""
    with secured_broker(tmp_path_factory.mktemp("idle-connections"), config) as listeners:
        yield listeners["PLAINTEXT"]


def test_an_idle_connection_is_closed_and_an_active_one_is_kept(quickly_idle):
    with WireClient(quickly_idle["bootstrap"]) as idle, WireClient(quickly_idle["bootstrap"]) as active:

        def stays_served() -> None:
            assert served(active)

        throughout(stays_served, 2.0, interval=0.25)  # twice the idle time, active all along
        assert closed_within(idle, 3.0), "idle for connections.max.idle.ms: closed"
        assert served(active)


def test_a_connection_beyond_its_address_limit_is_closed_at_once(limited):
    broker = limited["process"]
    before = len(broker.output)
    held = [WireClient(limited["bootstrap"]) for _ in range(6)]
    try:
        extra = WireClient(limited["bootstrap"])
        assert closed_within(extra, 3.0), "the seventh from 127.0.0.1"
        extra.close()
        assert all(served(client) for client in held)
        assert broker.wait_for_lines("address already has the configured maximum of 6 connections", since=before)
        first = connect_from(limited["bootstrap"], "127.0.0.2")
        second = connect_from(limited["bootstrap"], "127.0.0.2")
        assert closed_within(second, 3.0), "127.0.0.2 may hold one (its override)"
        assert served(first)
        first.close()
        second.close()
    finally:
        for client in held:
            client.close()
    time.sleep(0.2)  # the broker sees the closes
    with WireClient(limited["bootstrap"]) as again:
        assert served(again), "closed connections give their places back"


def test_max_connections_keeps_the_next_client_waiting_until_one_closes(tmp_path):
    config = """
[server]
listeners = "PLAINTEXT://127.0.0.1:0"
max_connections = 2
"""
    with secured_broker(tmp_path, config) as listeners:
        bootstrap = listeners["PLAINTEXT"]["bootstrap"]
        first, second = WireClient(bootstrap), WireClient(bootstrap)
        assert served(first) and served(second)
        waiting = WireClient(bootstrap)  # taken by the kernel's backlog, not by the broker
        waiting.send(ApiVersionsRequest[0](), 0)
        waiting.sock.settimeout(1.0)
        with pytest.raises(TimeoutError):
            waiting.sock.recv(1, socket.MSG_PEEK)
        assert served(first), "the connections open are still served"
        second.close()
        waiting.sock.settimeout(5.0)
        assert waiting.receive(ApiVersionsResponse, 0).error_code == 0
        first.close()
        waiting.close()


def test_a_broker_at_its_descriptor_limit_serves_its_connections_and_says_so_once(tmp_path):
    broker = BrokerProcess(
        ["--data-dir", str(tmp_path / "data")], env=DATA_DIR_ENV, prefix=["prlimit", "--nofile=64:64", "--"]
    ).start()
    try:
        witness = WireClient(broker.bootstrap)
        assert served(witness)
        crowd = []
        with contextlib.ExitStack() as stack:
            for _ in range(80):  # more than the broker has descriptors for
                crowd.append(stack.enter_context(WireClient(broker.bootstrap)))
            assert broker.wait_for_lines("cannot accept connections")
            time.sleep(0.5)  # the accept loop retries meanwhile
            assert served(witness)
            assert len([line for line in broker.output if "cannot accept connections" in line]) == 1
        assert broker.wait_for_lines("accepts connections again", timeout=10)
        with WireClient(broker.bootstrap) as fresh:
            assert served(fresh)
        witness.close()
    finally:
        assert broker.stop() == 0, broker.log()
