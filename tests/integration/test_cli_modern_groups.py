"""`trafka group list|describe|reset-offsets|delete` against a real broker for the groups that are not
classic: a share group driven by confluent-kafka's ShareConsumer (ShareGroupDescribe and
DescribeShareGroupOffsets: start offset, lag, members; AlterShareGroupOffsets for a reset) and a KIP-848
consumer group (`group.protocol=consumer`)."""

from __future__ import annotations

import json

import pytest
from confluent_kafka import AcknowledgeType, Consumer, ShareConsumer, TopicPartition
from confluent_kafka.admin import ConfigResource, ResourceType

from .broker import BrokerProcess
from .clients import client_log_fixture, confluent_admin, create_topic, unique
from .groups_helpers import TIMEOUT, produce, wait_until
from .test_cli_operator import ok, one_line_error, table, trafka

logger = client_log_fixture("trafka.tests.cli_modern_groups")


@pytest.fixture(scope="module")
def broker():
    process = BrokerProcess(["--memory"], env={"TRAFKA_GROUPS_SHARE_HEARTBEAT_INTERVAL_MS": "300"}).start()
    yield process
    assert process.stop() == 0, process.log()


def describe(broker, group: str) -> list[dict]:
    return list(json.loads(ok(trafka(broker, "group", "describe", group, "-o", "json"))))


def test_a_share_group_is_listed_described_reset_and_deleted(broker, logger):
    topic, group = unique("jobs"), unique("sg")
    create_topic(broker.bootstrap, topic, 1, logger=logger)
    produce(broker.bootstrap, topic, [0], 8, logger=logger)
    ok(trafka(broker, "group", "alter-config", group, "--set", "share.auto.offset.reset=earliest"))
    member = ShareConsumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "logger": logger,
            "group.id": group,
            "share.acknowledgement.mode": "explicit",
            "max.poll.records": 4,
        }
    )
    got: list[int] = []
    try:
        member.subscribe([topic])

        def poll() -> None:
            for m in member.poll(0.2) or []:
                if m.error() is None and len(got) < 4:
                    got.append(m.offset())
                    member.acknowledge(m, AcknowledgeType.REJECT if m.offset() == 1 else AcknowledgeType.ACCEPT)

        wait_until(lambda: len(got) >= 4, "four records", step=poll, state=lambda: got)
        member.commit_sync()
        assert [group, "share", "Stable", "share"] in table(ok(trafka(broker, "group", "list")))
        (row,) = describe(broker, group)
        assert {k: row[k] for k in ("topic", "partition", "start_offset", "log_end_offset", "lag", "members")} == {
            "topic": topic,
            "partition": 0,
            "start_offset": 4,  # 0-3 done (1 rejected: archived)
            "log_end_offset": 8,
            "lag": 4,
            "members": 1,
        }
        assert (row["type"], row["assignor"], row["state"]) == ("share", "simple", "Stable")
        header, line = table(ok(trafka(broker, "group", "describe", group)))
        assert header == [
            "GROUP",
            "TOPIC",
            "PARTITION",
            "START_OFFSET",
            "LOG_END_OFFSET",
            "LAG",
            "MEMBERS",
            "TYPE",
            "ASSIGNOR",
        ]
        assert line == [group, topic, "0", "4", "8", "4", "1", "share", "simple"]
        (described,) = json.loads(ok(trafka(broker, "group", "describe", group, "--members", "-o", "json")))
        assert (described["assignment"], described["partitions"], described["type"]) == (f"{topic}-0", 1, "share")
        assert described["member_epoch"] >= 1 and described["consumer_id"]
        one_line_error(
            trafka(broker, "group", "reset-offsets", group, "--all-topics", "--to-latest", "--execute"), 1, "inactive"
        )
        one_line_error(trafka(broker, "group", "delete", group), 1, group)
    finally:
        member.close()

    wait_until(lambda: describe(broker, group)[0]["state"] == "Empty", "the member gone")
    dry = json.loads(ok(trafka(broker, "group", "reset-offsets", group, "--all-topics", "--to-latest", "-o", "json")))
    assert [(r["partition"], r["new_offset"], r["executed"]) for r in dry] == [(0, 8, False)]
    assert describe(broker, group)[0]["start_offset"] == 4  # a dry run
    ok(trafka(broker, "group", "reset-offsets", group, "--topic", topic, "--to-offset", "6", "--execute"))
    (row,) = describe(broker, group)
    assert (row["start_offset"], row["lag"], row["members"]) == (6, 2, 0)
    ok(trafka(broker, "group", "reset-offsets", group, "--all-topics", "--shift-by", "-1", "--execute"))
    assert describe(broker, group)[0]["start_offset"] == 5
    assert ok(trafka(broker, "group", "delete", group))
    assert group not in {r[0] for r in table(ok(trafka(broker, "group", "list")))}
    one_line_error(trafka(broker, "group", "describe", group), 1, "GROUP_ID_NOT_FOUND")


