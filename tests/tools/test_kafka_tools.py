"""Kafka's own tools against trafka, as an operator types them, and against Apache Kafka (ADR 66).

The same steps run against both brokers (the session's Apache Kafka and a trafka on a filesystem
store, configured from the same server properties), each tool one JVM as `kafka-*.sh` starts it; each
step's output, normalised (`kafka_tools.normalise`: addresses, ids, wall-clock times, table padding),
must be equal. Where trafka differs on purpose, the step's normaliser says why, next to it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.integration.streams_wire import StreamsMember, settle, stateless_topology
from tests.kafka.reference import server_properties, write_properties
from tests.waiting import eventually

from . import kafka_tools
from .kafka_tools import normalise, run

# The steps are one JVM each, about 120 of them (both brokers, two at a time), run by the module's
# first test: minutes on a loaded machine.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]


def _trafka_properties(path: Path) -> None:
    """The Apache Kafka fixture's server properties, less what is about its listeners, SASL and
    controller: trafka serves a PLAINTEXT listener and a SASL_PLAINTEXT one with both SCRAMs (the
    delegation tokens' steps log in there)."""
    config = server_properties(path.parent / "unused", {"PLAINTEXT": 0, "CONTROLLER": 0, "SASL_PLAINTEXT": 0}, True)
    foreign = ("listener", "advertised", "controller", "sasl", "inter.broker", "process.roles", "log.dirs")
    own = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
        "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
    }
    write_properties(path, {**{key: value for key, value in config.items() if not key.startswith(foreign)}, **own})


class Trafka:
    def __init__(self, folder: Path) -> None:
        self.log_dir = folder / "data"
        properties = folder / "server.properties"
        _trafka_properties(properties)
        ready = folder / "ready.json"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "trafka", "serve"]
            + ["--data-dir", str(self.log_dir), "--ready-file", str(ready), str(properties)],
            stdout=subprocess.DEVNULL,
            stderr=open(folder / "trafka.log", "wb"),
        )
        log = folder / "trafka.log"
        eventually(lambda: ready.exists() or self.process.poll() is not None, 60, what="trafka's ready file")
        assert ready.exists(), log.read_text()
        listeners = json.loads(ready.read_text())["listeners"]
        self.bootstrap = f"127.0.0.1:{listeners['PLAINTEXT']['port']}"
        self.sasl = f"127.0.0.1:{listeners['SASL_PLAINTEXT']['port']}"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


