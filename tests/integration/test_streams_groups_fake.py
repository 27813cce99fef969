"""Streams groups in the fake (`trafka.Broker`): `broker.assignment(group)` and `broker.streams_tasks(group)`
show a streams group's tasks, and the manual clock expires a streams member that stopped heartbeating
(a killed Kafka Streams instance) the moment the test advances past its session timeout. The members
are StreamsGroupHeartbeat v0 requests on the wire, as Kafka Streams 4.2 sends them."""

from __future__ import annotations

import pytest

import trafka

from .streams_wire import SESSION_S, StreamsMember, settle

pytestmark = pytest.mark.integration


def test_the_fake_shows_streams_tasks_and_its_manual_clock_expires_a_silent_member():
    with trafka.Broker(clock="manual", topics={"lines": 4}, group_streams_num_standby_replicas=1) as broker:
        first, second = StreamsMember(broker.bootstrap_servers, "m1"), StreamsMember(broker.bootstrap_servers, "m2")
        settle([first])
        assert broker.assignment("app") == {"m1": {("0", p) for p in range(4)}}
        settle([first, second])
        split = broker.assignment("app")
        assert sorted(len(tasks) for tasks in split.values()) == [2, 2] and not split["m1"] & split["m2"]
        tasks = broker.streams_tasks("app")
        # the standby copy of each task is on the other instance's process
        assert tasks["m1"]["standby"] == tasks["m2"]["active"] and tasks["m2"]["standby"] == tasks["m1"]["active"]

        # m2 is killed: no leave heartbeat, no more heartbeats. Real time passing moves nothing.
        broker.advance(SESSION_S - 15)
        first.heartbeat()  # m1 is alive: its session now ends 45 s from here
        assert set(broker.assignment("app")) == {"m1", "m2"}
        broker.advance(16)  # past m2's deadline, not m1's
        assert set(broker.assignment("app")) == {"m1"}
        settle([first])
        assert broker.assignment("app") == {"m1": {("0", p) for p in range(4)}}
        assert broker.streams_tasks("app")["m1"]["standby"] == set()  # no other process to keep copies on
        with pytest.raises(trafka.testing.BrokerError, match="no streams group"):
            broker.streams_tasks("nope")


def test_a_streams_group_in_a_log_dir_is_restored_at_start_and_a_broker_without_one_builds_none(tmp_path):
    """ADR 110: the streams coordinator is built at the first streams group request, or at start when the
    log dir holds streams groups (their sessions then run from the start, as Kafka's coordinator loads)."""
    with trafka.Broker(data_dir=str(tmp_path), topics={"lines": 2}) as broker:
        assert broker._running.ctx.services.groups._streams is None  # nothing asked for streams groups yet
        settle([StreamsMember(broker.bootstrap_servers, "m1")])
        assert broker.assignment("app") == {"m1": {("0", 0), ("0", 1)}}
    with trafka.Broker(data_dir=str(tmp_path)) as broker:
        assert broker._running.ctx.services.groups._streams is not None
        assert broker.assignment("app") == {"m1": {("0", 0), ("0", 1)}}