def test_a_kip848_consumer_group_is_reset_and_deleted(broker, logger):
    topic, group = unique("events"), unique("cg")
    create_topic(broker.bootstrap, topic, 2, logger=logger)
    produce(broker.bootstrap, topic, [0, 1], 5, logger=logger)
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "logger": logger,
            "group.id": group,
            "group.protocol": "consumer",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        consumer.subscribe([topic])
        seen: list = []
        wait_until(lambda: len(seen) >= 10, "ten records", step=lambda: seen.extend(consumer.consume(10, 0.2)))
        consumer.commit(offsets=[TopicPartition(topic, 0, 3), TopicPartition(topic, 1, 5)], asynchronous=False)
        one_line_error(
            trafka(broker, "group", "reset-offsets", group, "--all-topics", "--to-earliest", "--execute"), 1, "inactive"
        )
        (member,) = json.loads(ok(trafka(broker, "group", "describe", group, "--members", "-o", "json")))
        assert (member["assignment"], member["partitions"], member["type"]) == (f"{topic}-0,{topic}-1", 2, "consumer")
    finally:
        consumer.close()
    wait_until(lambda: describe(broker, group)[0]["state"] == "Empty", "the member gone")
    ok(trafka(broker, "group", "reset-offsets", group, "--all-topics", "--to-earliest", "--execute"))
    rows = describe(broker, group)
    assert sorted((r["partition"], r["current_offset"], r["lag"]) for r in rows) == [(0, 0, 5), (1, 0, 5)]
    assert all(r["type"] == "consumer" for r in rows)
    ok(trafka(broker, "group", "delete", group))
    assert group not in {r[0] for r in table(ok(trafka(broker, "group", "list")))}


def test_describe_members_of_a_classic_group(broker, logger):
    topic, group = unique("classic"), unique("g")
    create_topic(broker.bootstrap, topic, 2, logger=logger)
    produce(broker.bootstrap, topic, [0, 1], 2, logger=logger)
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "logger": logger, "group.id": group, "auto.offset.reset": "earliest"}
    )
    try:
        consumer.subscribe([topic])
        seen: list = []
        wait_until(lambda: len(seen) >= 4, "four records", step=lambda: seen.extend(consumer.consume(4, 0.2)))
        (member,) = json.loads(ok(trafka(broker, "group", "describe", group, "--members", "-o", "json")))
        assert (member["assignment"], member["partitions"], member["type"]) == (f"{topic}-0,{topic}-1", 2, "classic")
        header = table(ok(trafka(broker, "group", "describe", group, "--members")))[0]
        assert header == ["GROUP", "CONSUMER_ID", "HOST", "CLIENT_ID", "PARTITIONS", "ASSIGNMENT", "TYPE"]
    finally:
        consumer.close()


def test_a_groups_configs_are_set_shown_and_deleted(broker, logger):
    group = unique("configured")
    changed = table(ok(trafka(broker, "group", "alter-config", group, "--set", "share.isolation.level=read_committed")))
    assert changed == [["CONFIG", "CHANGE"], ["share.isolation.level", "set", "read_committed"]]
    ok(trafka(broker, "group", "alter-config", group, "--set", "consumer.session.timeout.ms=50000"))
    rows = json.loads(ok(trafka(broker, "group", "configs", group, "-o", "json")))
    assert [(r["config"], r["value"]) for r in rows if r["override"]] == [
        ("consumer.session.timeout.ms", "50000"),
        ("share.isolation.level", "read_committed"),
    ]
    assert rows[0]["override"] and not rows[-1]["override"]  # overrides first
    assert {r["config"] for r in rows} >= {"share.auto.offset.reset", "consumer.heartbeat.interval.ms"}
    # what confluent-kafka's admin sees (IncrementalAlterConfigs went to the GROUP resource)
    admin = confluent_admin(broker.bootstrap, logger)  # kept alive while its future runs
    (future,) = admin.describe_configs([ConfigResource(ResourceType.GROUP, group)]).values()
    assert future.result(timeout=TIMEOUT)["share.isolation.level"].value == "read_committed"
    one_line_error(
        trafka(broker, "group", "alter-config", group, "--set", "share.auto.offset.reset=whenever"), 1, "whenever"
    )
    one_line_error(trafka(broker, "group", "alter-config", group), 2, "nothing to change")
    ok(trafka(broker, "group", "alter-config", group, "--delete", "share.isolation.level"))
    rows = json.loads(ok(trafka(broker, "group", "configs", group, "-o", "json")))
    assert [r["config"] for r in rows if r["override"]] == ["consumer.session.timeout.ms"]
