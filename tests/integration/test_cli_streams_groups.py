"""`trafka group list|describe` for a streams group (KIP-1071): listed with type `streams`; described with
StreamsGroupDescribe as `kafka-streams-groups.sh` reads it: the task reading each source partition and
the epochs, each member's process and active and standby tasks (`--members`), the subtopologies and
their topics (`--topology`). Two Kafka Streams members on the wire (streams_wire.py)."""

from __future__ import annotations

import json
import types

import trafka

from .streams_wire import StreamsMember, settle
from .test_cli_operator import ok, one_line_error, table
from .test_cli_operator import trafka as cli


def test_a_streams_group_is_listed_and_described_with_its_tasks_and_topology():
    with trafka.Broker(topics={"lines": 2}, group_streams_num_standby_replicas=1) as broker:
        target = types.SimpleNamespace(bootstrap=broker.bootstrap_servers)
        members = [StreamsMember(broker.bootstrap_servers, m, group="wordcount") for m in ("m1", "m2")]
        settle(members)
        assert ["wordcount", "streams", "Stable"] == next(
            row[:3] for row in table(ok(cli(target, "group", "list"))) if row[0] == "wordcount"
        )

        rows = json.loads(ok(cli(target, "group", "describe", "wordcount", "-o", "json")))
        assert sorted((r["topic"], r["partition"], r["task"]) for r in rows) == [
            ("lines", 0, "0_0"),
            ("lines", 1, "0_1"),
        ]
        assert {r["consumer_id"] for r in rows} == {"m1", "m2"} and {r["type"] for r in rows} == {"streams"}
        assert all(r["lag"] is None and r["log_end_offset"] == 0 for r in rows)  # nothing committed yet

        described = json.loads(ok(cli(target, "group", "describe", "wordcount", "--members", "-o", "json")))
        by_member = {r["consumer_id"]: r for r in described}
        assert sorted(by_member) == ["m1", "m2"]
        for me, other in (("m1", "m2"), ("m2", "m1")):
            assert by_member[me]["process"] == f"process-{me}"
            assert by_member[me]["standby"] == by_member[other]["active"] != ""  # each keeps the other's copy

        (subtopology,) = json.loads(ok(cli(target, "group", "describe", "wordcount", "--topology", "-o", "json")))
        assert subtopology["source_topics"] == "lines" and subtopology["changelog_topics"] == "app-store-changelog"
        text = ok(cli(target, "group", "describe", "wordcount", "--topology"))
        assert table(text)[0] == [
            "GROUP",
            "SUBTOPOLOGY",
            "SOURCE_TOPICS",
            "REPARTITION_SINK_TOPICS",
            "CHANGELOG_TOPICS",
        ]

        one_line_error(cli(target, "group", "describe", "nope", "--topology"), 1, "nope")