def scenario(bootstrap: str, sasl: str, log_dir: Path, prefix: str, work: Path, now_ms: int) -> dict[str, str]:
    """The operator's steps, in order, with each tool's output by step name."""
    b = ["--bootstrap-server", bootstrap]
    topic, copied = f"{prefix}-a", f"{prefix}-copied"
    group, share, user, client, txn = f"{prefix}-g", f"{prefix}-s", f"{prefix}-u", f"{prefix}-c", f"{prefix}-x"
    out: dict[str, str] = {}

    def step(name: str, tool: str, *args: str) -> str:
        out[name] = run(tool, *args)
        (work / "outputs.json").write_text(json.dumps(out, indent=1))  # what ran so far, when one step hangs
        return out[name]

    topics = ("kafka-topics", *b)
    step(
        "topics create",
        *topics,
        "--create",
        "--topic",
        topic,
        "--partitions",
        "2",
        "--replication-factor",
        "1",
        "--config",
        "retention.ms=86400000",
    )
    step("topics create again", *topics, "--create", "--topic", topic, "--partitions", "2")
    step("topics alter", *topics, "--alter", "--topic", topic, "--partitions", "3")
    step("topics describe", *topics, "--describe", "--topic", topic)
    for name in (copied,):
        run(*topics, "--create", "--topic", name, "--partitions", "1", "--replication-factor", "1")
    listed = run(*topics, "--list")
    out["topics list"] = "\n".join(line for line in listed.splitlines() if line.startswith(prefix))

    step(
        "verifiable-producer",
        "kafka-verifiable-producer",
        *b,
        "--topic",
        topic,
        "--max-messages",
        "30",
        "--acks",
        "-1",
        "--repeating-keys",
        "6",
        "--message-create-time",  # now: within retention.ms, which Kafka enforces on the active segment too
        str(int(time.time() * 1000)),
        "--value-prefix",
        "7",
    )
    step("get-offsets", "kafka-get-offsets", *b, "--topic", topic)
    events = run(
        "kafka-verifiable-consumer",
        *b,
        "--topic",
        topic,
        "--group-id",
        group,
        "--max-messages",
        "30",
        "--reset-policy",
        "earliest",
    )
    out["verifiable-consumer"] = _consumer_summary(events)
    # the same through the KIP-848 protocol (group.protocol=consumer), for its records in __consumer_offsets
    events = run(
        "kafka-verifiable-consumer",
        *b,
        "--topic",
        topic,
        "--group-id",
        f"{prefix}-m",
        "--group-protocol",
        "consumer",
        "--max-messages",
        "30",
        "--reset-policy",
        "earliest",
    )
    out["verifiable-consumer consumer protocol"] = _consumer_summary(events)
    _streams_group(bootstrap, f"{prefix}-st", topic)

    groups = ("kafka-consumer-groups", *b)
    step("consumer-groups describe", *groups, "--describe", "--group", group)
    step("consumer-groups describe state", *groups, "--describe", "--group", group, "--state")
    step(
        "consumer-groups reset",
        *groups,
        "--reset-offsets",
        "--group",
        group,
        "--topic",
        f"{topic}:0",
        "--to-offset",
        "2",
        "--execute",
    )
    listed = run(*groups, "--list")
    out["consumer-groups list"] = "\n".join(line for line in listed.splitlines() if line.startswith(prefix))
    step("consumer-groups delete", *groups, "--delete", "--group", group)

    configs = ("kafka-configs", *b)
    step(
        "configs topic alter",
        *configs,
        "--entity-type",
        "topics",
        "--entity-name",
        topic,
        "--alter",
        "--add-config",
        "max.message.bytes=65536,cleanup.policy=[compact,delete]",
    )
    step("configs topic describe", *configs, "--entity-type", "topics", "--entity-name", topic, "--describe")
    step(
        "configs topic bad",
        *configs,
        "--entity-type",
        "topics",
        "--entity-name",
        topic,
        "--alter",
        "--add-config",
        "retention.ms=soon",
    )
    # The broker's own dynamic config, set to the value it has anyway (the Kafka is the session's).
    step(
        "configs broker alter",
        *configs,
        "--entity-type",
        "brokers",
        "--entity-name",
        "1",
        "--alter",
        "--add-config",
        "log.flush.interval.ms=9223372036854775807",
    )
    # Kafka's broker applies a dynamic config when it reads it from the metadata log, a moment later
    described = eventually(
        lambda: _with(
            run(*configs, "--entity-type", "brokers", "--entity-name", "1", "--describe"),
            "log.flush.interval.ms=9223372036854775807 ",
        ),
        30,
        what="the broker's dynamic config",
        interval=0.5,
    )
    out["configs broker describe"] = "\n".join(
        line for line in described.splitlines() if "log.flush.interval.ms" in line or line.startswith("Dynamic")
    )
    step(
        "configs broker delete",
        *configs,
        "--entity-type",
        "brokers",
        "--entity-name",
        "1",
        "--alter",
        "--delete-config",
        "log.flush.interval.ms",
    )
    step(
        "configs group alter",
        *configs,
        "--entity-type",
        "groups",
        "--entity-name",
        group,
        "--alter",
        "--add-config",
        "consumer.session.timeout.ms=50000",
    )
    step("configs group describe", *configs, "--entity-type", "groups", "--entity-name", group, "--describe")
    step(
        "configs client alter",
        *configs,
        "--entity-type",
        "clients",
        "--entity-name",
        client,
        "--alter",
        "--add-config",
        "producer_byte_rate=1024,consumer_byte_rate=2048",
    )
    time.sleep(1)  # Kafka's brokers learn quotas from the metadata log, a moment after the controller
    step("configs client describe", *configs, "--entity-type", "clients", "--entity-name", client, "--describe")
    # A SCRAM credential and a quota apart: the tool refuses both in one --alter (its own check, before any
    # request: asked together, both brokers only ever showed that message and an empty describe).
    user_alter = (*configs, "--entity-type", "users", "--entity-name", user, "--alter", "--add-config")
    step("configs user alter", *user_alter, "SCRAM-SHA-256=[iterations=8192,password=pw]")
    step("configs user quota alter", *user_alter, "producer_byte_rate=4096")
    time.sleep(1)
    step("configs user describe", *configs, "--entity-type", "users", "--entity-name", user, "--describe")
    _delegation_tokens(step, configs, bootstrap, sasl, f"{prefix}-t", work)

    run(
        *configs,
        "--entity-type",
        "groups",
        "--entity-name",
        share,
        "--alter",
        "--add-config",
        "share.auto.offset.reset=earliest",
    )
    received = run(
        "kafka-console-share-consumer",
        *b,
        "--topic",
        topic,
        "--group",
        share,
        "--max-messages",
        "30",
        "--timeout-ms",
        "30000",
    )
    out["console-share-consumer"] = "\n".join(sorted(received.splitlines()))
    shares = ("kafka-share-groups", *b)
    step("share-groups describe", *shares, "--describe", "--group", share)
    step("share-groups describe state", *shares, "--describe", "--group", share, "--state")
    step(
        "share-groups reset",
        *shares,
        "--reset-offsets",
        "--group",
        share,
        "--topic",
        topic,
        "--to-earliest",
        "--execute",
    )
    step("share-groups delete", *shares, "--delete", "--group", share)

    # A streams group (KIP-1071): two Kafka Streams members on the wire (no JVM of their own), each
    # running one of the topic's three tasks... until both leave, then the group is deleted.
    streams_group = f"{prefix}-streams"
    members = [
        StreamsMember(bootstrap, f"member-{i}", group=streams_group, topology=stateless_topology(topic)) for i in (1, 2)
    ]
    settle(members, tasks=3)
    streams = ("kafka-streams-groups", *b)
    step("streams-groups list", *streams, "--list")
    step("streams-groups describe", *streams, "--describe", "--group", streams_group)
    step("streams-groups describe members", *streams, "--describe", "--group", streams_group, "--members", "--verbose")
    step("streams-groups describe state", *streams, "--describe", "--group", streams_group, "--state", "--verbose")
    for member in members:
        member.leave()
    step("streams-groups delete", *streams, "--delete", "--group", streams_group)

    step(
        "transactional-copier",
        "kafka-transactional-message-copier",
        "--broker-list",  # this tool's name for it (with --bootstrap-server it printed its usage on both brokers)
        bootstrap,
        "--input-topic",
        topic,
        "--input-partition",
        "0",
        "--output-topic",
        copied,
        "--transactional-id",
        txn,
        "--consumer-group",
        f"{prefix}-copier",
        "--max-messages",
        "10",
        "--transaction-size",
        "5",
    )
    transactions = ("kafka-transactions", *b)
    listed = run(*transactions, "list")
    out["transactions list"] = "\n".join(
        line for line in listed.splitlines()[:1] + [line for line in listed.splitlines() if txn in line]
    )
    step("transactions describe", *transactions, "describe", "--transactional-id", txn)
    step("transactions describe-producers", *transactions, "describe-producers", "--topic", copied, "--partition", "0")
    step("transactions find-hanging", *transactions, "find-hanging", "--broker-id", "1")

    acls = ("kafka-acls", *b)
    resource = ("--topic", prefix, "--resource-pattern-type", "prefixed")
    step("acls add", *acls, "--add", "--allow-principal", "User:alice", "--operation", "Read", *resource)
    step("acls list", *acls, "--list", *resource)
    step(
        "acls remove", *acls, "--remove", "--force", "--allow-principal", "User:alice", "--operation", "Read", *resource
    )

    step("features describe", "kafka-features", *b, "describe")
    step("metadata-quorum status", "kafka-metadata-quorum", *b, "describe", "--status")
    step("metadata-quorum replication", "kafka-metadata-quorum", *b, "describe", "--replication")
    step("log-dirs", "kafka-log-dirs", *b, "--describe", "--topic-list", topic)

    # The same batches, byte for byte, produced to both brokers: Kafka's log readers must then print
    # the same of each broker's files.
    dumped = f"{prefix}-dumped"
    # segment.ms=1: each produce rolls the segment, so the first is closed (its indexes trimmed, its
    # time index given its largest timestamp, a producer snapshot written) before it is dumped
    rolled = ("--config", "segment.ms=1", "--config", "index.interval.bytes=1")
    run(*topics, "--create", "--topic", dumped, "--partitions", "1", "--replication-factor", "1", *rolled, check=True)
    _produce_fixed(bootstrap, dumped, now_ms)
    segment = log_dir / f"{dumped}-0" / "00000000000000000000.log"
    step("dump-log segment", "kafka-dump-log", "--files", str(segment), "--print-data-log")
    step("dump-log index", "kafka-dump-log", "--files", str(segment.with_suffix(".index")))
    step("dump-log time index", "kafka-dump-log", "--files", str(segment.with_suffix(".timeindex")))
    for name in ("00000000000000000003", "00000000000000000005"):  # after the idempotent batch: its producer
        step(f"dump-log snapshot {name}", "kafka-dump-log", "--files", str(segment.parent / f"{name}.snapshot"))
    step("dump-log segment 3", "kafka-dump-log", "--files", str(segment.parent / "00000000000000000003.log"))
    out["files"] = "\n".join(sorted(path.name for path in segment.parent.iterdir() if not path.name.endswith(".tmp")))
    offsets = work / "delete-records.json"
    offsets.write_text(json.dumps({"partitions": [{"topic": dumped, "partition": 0, "offset": 2}], "version": 1}))
    step("delete-records", "kafka-delete-records", *b, "--offset-json-file", str(offsets))
    step("get-offsets after delete", "kafka-get-offsets", *b, "--topic", dumped, "--time", "-2")
    step(
        "leader-election",
        "kafka-leader-election",
        *b,
        "--election-type",
        "preferred",
        "--topic",
        topic,
        "--partition",
        "0",
    )
    sent = run(
        "kafka-producer-perf-test",
        "--topic",
        dumped,
        "--num-records",
        "50",
        "--record-size",
        "20",
        "--throughput",
        "-1",
        "--producer-props",
        f"bootstrap.servers={bootstrap}",
        "acks=all",
    )
    out["producer-perf-test"] = "\n".join(re.findall(r"^(\d+ records sent)", sent, re.MULTILINE)[-1:])
    read = run("kafka-consumer-perf-test", *b, "--topic", dumped, "--messages", "50", "--timeout", "60000")
    out["consumer-perf-test"] = _perf_summary(read)
    out.update(_internal_topics(log_dir, prefix, work))
    return out


