"""The operator CLI (`trafka topic|group|produce|consume|cluster`) as a user runs it: the real command
in a subprocess against a real trafka, checking output, exit codes and one-line errors."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys

import pytest
from kafka import KafkaConsumer

from tests.waiting import eventually

from .broker import BrokerProcess


@pytest.fixture(scope="module")
def cli_broker():
    broker = BrokerProcess(
        ["--memory"],
        env={"TRAFKA_GROUPS_INITIAL_REBALANCE_DELAY_MS": "0", "TRAFKA_BROKER_AUTO_CREATE_TOPICS_ENABLE": "false"},
    ).start()
    yield broker
    assert broker.stop() == 0, broker.log()


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("KAFKA_", "TRAFKA_"))}
    return {**clean, **(extra or {})}


def trafka(broker, *args: str, stdin: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trafka", *args, "-b", broker.bootstrap],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(env),
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def one_line_error(result: subprocess.CompletedProcess[str], status: int, needle: str) -> None:
    assert result.returncode == status, (result.returncode, result.stdout, result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.startswith("trafka: ")]
    assert len(errors) == 1 and needle in errors[0], result.stderr


def table(text: str) -> list[list[str]]:
    return [line.split() for line in text.strip().splitlines()]


def test_topic_lifecycle(cli_broker):
    assert (
        ok(trafka(cli_broker, "topic", "create", "orders", "-p", "2", "-c", "retention.ms=60000"))
        == "Created topic orders.\n"
    )
    assert ["orders", "2"] in table(ok(trafka(cli_broker, "topic", "list")))
    described = json.loads(ok(trafka(cli_broker, "topic", "describe", "orders", "-o", "json")))
    assert [p["partition"] for p in described[0]["partitions"]] == [0, 1]
    assert described[0]["configs"] == {"retention.ms": "60000"}
    assert described[0]["partitions"][0]["leader"] == 1 and described[0]["partitions"][0]["log_end_offset"] == 0
    text = ok(trafka(cli_broker, "topic", "describe", "orders"))
    assert "Topic: orders" in text and "Configs: retention.ms=60000" in text
    assert table(text)[1] == ["PARTITION", "LEADER", "REPLICAS", "ISR", "LOG_START_OFFSET", "LOG_END_OFFSET"]

    ok(
        trafka(
            cli_broker, "topic", "alter-config", "orders", "--set", "segment.bytes=2000000", "--delete", "retention.ms"
        )
    )
    assert json.loads(ok(trafka(cli_broker, "topic", "describe", "orders", "-o", "json")))[0]["configs"] == {
        "segment.bytes": "2000000"
    }
    ok(trafka(cli_broker, "topic", "add-partitions", "orders", "-p", "3"))
    assert ["orders", "3"] in table(ok(trafka(cli_broker, "topic", "list")))

    one_line_error(trafka(cli_broker, "topic", "create", "orders"), 1, "TOPIC_ALREADY_EXISTS")
    ok(trafka(cli_broker, "topic", "create", "orders", "--if-not-exists"))
    assert json.loads(ok(trafka(cli_broker, "topic", "delete", "orders", "-o", "json"))) == [
        {"topic": "orders", "deleted": True}
    ]
    one_line_error(trafka(cli_broker, "topic", "delete", "orders"), 1, "UNKNOWN_TOPIC_OR_PARTITION")
    ok(trafka(cli_broker, "topic", "delete", "orders", "--if-exists"))


def test_topic_errors(cli_broker):
    one_line_error(trafka(cli_broker, "topic", "describe", "missing"), 1, "topic missing: UNKNOWN_TOPIC_OR_PARTITION")
    one_line_error(
        trafka(cli_broker, "topic", "alter-config", "missing", "--set", "retention.ms=1"),
        1,
        "UNKNOWN_TOPIC_OR_PARTITION",
    )
    one_line_error(trafka(cli_broker, "topic", "create", "bad", "-c", "retention.ms"), 2, "expected KEY=VALUE")
    one_line_error(trafka(cli_broker, "topic", "create", "bad", "-c", "no.such.config=1"), 1, "INVALID_CONFIG")
    ok(trafka(cli_broker, "topic", "create", "small", "-p", "2"))
    one_line_error(trafka(cli_broker, "topic", "add-partitions", "small", "-p", "1"), 1, "INVALID_PARTITIONS")
    one_line_error(
        trafka(cli_broker, "topic", "alter-config", "small", "--set", "retention.ms=soon"), 1, "INVALID_CONFIG"
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_broker_that_is_down_is_exit_3_in_one_line():
    down = f"127.0.0.1:{_free_port()}"
    for command in (["topic", "list"], ["group", "list"], ["cluster", "info"], ["consume", "t", "-n", "1"]):
        result = subprocess.run(
            [sys.executable, "-m", "trafka", *command, "-b", down, "--timeout", "1"],
            capture_output=True,
            text=True,
            timeout=60,
            env=_env(),
        )
        one_line_error(result, 3, f"no broker answered at {down}")


def test_the_bootstrap_comes_from_trafka_bootstrap(cli_broker):
    result = subprocess.run(
        [sys.executable, "-m", "trafka", "cluster", "info", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env({"TRAFKA_BOOTSTRAP": cli_broker.bootstrap}),
    )
    info = json.loads(ok(result))
    assert info["controller_id"] == 1 and info["brokers"][0]["port"] == cli_broker.port
    text = ok(trafka(cli_broker, "cluster", "info"))
    assert text.startswith("Cluster: trafka-cluster-0000000  Controller: 1")


def test_produce_and_consume_keys_headers_formats_and_offsets(cli_broker):
    ok(trafka(cli_broker, "topic", "create", "lines", "-p", "1"))
    produced = ok(
        trafka(
            cli_broker,
            "produce",
            "lines",
            "-k",
            ":",
            "-H",
            "src=cli",
            "-H",
            "n=1",
            "-o",
            "json",
            stdin="a:1\nb:2\nc:3:x\n",
        )
    )
    assert [json.loads(line)["offset"] for line in produced.splitlines()] == [0, 1, 2]
    text = ok(
        trafka(
            cli_broker,
            "consume",
            "lines",
            "--from-beginning",
            "-n",
            "3",
            "-f",
            "{partition} {offset} {key}={value} {headers}",
        )
    )
    assert text.splitlines() == [
        "0 0 a=1 {'src': 'cli', 'n': '1'}",
        "0 1 b=2 {'src': 'cli', 'n': '1'}",
        "0 2 c=3:x {'src': 'cli', 'n': '1'}",
    ]
    records = [
        json.loads(line)
        for line in ok(
            trafka(cli_broker, "consume", "lines", "-p", "0", "--offset", "1", "--timeout-ms", "1000", "-o", "json")
        ).splitlines()
    ]
    assert [(r["offset"], r["key"], r["value"]) for r in records] == [(1, "b", "2"), (2, "c", "3:x")]
    assert records[0]["timestamp"] > 0 and records[0]["topic"] == "lines"
    # Without -o json it says what it did, as a person reads it (it printed nothing before).
    assert (
        ok(trafka(cli_broker, "produce", "lines", stdin="no key\n"))
        == "produced 1 record to lines (partition 0 at offset 3)\n"
    )
    assert (
        ok(trafka(cli_broker, "consume", "lines", "-p", "0", "--offset", "3", "-n", "1", "-f", "{key}|{value}"))
        == "null|no key\n"
    )
    assert ok(trafka(cli_broker, "consume", "lines", "--timeout-ms", "500")) == ""  # from the end: nothing new


def test_produce_and_consume_errors(cli_broker):
    one_line_error(
        trafka(cli_broker, "produce", "lines-missing", "--timeout", "2", stdin="x\n"), 1, "UNKNOWN_TOPIC_OR_PARTITION"
    )
    ok(trafka(cli_broker, "topic", "create", "errs"))
    one_line_error(trafka(cli_broker, "produce", "errs", "-k", ":", stdin="nokey\n"), 2, "line 1: no key separator")
    one_line_error(trafka(cli_broker, "consume", "missing", "-n", "1"), 1, "topic missing does not exist")
    one_line_error(
        trafka(cli_broker, "consume", "errs", "-p", "0", "--offset", "soon", "-n", "1"), 2, "--offset 'soon'"
    )
    one_line_error(trafka(cli_broker, "consume", "errs", "--offset", "3", "-n", "1"), 2, "--offset needs --partition")
    one_line_error(trafka(cli_broker, "consume", "errs", "-p", "7", "-n", "1"), 1, "no partition 7")


def test_consume_follows_until_ctrl_c(cli_broker):
    ok(trafka(cli_broker, "topic", "create", "follow"))
    follower = subprocess.Popen(
        [sys.executable, "-m", "trafka", "consume", "follow", "--from-beginning", "-b", cli_broker.bootstrap],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        ok(trafka(cli_broker, "produce", "follow", stdin="first\n"))
        assert follower.stdout.readline() == "first\n"
        ok(trafka(cli_broker, "produce", "follow", stdin="second\n"))
        assert follower.stdout.readline() == "second\n"
        follower.send_signal(signal.SIGINT)
        assert follower.wait(30) == 0
        assert "Processed a total of 2 messages" in follower.stderr.read()
    finally:
        if follower.poll() is None:
            follower.kill()


def _committed_group(cli_broker, group: str, topic: str, count: int) -> None:
    ok(trafka(cli_broker, "topic", "create", topic, "-p", "2"))
    ok(trafka(cli_broker, "produce", topic, "-p", "0", stdin="".join(f"{i}\n" for i in range(6))))
    ok(trafka(cli_broker, "produce", topic, "-p", "1", stdin="x\n"))
    consumed = ok(trafka(cli_broker, "consume", topic, "-g", group, "--from-beginning", "-n", str(count)))
    assert len(consumed.splitlines()) == count


def test_group_describe_shows_members_offsets_and_lag(cli_broker):
    _committed_group(cli_broker, "readers", "events", 7)
    ok(trafka(cli_broker, "produce", "events", "-p", "0", stdin="late\n"))
    assert ["readers", "classic", "Empty", "consumer"] in table(ok(trafka(cli_broker, "group", "list")))
    rows = table(ok(trafka(cli_broker, "group", "describe", "readers")))
    assert rows[0] == [
        "GROUP",
        "TOPIC",
        "PARTITION",
        "CURRENT_OFFSET",
        "LOG_END_OFFSET",
        "LAG",
        "CONSUMER_ID",
        "HOST",
        "CLIENT_ID",
    ]
    assert rows[1:] == [
        ["readers", "events", "0", "6", "7", "1", "-", "-", "-"],
        ["readers", "events", "1", "1", "1", "0", "-", "-", "-"],
    ]

    member = KafkaConsumer(
        "events",
        bootstrap_servers=cli_broker.bootstrap,
        group_id="readers",
        client_id="watcher",
        enable_auto_commit=False,
    )
    try:
        eventually(lambda: member.poll(200) or member.assignment(), 20, what="the member's assignment", interval=0)
        described = json.loads(ok(trafka(cli_broker, "group", "describe", "readers", "-o", "json")))
        assert {(r["partition"], r["client_id"], r["host"]) for r in described} == {
            (0, "watcher", "/127.0.0.1"),  # as kafka-consumer-groups prints Kafka's member host
            (1, "watcher", "/127.0.0.1"),
        }
        assert all(r["consumer_id"].startswith("watcher") for r in described)
        one_line_error(
            trafka(cli_broker, "group", "reset-offsets", "readers", "--all-topics", "--to-earliest"),
            1,
            "can only be reset while it is inactive",
        )
        one_line_error(trafka(cli_broker, "group", "delete", "readers"), 1, "NON_EMPTY_GROUP")
    finally:
        member.close()
    one_line_error(trafka(cli_broker, "group", "describe", "nobody"), 1, "group nobody does not exist")


def _offsets(cli_broker, group: str) -> dict[int, int]:
    return {
        r["partition"]: r["current_offset"]
        for r in json.loads(ok(trafka(cli_broker, "group", "describe", group, "-o", "json")))
    }


def test_reset_offsets_is_a_dry_run_unless_executed(cli_broker):
    _committed_group(cli_broker, "resetters", "resets", 7)
    plan = json.loads(
        ok(trafka(cli_broker, "group", "reset-offsets", "resetters", "--all-topics", "--to-earliest", "-o", "json"))
    )
    assert [(r["partition"], r["new_offset"], r["executed"]) for r in plan] == [(0, 0, False), (1, 0, False)]
    assert _offsets(cli_broker, "resetters") == {0: 6, 1: 1}

    ok(
        trafka(
            cli_broker, "group", "reset-offsets", "resetters", "--topic", "resets:0", "--shift-by", "-2", "--execute"
        )
    )
    assert _offsets(cli_broker, "resetters") == {0: 4, 1: 1}
    ok(
        trafka(
            cli_broker, "group", "reset-offsets", "resetters", "--topic", "resets", "--to-offset", "100", "--execute"
        )
    )
    assert _offsets(cli_broker, "resetters") == {0: 6, 1: 1}  # clamped to the log end, as Kafka's tool does
    ok(
        trafka(
            cli_broker,
            "group",
            "reset-offsets",
            "resetters",
            "--all-topics",
            "--to-datetime",
            "2000-01-01T00:00:00.000",
            "--execute",
        )
    )
    assert _offsets(cli_broker, "resetters") == {0: 0, 1: 0}
    ok(trafka(cli_broker, "group", "reset-offsets", "resetters", "--all-topics", "--to-latest", "--execute"))
    assert _offsets(cli_broker, "resetters") == {0: 6, 1: 1}
    ok(
        trafka(
            cli_broker,
            "group",
            "reset-offsets",
            "resetters",
            "--all-topics",
            "--to-datetime",
            "2999-01-01T00:00:00+01:00",
            "--execute",
        )
    )
    assert _offsets(cli_broker, "resetters") == {0: 6, 1: 1}

    one_line_error(
        trafka(cli_broker, "group", "reset-offsets", "resetters", "--all-topics", "--to-datetime", "yesterday"),
        2,
        "--to-datetime 'yesterday'",
    )
    one_line_error(
        trafka(cli_broker, "group", "reset-offsets", "resetters", "--topic", "resets:a", "--to-earliest"),
        2,
        "partitions must be numbers",
    )
    one_line_error(
        trafka(cli_broker, "group", "reset-offsets", "resetters", "--topic", "missing", "--to-earliest"),
        1,
        "topic missing does not exist",
    )
    assert (
        trafka(cli_broker, "group", "reset-offsets", "resetters", "--all-topics").returncode == 2
    )  # no mode: argparse

    assert json.loads(ok(trafka(cli_broker, "group", "delete", "resetters", "-o", "json"))) == [
        {"group": "resetters", "deleted": True}
    ]
    one_line_error(trafka(cli_broker, "group", "describe", "resetters"), 1, "does not exist")
