"""Kafka's own tools against trafka, as an operator types them, and against Apache Kafka (ADR 66).

The same steps run against both brokers (the session's Apache Kafka and a trafka on a filesystem
store, configured from the same server properties), each tool one JVM as `kafka-*.sh` starts it; each
step's output, normalised (`kafka_tools.normalise`: addresses, ids, wall-clock times, table padding),
must be equal. Where trafka differs on purpose, the step's normaliser says why, next to it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.kafka.reference import server_properties, write_properties
from tests.waiting import eventually

from . import kafka_tools
from .kafka_tools import normalise, run

# The steps are one JVM each, about 120 of them (both brokers, two at a time), run by the module's
# first test: minutes on a loaded machine.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]


def _trafka_properties(path: Path) -> None:
    """The Apache Kafka fixture's server properties, less what is about its listeners, SASL and
    controller (trafka serves one PLAINTEXT listener here)."""
    config = server_properties(path.parent / "unused", {"PLAINTEXT": 0, "CONTROLLER": 0, "SASL_PLAINTEXT": 0}, True)
    foreign = ("listener", "advertised", "controller", "sasl", "inter.broker", "process.roles", "log.dirs")
    write_properties(path, {key: value for key, value in config.items() if not key.startswith(foreign)})


class Trafka:
    def __init__(self, folder: Path) -> None:
        self.log_dir = folder / "data"
        properties = folder / "server.properties"
        _trafka_properties(properties)
        ready = folder / "ready.json"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "trafka", "serve", "--host", "127.0.0.1", "--port", "0"]
            + ["--data-dir", str(self.log_dir), "--ready-file", str(ready), str(properties)],
            stdout=subprocess.DEVNULL,
            stderr=open(folder / "trafka.log", "wb"),
        )
        log = folder / "trafka.log"
        eventually(lambda: ready.exists() or self.process.poll() is not None, 60, what="trafka's ready file")
        assert ready.exists(), log.read_text()
        self.bootstrap = json.loads(ready.read_text())["bootstrap_servers"]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


def scenario(bootstrap: str, log_dir: Path, prefix: str, work: Path) -> dict[str, str]:
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
    described = run(*configs, "--entity-type", "brokers", "--entity-name", "1", "--describe")
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
    step(
        "configs user alter",
        *configs,
        "--entity-type",
        "users",
        "--entity-name",
        user,
        "--alter",
        "--add-config",
        "SCRAM-SHA-256=[iterations=8192,password=pw],producer_byte_rate=4096",
    )
    time.sleep(1)
    step("configs user describe", *configs, "--entity-type", "users", "--entity-name", user, "--describe")

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

    step(
        "transactional-copier",
        "kafka-transactional-message-copier",
        "--bootstrap-server",
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
    return out


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
    return json.dumps({"events": kinds, "assigned": sorted(assigned), "consumed": consumed, "committed": committed})


@pytest.fixture(scope="module")
def outputs(apache_kafka, tmp_path_factory) -> Iterator[dict[str, tuple[str, str]]]:
    """Each step's normalised output: (Apache Kafka's, trafka's)."""
    kafka_tools.classpath()
    trafka = Trafka(tmp_path_factory.mktemp("trafka-tools"))
    try:
        runs = {}
        began = time.monotonic()
        with ThreadPoolExecutor(2) as pool:
            for name, bootstrap, log_dir in (
                ("kafka", apache_kafka.bootstrap, apache_kafka.log_dir),
                ("trafka", trafka.bootstrap, trafka.log_dir),
            ):
                prefix = f"tools-{uuid.uuid4().hex[:8]}"
                work = tmp_path_factory.mktemp(f"tools-{name}")
                replacements = {bootstrap: "BOOTSTRAP", prefix: "P", str(log_dir): "LOGDIR"}
                runs[name] = (pool.submit(scenario, bootstrap, log_dir, prefix, work), replacements)
            results = {name: (future.result(), replacements) for name, (future, replacements) in runs.items()}
        print(f"Kafka's tools against both brokers: {time.monotonic() - began:.1f}s")
        kafka, trafka_out = results["kafka"], results["trafka"]
        yield {
            step: (
                NORMALISE.get(step, _same)(normalise(kafka[0][step], kafka[1])),
                NORMALISE.get(step, _same)(normalise(trafka_out[0][step], trafka_out[1])),
            )
            for step in kafka[0]
        }
    finally:
        trafka.stop()


def _same(text: str) -> str:
    return text


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
    return text.replace("CONTROLLER://", "PLAINTEXT://")


NORMALISE: dict[str, Callable[[str], str]] = {
    "topics describe": _topic_configs,
    "features describe": _metadata_offsets,
    "metadata-quorum status": _metadata_offsets,
    "metadata-quorum replication": _metadata_offsets,
    # Acknowledgements of different partitions' batches arrive in the order the network decides.
    "verifiable-producer": lambda text: "\n".join(
        sorted(re.sub(r'"(time_ms|avg_throughput|target_throughput)":[\d.-]+', r'"\1":N', text).splitlines())
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
    "configs user describe",
    "share-groups describe state",
    "share-groups reset",
    "share-groups delete",
    "transactional-copier",
    "transactions list",
    "transactions describe",
    "transactions describe-producers",
    "transactions find-hanging",
    "acls add",
    "acls list",
    "acls remove",
    "features describe",
    "metadata-quorum status",
    "metadata-quorum replication",
    "log-dirs",
]


# Where trafka still prints something else than Kafka, and why: differences to remove, not deliberate
# ones. Each is asserted to be still there, so that the entry goes when trafka is fixed.
DIFFERENT = {
    "topics describe": "A Kafka 4.2 cluster is formatted with a cluster-wide dynamic min.insync.replicas=1 (for "
    "eligible leader replicas, KIP-966), so `Configs:` lists it; trafka writes no such default.",
    "configs topic describe": "retention.ms's synonyms: Kafka gives none below the topic's own value when "
    "log.retention.hours is set in server.properties; trafka adds STATIC_BROKER_CONFIG log.retention.ms=604800000 "
    "(the hours converted) and DEFAULT_CONFIG log.retention.hours=168.",
    "features describe": "trafka finalizes neither streams.version (no Streams groups yet) nor transaction.version "
    "2 (no transactions V2 yet), which a fresh Kafka 4.2 node finalizes; the other features are equal.",
}


@pytest.mark.parametrize("step", STEPS)
def test_a_tool_prints_against_trafka_what_it_prints_against_kafka(outputs, step: str) -> None:
    kafka, trafka = outputs[step]
    if step in DIFFERENT:
        assert trafka != kafka, f"trafka now prints what Kafka prints: drop {step!r} from DIFFERENT"
    else:
        assert trafka == kafka