# Kafka's decoders of its internal topics (DumpLogSegments' options) and the partition each reads.
DECODERS = {
    "offsets": ("--offsets-decoder", "__consumer_offsets-0"),
    "transaction log": ("--transaction-log-decoder", "__transaction_state-0"),
    "cluster metadata": ("--cluster-metadata-decoder", "__cluster_metadata-0"),
    "share group state": ("--share-group-state-decoder", "__share_group_state-0"),
}
# What DumpLogSegments prints of a record its decoder could not read (its parsers' catch blocks).
UNDECODED = re.compile(r"Unknown record type|Error at (offset )?\d+|Failed to decode|Exception")


def _internal_topics(log_dir: Path, prefix: str, work: Path) -> dict[str, str]:
    """Kafka's readers of the broker's internal topics: `kafka-dump-log` with each internal topic's
    decoder over all its segments, and `kafka-metadata-shell` over the metadata log. Each dump gives
    two steps: the records the scenario wrote (those naming its prefix, or the ids of its topics and
    ACLs), and every line of the whole dump the decoder could not read (none, on either broker). The
    shell reads a copy of the metadata log: on the live log dir it would want the broker's `.lock`."""
    out: dict[str, str] = {}
    for name, (decoder, partition) in DECODERS.items():
        segments = sorted(str(path) for path in (log_dir / partition).glob("*.log"))
        dump = run("kafka-dump-log", decoder, "--files", ",".join(segments))
        records = [line for line in dump.splitlines() if line.startswith("| offset:")]
        out[f"dump-log {name} undecoded"] = "\n".join(line for line in records if UNDECODED.search(line))
        out[f"dump-log {name}"] = "\n".join(_of_the_scenario(records, prefix))
    copy = work / "metadata-copy" / "__cluster_metadata-0"
    shutil.copytree(log_dir / "__cluster_metadata-0", copy, ignore=shutil.ignore_patterns("*.tmp"))
    shell = ("kafka-metadata-shell", "--snapshot", str(sorted(copy.glob("*.log"))[-1]))

    def shell_run(*args: str) -> str:
        # The shell can answer before it holds the image: its non-interactive run waits until the loader
        # has applied an offset, which the loader reports before it has initialised the shell's own
        # publisher (MetadataShell.waitUntilCaughtUp, MetadataLoader.maybePublishMetadata), and a command
        # run on the empty state prints nothing or "no such file or directory". A second run lists what
        # the first missed. Each run is a call into the tools' warm JVM (ADR 94): more attempts cost little.
        for _ in range(SHELL_ATTEMPTS):
            printed = run(*shell, *args)
            if _shell_answered(printed):
                break
        return printed

    for path in (
        f"/image/topics/byName/{prefix}-a",
        f"/image/topics/byName/{prefix}-a/0",
        f"/image/configs/TOPIC:{prefix}-a",
        f"/image/configs/GROUP:{prefix}-g",
        "/image/features",
    ):
        out[f"metadata-shell ls {path.replace(prefix, 'P')}"] = shell_run("ls", path)
    out["metadata-shell cat partition"] = shell_run("cat", f"/image/topics/byName/{prefix}-a/0")
    out["metadata-shell cat topic config"] = shell_run("cat", f"/image/configs/TOPIC:{prefix}-a/retention.ms")
    return out


SHELL_ATTEMPTS = 8


def _shell_answered(printed: str) -> bool:
    """Whether a metadata shell's run printed an answer, not what its race gives: a command run on the
    empty image prints nothing, "no such file or directory" (`ls`; `cat`: "No such"), or for
    `ls /image/features` only `metadataVersion` (the empty image's one feature). Only stdout counts:
    against Kafka its stderr always holds the loader's "Ignoring control record" lines."""
    stdout = printed.split("--- stderr\n", 1)[0].strip()
    return bool(stdout) and stdout != "metadataVersion" and "no such file or directory" not in stdout.lower()


def _of_the_scenario(records: list[str], prefix: str) -> list[str]:
    """The decoded records that name the scenario's prefix, or an id (topic, ACL) such a record named
    first, each as `key: ... payload: ...` (the offset, timestamp and sizes dropped)."""
    ids: set[str] = set()
    kept = []
    for line in records:
        decoded = line[line.find(" key: ") + 1 :] if " key: " in line else line[line.find(" payload: ") + 1 :]
        if prefix in decoded:
            ids.update(re.findall(r'"(?:topicId|id)":"([A-Za-z0-9_-]{22})"', decoded))
        elif not any(known in decoded for known in ids):
            continue
        kept.append(decoded)
    return kept


def _streams_group(bootstrap: str, group: str, topic: str) -> None:
    """A Streams group (KIP-1071) of one member reading `topic`: it joins, is given its tasks, and
    leaves; its records go to __consumer_offsets."""
    from tests.differential.compare import Wire
    from tests.kafka_python_messages import StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse

    request = StreamsGroupHeartbeatRequest
    subtopology = request.Topology.Subtopology(
        subtopology_id="0",
        source_topics=[topic],
        source_topic_regex=[],
        state_changelog_topics=[],
        repartition_sink_topics=[],
        repartition_source_topics=[],
        copartition_groups=[],
    )
    member = str(uuid.uuid4())
    join = request[0](
        group_id=group,
        member_id=member,
        member_epoch=0,
        endpoint_information_epoch=0,
        rebalance_timeout_ms=30000,
        topology=request.Topology(epoch=1, subtopologies=[subtopology]),
        active_tasks=[],
        standby_tasks=[],
        warmup_tasks=[],
        process_id=str(uuid.uuid4()),
        client_tags=[],
    )
    with Wire(bootstrap) as wire:
        joined = eventually(
            lambda: _ok(wire.request(join, StreamsGroupHeartbeatResponse, 0)), 30, what="a Streams group", interval=0.5
        )
        leave = request[0](group_id=group, member_id=member, member_epoch=-1, endpoint_information_epoch=0)
        left = wire.request(leave, StreamsGroupHeartbeatResponse, 0)
        assert (joined.member_epoch > 0, left.error_code) == (True, 0), (joined, left)


def _produce_fixed(bootstrap: str, topic: str, now_ms: int) -> None:
    """Four batches (plain; gzip with headers; lz4 from an idempotent producer; plain), fixed keys and
    values, timestamps 10 ms apart: with segment.ms=1 each one after the first rolls the segment."""
    from kafka.protocol.producer import InitProducerIdRequest, InitProducerIdResponse, ProduceRequest, ProduceResponse

    from tests.batches import make_batch
    from tests.differential.compare import Wire

    data = ProduceRequest.TopicProduceData
    with Wire(bootstrap) as wire:
        init = InitProducerIdRequest[4](
            transactional_id=None, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1
        )
        # retried as clients do: Kafka answers COORDINATOR_LOAD_IN_PROGRESS until its first block of ids
        producer = eventually(
            lambda: _ok(wire.request(init, InitProducerIdResponse, 4)), 30, what="a producer id", interval=0.2
        )
        batches = [
            make_batch([(now_ms, b"k1", b"v1"), (now_ms, b"k2", b"v2")]),
            make_batch([(now_ms + 10, b"k3", b"v3")], compression=1, headers=[("h", b"x")]),
            make_batch(
                [(now_ms + 20, None, b"v4"), (now_ms + 20, b"k1", None)],
                compression=3,
                producer_id=producer.producer_id,
                producer_epoch=producer.producer_epoch,
                base_sequence=0,
            ),
            make_batch([(now_ms + 30, b"k5", b"v5")]),
        ]
        for batch in batches:
            request = ProduceRequest[11](
                transactional_id=None,
                acks=-1,
                timeout_ms=10000,
                topic_data=[data(name=topic, partition_data=[data.PartitionProduceData(index=0, records=batch)])],
            )
            answer = wire.request(request, ProduceResponse, 11)
            assert answer.responses[0].partition_responses[0].error_code == 0, answer


def _ok(answer):
    return answer if answer.error_code == 0 else None


def _perf_summary(text: str) -> str:
    """ConsumerPerformance's CSV: its header, and the records it consumed (the rest are rates)."""
    lines = [line for line in text.splitlines() if "," in line]
    if len(lines) < 2:
        return text
    header = [cell.strip() for cell in lines[0].split(",")]
    row = [cell.strip() for cell in lines[1].split(",")]
    return f"{lines[0]}\nconsumed: {row[header.index('data.consumed.in.nMsg')]}"


def _with(text: str, part: str) -> str | None:
    return text if part in text else None


def _consumer_summary(events: str) -> str:
    """VerifiableConsumer's JSON events, less what timing decides (how records split into batches):
    the kinds of event in order of first appearance, the partitions assigned, the records consumed
    and the offsets last committed per partition."""
    kinds: list[str] = []
    consumed = 0
    committed: dict[str, int] = {}
    assigned: set[str] = set()
    for line in events.splitlines():
        if not line.startswith("{"):
            continue
        event = json.loads(line)
        if event["name"] not in kinds:
            kinds.append(event["name"])
        if event["name"] == "records_consumed":
            consumed += event["count"]
        if event["name"] == "offsets_committed":
            for offset in event["offsets"]:
                committed[f"{offset['topic']}-{offset['partition']}"] = offset["offset"]
        if event["name"] == "partitions_assigned":
            assigned.update(f"{p['topic']}-{p['partition']}" for p in event["partitions"])
    summary = {"events": kinds, "assigned": sorted(assigned), "consumed": consumed, "committed": committed}
    return json.dumps(summary, sort_keys=True)


@pytest.fixture(scope="module")
def outputs(apache_kafka, tmp_path_factory) -> Iterator[dict[str, tuple[str, str]]]:
    """Each step's normalised output: (Apache Kafka's, trafka's)."""
    kafka_tools.classpath()
    trafka = Trafka(tmp_path_factory.mktemp("trafka-tools"))
    try:
        runs = {}
        began = time.monotonic()
        now_ms = int(time.time() * 1000)  # the fixed records' timestamp, the same on both brokers
        with ThreadPoolExecutor(2) as pool:
            for name, bootstrap, sasl, log_dir in (
                ("kafka", apache_kafka.bootstrap, apache_kafka.listeners["SASL_PLAINTEXT"], apache_kafka.log_dir),
                ("trafka", trafka.bootstrap, trafka.sasl, trafka.log_dir),
            ):
                prefix = f"tools-{uuid.uuid4().hex[:8]}"
                work = tmp_path_factory.mktemp(f"tools-{name}")
                replacements = {bootstrap: "BOOTSTRAP", sasl: "SASL", prefix: "P", str(log_dir): "LOGDIR"}
                runs[name] = (pool.submit(scenario, bootstrap, sasl, log_dir, prefix, work, now_ms), replacements)
            results = {name: (future.result(), replacements) for name, (future, replacements) in runs.items()}
        print(f"Kafka's tools against both brokers: {time.monotonic() - began:.1f}s")
        kafka, trafka_out = results["kafka"], results["trafka"]
        yield {
            step: (
                _normaliser(step)(normalise(kafka[0][step], kafka[1])),
                _normaliser(step)(normalise(trafka_out[0][step], trafka_out[1])),
            )
            for step in kafka[0]
        }
    finally:
        kafka_tools.close_runners()
        trafka.stop()


def _delegation_tokens(
    step: Callable[..., str], configs: tuple[str, ...], plain: str, sasl: str, owner: str, work: Path
) -> None:
    """Kafka's kafka-delegation-tokens over SASL/SCRAM as a user the tools created (ADR 139): create with a
    renewer, describe, renew, expire (now), describe again; and the refusal on PLAINTEXT."""
    password = "token-owner-secret"
    run(
        *configs,
        "--entity-type",
        "users",
        "--entity-name",
        owner,
        "--alter",
        "--add-config",
        f"SCRAM-SHA-512=[password={password}]",
        check=True,
    )
    time.sleep(1)  # Kafka's brokers learn SCRAM credentials from the metadata log, a moment after the controller
    command_config = work / "sasl.properties"
    command_config.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{owner}" password="{password}";\n'
    )
    tokens = ("kafka-delegation-tokens", "--bootstrap-server", sasl, "--command-config", str(command_config))
    created = step(
        "delegation-tokens create",
        *tokens,
        "--create",
        "--max-life-time-period",
        "-1",
        "--renewer-principal",
        f"User:{owner}-renewer",
    )
    hmac = next((m.group(1) for m in [re.search(r"^\S{22} (\S+) User:", created, re.M)] if m), "no-token")
    time.sleep(1)  # Kafka's brokers learn the token from the metadata log, a moment after its controller
    step("delegation-tokens describe", *tokens, "--describe", "--owner-principal", f"User:{owner}")
    step("delegation-tokens renew", *tokens, "--renew", "--hmac", hmac, "--renew-time-period", "-1")
    step("delegation-tokens expire", *tokens, "--expire", "--hmac", hmac, "--expiry-time-period", "-1")
    time.sleep(1)
    step("delegation-tokens describe expired", *tokens, "--describe", "--owner-principal", f"User:{owner}")
    plaintext = work / "plaintext.properties"  # the tool wants a command config: one that keeps PLAINTEXT
    plaintext.write_text("security.protocol=PLAINTEXT\n")
    step(
        "delegation-tokens plaintext",
        *("kafka-delegation-tokens", "--bootstrap-server", plain, "--command-config", str(plaintext)),
        *("--create", "--max-life-time-period", "-1"),
    )


def _tokens(text: str) -> str:
    """A token's HMAC (base64 of 64 bytes) and the dates the tool prints to the minute: each broker's own."""
    text = re.sub(r"[A-Za-z0-9+/]{86}==", "<hmac>", text)
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?(\.\d+)?", "<date>", text)


def _same(text: str) -> str:
    return text


def _normaliser(step: str) -> Callable[[str], str]:
    return NORMALISE.get(step, _shell if step.startswith("metadata-shell") else _same)


def _topic_configs(text: str) -> str:
    """`Configs: a=1,b=2` with its entries sorted: Kafka lists a topic's configs in the order its Scala
    map iterates them, trafka by name (deliberate: the same set, in an order Kafka does not define)."""

    def sort(match: re.Match[str]) -> str:
        return "Configs: " + ",".join(sorted(entry for entry in match.group(1).split(",") if entry))

    return re.sub(r"Configs: (\S*)", sort, text)


def _metadata_offsets(text: str) -> str:
    """The metadata log's length (high watermark, log end offset, a feature's epoch) is how much was
    written to it, by every suite on the session's Kafka; and trafka's one process has no controller
    listener, so its voter's endpoint is its broker listener (deliberate: one node)."""
    text = re.sub(r"(HighWatermark: |Epoch: )\d+", r"\1N", text)
    text = re.sub(r"^(\d+ <id> )\d+", r"\1N", text, flags=re.MULTILINE)
    return re.sub(r"CONTROLLER://[^\"\s,\]]+", "PLAINTEXT://BOOTSTRAP", text)


def _rows_sorted(text: str) -> str:
    """A table whose rows Kafka prints in hash-map order: its header first, then its rows sorted."""
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    return "\n".join(lines[: first + 1] + sorted(lines[first + 1 :]))


def _log_dirs(text: str) -> str:
    """LogDirsCommand's JSON: partitions in the order the broker's map gives them, and each one's
    size, which is how the producer's batches happened to fall (a batch's overhead is per batch)."""
    lines = []
    for line in text.splitlines():
        if line.startswith("{"):
            answer = json.loads(line)
            for broker in answer.get("brokers", []):
                for log_dir in broker.get("logDirs", []):
                    log_dir["partitions"] = sorted(log_dir.get("partitions", []), key=lambda p: p["partition"])
                    for partition in log_dir["partitions"]:
                        partition["size"] = "N"
            line = json.dumps(answer, sort_keys=True)
        lines.append(line)
    return "\n".join(lines)


def _transaction_log(text: str) -> str:
    """Each transaction's partitions sorted (Kafka lists them in its hash map's order), and its Ongoing
    records but the last dropped: the order its partitions join in is the network's (the Produce's
    implicit add of the output partition, KIP-890, against the offsets' AddOffsetsToTxn; Kafka's broker
    adds the first through an inter-broker request), not the coordinator's choice."""

    def sort(match: re.Match[str]) -> str:
        return '"transactionPartitions":[' + ",".join(sorted(re.findall(r"\{[^{}]*\}", match.group(1)))) + "]"

    text = re.sub(r'"producerId":\d+', '"producerId":<producer-id>', text)  # each broker's own
    lines = [re.sub(r'"transactionPartitions":\[(.*?)\](?=,")', sort, line) for line in text.splitlines()]
    ongoing = '"transactionStatus":1,'
    return "\n".join(
        line for line, following in zip(lines, [*lines[1:], ""]) if not (ongoing in line and ongoing in following)
    )


def _producer_ids(column: int) -> Callable[[str], str]:
    """A `kafka-transactions` table with each broker's own producer ids (the column's cells under its
    header) replaced: the session's Kafka gave ids to every suite that ran before (39 in CI, 0 alone)."""

    def normalise_table(text: str) -> str:
        lines = text.splitlines()
        rows = [line.split(" ") for line in lines[1:]]
        for cells in rows:
            if len(cells) > column:
                cells[column] = "<producer-id>"
        return "\n".join(lines[:1] + [" ".join(cells) for cells in rows])

    return normalise_table


def _lines_sorted(text: str) -> str:
    """Lines Kafka prints in the order of a hash map (ListGroups' groups): sorted."""
    return "\n".join(sorted(text.splitlines()))


# SnapshotFileReader's note on each KRaft control record it skips: Kafka's metadata log holds its voter
# set (KRaftVersion and KRaftVoters records, `format --standalone`); trafka's records none (one node
# with no dynamic quorum, ADR 64), so there is nothing for the shell to skip.
_KRAFT_CONTROL = re.compile(r"\[<time>\] ERROR Ignoring control record with type KRAFT_(VERSION|VOTERS) ")


def _shell(text: str) -> str:
    lines = [line for line in text.splitlines() if not _KRAFT_CONTROL.match(line)]
    if lines and lines[-1] == "--- stderr":
        lines.pop()
    return "\n".join(lines)


NORMALISE: dict[str, Callable[[str], str]] = {
    **{f"delegation-tokens {step}": _tokens for step in ("create", "describe", "renew", "expire", "describe expired")},
    "consumer-groups list": _lines_sorted,
    "share-groups reset": _rows_sorted,
    "streams-groups list": lambda text: "\n".join(line for line in text.splitlines() if "-streams" in line),
    "streams-groups describe": _rows_sorted,
    "streams-groups describe members": _rows_sorted,
    "consumer-groups reset": _rows_sorted,
    "log-dirs": _log_dirs,
    "topics describe": _topic_configs,
    "features describe": _metadata_offsets,
    "metadata-quorum status": _metadata_offsets,
    "metadata-quorum replication": _metadata_offsets,
    # Acknowledgements of different partitions' batches arrive in the order the network decides; a throughput's
    # digits can hold what `normalise` took for an epoch in ms (`"avg_throughput":41.1700000000001` gave `N<time>`).
    "transactional-copier": lambda text: re.sub(r'"time":"[^"]*"', '"time":"<time>"', text),
    "transactions list": _producer_ids(2),
    "transactions describe": lambda text: _producer_ids(2)(re.sub(r"<time> \d+", "<time> N", text)),  # duration
    "transactions describe-producers": _producer_ids(0),
    "dump-log transaction log": _transaction_log,
    "verifiable-producer": lambda text: "\n".join(
        sorted(re.sub(r'"(time_ms|avg_throughput|target_throughput)":[^,}]+', r'"\1":N', text).splitlines())
    ),
}

STEPS = [
    "topics create",
    "topics create again",
    "topics alter",
    "topics describe",
    "topics list",
    "verifiable-producer",
    "get-offsets",
    "verifiable-consumer",
    "verifiable-consumer consumer protocol",
    "consumer-groups describe",
    "consumer-groups describe state",
    "consumer-groups reset",
    "consumer-groups list",
    "consumer-groups delete",
    "configs topic alter",
    "configs topic describe",
    "configs topic bad",
    "configs broker alter",
    "configs broker describe",
    "configs broker delete",
    "configs group alter",
    "configs group describe",
    "configs client alter",
    "configs client describe",
    "configs user alter",
    "configs user quota alter",
    "configs user describe",
    "share-groups describe state",
    "share-groups reset",
    "share-groups delete",
    "streams-groups list",
    "streams-groups describe",
    "streams-groups describe members",
    "streams-groups describe state",
    "streams-groups delete",
    "transactional-copier",
    "transactions list",
    "transactions describe",
    "transactions describe-producers",
    "transactions find-hanging",
    "delegation-tokens create",
    "delegation-tokens describe",
    "delegation-tokens renew",
    "delegation-tokens expire",
    "delegation-tokens describe expired",
    "delegation-tokens plaintext",
    "acls add",
    "acls list",
    "acls remove",
    "features describe",
    "metadata-quorum status",
    "metadata-quorum replication",
    "log-dirs",
    "dump-log segment",
    "dump-log index",
    "dump-log time index",
    "files",
    "dump-log snapshot 00000000000000000003",
    "dump-log snapshot 00000000000000000005",
    "dump-log segment 3",
    "delete-records",
    "get-offsets after delete",
    "leader-election",
    "producer-perf-test",
    "consumer-perf-test",
    *(f"dump-log {name}{part}" for name in DECODERS for part in ("", " undecoded")),
    "metadata-shell ls /image/topics/byName/P-a",
    "metadata-shell ls /image/topics/byName/P-a/0",
    "metadata-shell ls /image/configs/TOPIC:P-a",
    "metadata-shell ls /image/configs/GROUP:P-g",
    "metadata-shell ls /image/features",
    "metadata-shell cat partition",
    "metadata-shell cat topic config",
]


# Where trafka still prints something else than Kafka, and why: differences to remove, not deliberate
# ones. Each is asserted to be still there, so that the entry goes when trafka is fixed.
DIFFERENT = {
    "dump-log offsets": "the records each broker's group coordinators write for the same steps: the group epochs' metadataHash "
    "(KIP-1101) hashes each broker's own topic ids (the hash itself is Kafka's: tests/kafka/test_metadata_hash.py); "
    "a group's records come in another order; and heartbeats' timing decides how many "
    "epochs each writes. Offsets, members and assignments are written alike (every record decodes: "
    "`dump-log offsets undecoded` is empty on both)",
    "dump-log cluster metadata": "trafka writes PartitionRecord v1 (Kafka 4.2: v2, with ELR fields) and its "
    "records of a topic in another order; Kafka's controller also writes what one node that is its own controller "
    "has no use for (broker registrations, NoOpRecords, producer id blocks)",
    "dump-log share group state": "the share coordinators' records for the same share group: Kafka writes a "
    "ShareSnapshot per partition at initialization (start offset -1, state epoch 1) and ShareUpdates as "
    "acknowledgements come, trafka its own snapshot epochs and state batches; both decode in full",
    "features describe": "the tools' trafka is not pinned to 4.2, so it supports Kafka 4.4's feature levels "
    "(metadata.version to 4.4-IV2, share.version 2: ADRs 86-87) where Kafka 4.2.2 supports 4.2's.",
}


@pytest.mark.parametrize("step", STEPS)
def test_a_tool_prints_against_trafka_what_it_prints_against_kafka(outputs, step: str) -> None:
    kafka, trafka = outputs[step]
    if step.startswith("metadata-shell"):
        # Both shells printing nothing, or both missing a path, would compare equal and check nothing.
        assert _shell_answered(kafka), f"Kafka's metadata shell did not answer: {kafka!r}"
    if step in DIFFERENT:
        assert trafka != kafka, f"trafka now prints what Kafka prints: drop {step!r} from DIFFERENT"
    else:
        assert trafka == kafka


def test_what_the_metadata_shells_race_prints_is_not_an_answer() -> None:
    control = (
        "--- stderr\n[2026-11-29 05:01:02,003] ERROR Ignoring control record with type KRAFT_VERSION at offset 1\n"
    )
    assert not _shell_answered(control)
    assert not _shell_answered("")
    assert not _shell_answered("ls: /image/topics/byName/P-a: no such file or directory.\n" + control)
    assert _shell_answered("0\n1\n2\nid\nname\n" + control)
    assert _shell_answered("0\n1\n")
    assert not _shell_answered("cat: /image/topics/byName/P-a/0: No such file or directory.\n")
    assert not _shell_answered("metadataVersion\n" + control)
    assert _shell_answered("finalized_group.version\nmetadataVersion\n" + control)


def test_a_transaction_log_dump_is_compared_without_what_timing_and_hash_order_decide():
    record = 'key: {{"transactionalId":"P-x"}} payload: {{"transactionStatus":{},"transactionPartitions":{},"x":1}}'
    kafka = [
        record.format(0, "null"),
        record.format(1, '[{"topic":"P-copied","partitionIds":[0]}]'),
        record.format(1, '[{"topic":"P-copied","partitionIds":[0]},{"topic":"__consumer_offsets","partitionIds":[0]}]'),
        record.format(2, '[{"topic":"P-copied","partitionIds":[0]},{"topic":"__consumer_offsets","partitionIds":[0]}]'),
    ]
    trafka = [
        record.format(0, "null"),
        record.format(1, '[{"topic":"__consumer_offsets","partitionIds":[0]}]'),
        record.format(1, '[{"topic":"__consumer_offsets","partitionIds":[0]},{"topic":"P-copied","partitionIds":[0]}]'),
        record.format(2, '[{"topic":"__consumer_offsets","partitionIds":[0]},{"topic":"P-copied","partitionIds":[0]}]'),
    ]
    assert _transaction_log("\n".join(kafka)) == _transaction_log("\n".join(trafka))
    assert len(_transaction_log("\n".join(kafka)).splitlines()) == 3
    other_id = "\n".join(line.replace('"transactionStatus"', '"producerId":39,"transactionStatus"') for line in kafka)
    same_id = "\n".join(line.replace('"transactionStatus"', '"producerId":0,"transactionStatus"') for line in trafka)
    assert _transaction_log(other_id) == _transaction_log(same_id)
    missing = [line.replace(',{"topic":"__consumer_offsets","partitionIds":[0]}', "") for line in kafka]
    assert _transaction_log("\n".join(missing)) != _transaction_log("\n".join(kafka))


def test_a_transactions_table_is_compared_without_each_brokers_producer_ids():
    header = "TransactionalId Coordinator ProducerId TransactionState"
    assert _producer_ids(2)(f"{header}\nP-x 1 39 CompleteCommit") == _producer_ids(2)(
        f"{header}\nP-x 1 0 CompleteCommit"
    )
    assert _producer_ids(2)(f"{header}\nP-x 1 0 Ongoing") != _producer_ids(2)(f"{header}\nP-x 1 0 CompleteCommit")
