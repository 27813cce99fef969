"""Kafka's own tools run as `kafka-*.sh` runs them: `java -cp <Kafka's jars> <main class> <arguments>`
(ADR 66). The jars are tests/tools/pom.xml's classpath (the parent's kafka_2.13 and kafka-tools, plus
kafka-shell), resolved by Maven once and cached beside the pom by tests/kafka/reference.py's `maven_classpath`."""

from __future__ import annotations

import re
import subprocess
import threading
from pathlib import Path

from tests.kafka.reference import maven_classpath

HERE = Path(__file__).resolve().parent
POM = HERE / "pom.xml"
PARENT_POM = HERE.parent / "kafka" / "pom.xml"
LOG4J2 = HERE / "log4j2.properties"

# The scripts' main classes (bin/kafka-*.sh in Kafka 4.2).
MAIN = {
    "kafka-topics": "org.apache.kafka.tools.TopicCommand",
    "kafka-configs": "kafka.admin.ConfigCommand",
    "kafka-consumer-groups": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "kafka-share-groups": "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
    "kafka-streams-groups": "org.apache.kafka.tools.streams.StreamsGroupCommand",
    "kafka-console-share-consumer": "org.apache.kafka.tools.consumer.ConsoleShareConsumer",
    "kafka-transactions": "org.apache.kafka.tools.TransactionsCommand",
    "kafka-acls": "org.apache.kafka.tools.AclCommand",
    "kafka-delegation-tokens": "org.apache.kafka.tools.DelegationTokenCommand",
    "kafka-features": "org.apache.kafka.tools.FeatureCommand",
    "kafka-metadata-quorum": "org.apache.kafka.tools.MetadataQuorumCommand",
    "kafka-log-dirs": "org.apache.kafka.tools.LogDirsCommand",
    "kafka-get-offsets": "org.apache.kafka.tools.GetOffsetShell",
    "kafka-delete-records": "org.apache.kafka.tools.DeleteRecordsCommand",
    "kafka-leader-election": "org.apache.kafka.tools.LeaderElectionCommand",
    "kafka-producer-perf-test": "org.apache.kafka.tools.ProducerPerformance",
    "kafka-consumer-perf-test": "org.apache.kafka.tools.ConsumerPerformance",
    "kafka-verifiable-producer": "org.apache.kafka.tools.VerifiableProducer",
    "kafka-verifiable-consumer": "org.apache.kafka.tools.VerifiableConsumer",
    "kafka-transactional-message-copier": "org.apache.kafka.tools.TransactionalMessageCopier",
    "kafka-dump-log": "kafka.tools.DumpLogSegments",
    "kafka-metadata-shell": "org.apache.kafka.shell.MetadataShell",
}

# kafka-run-class.sh's heap for tools, and a JVM that starts quickly (each invocation is a new JVM).
JVM_OPTIONS = ("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-Djava.awt.headless=true")


def classpath() -> str:
    """Kafka's jars for the tools, built by Maven when either pom changed since it last ran."""
    return maven_classpath(POM, PARENT_POM)


# Tools that call System.exit, or run consumers and producers with threads of their own: a JVM each,
# as their script starts them. Every other tool runs in one long-lived JVM per thread (`ToolRunner`).
OWN_JVM = frozenset(
    {
        "kafka-verifiable-producer",
        "kafka-verifiable-consumer",
        "kafka-console-share-consumer",
        "kafka-transactional-message-copier",
        "kafka-producer-perf-test",
        "kafka-consumer-perf-test",
    }
)
RUNNER = HERE / "ToolRunner.java"


class ToolRunner:
    """One JVM that runs tools one after another (tests/tools/ToolRunner.java): a tool's run costs its
    work, not a JVM's start and class loading, which on two cores is seconds per tool."""

    def __init__(self) -> None:
        command = ["java", *JVM_OPTIONS, f"-Dlog4j2.configurationFile={LOG4J2}", "-cp", classpath(), str(RUNNER)]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def run(self, main: str, args: tuple[str, ...], timeout: float) -> tuple[int, str, str]:
        assert self.process.stdin is not None and self.process.stdout is not None
        if any("\t" in a or "\n" in a for a in args):
            raise ValueError(f"arguments with tabs or newlines cannot reach the runner: {args!r}")
        self.process.stdin.write(("\t".join((main, *args)) + "\n").encode())
        self.process.stdin.flush()
        timer = threading.Timer(timeout, self.process.kill)  # a hung tool: the runner dies, the read ends
        timer.start()
        try:
            reply = self.process.stdout
            status = int(reply.readline())
            out = reply.read(int(reply.readline())).decode()
            err = reply.read(int(reply.readline())).decode()
        except ValueError:
            raise AssertionError(f"{main} {' '.join(args)}: no answer within {timeout}s (runner killed)") from None
        finally:
            timer.cancel()
        return status, out, err

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(30)


_runners = threading.local()
_all_runners: list[ToolRunner] = []


def _runner() -> ToolRunner:
    runner = getattr(_runners, "runner", None)
    if runner is None or runner.process.poll() is not None:
        runner = _runners.runner = ToolRunner()
        _all_runners.append(runner)
    return runner


def close_runners() -> None:
    while _all_runners:
        _all_runners.pop().close()


def run(tool: str, *args: str, check: bool = False, timeout: float = 180) -> str:
    """One tool invocation: its stdout, its stderr after a line `--- stderr` when any, and `--- exit N`
    when it failed (or an AssertionError with `check`)."""
    if tool in OWN_JVM:
        command = ["java", *JVM_OPTIONS, f"-Dlog4j2.configurationFile={LOG4J2}", "-cp", classpath(), MAIN[tool], *args]
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        status, out, err = result.returncode, result.stdout, result.stderr
    else:
        status, out, err = _runner().run(MAIN[tool], args, timeout)
    if check and status != 0:
        raise AssertionError(f"{tool} {' '.join(args)} exited {status}:\n{out}\n{err}")
    return out + (f"--- stderr\n{err}" if err.strip() else "") + (f"--- exit {status}\n" if status else "")


BASE64_UUID = re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{21}[AQgw](?![A-Za-z0-9_-])")
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
EPOCH_MS = re.compile(r"(?<!\d)1[6-9]\d{11}(?!\d)")
LOG_TIME = re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+\]")


def _producer_id(line: str) -> str:
    if not re.search(r"producerId: \d", line):
        return line
    line = re.sub(r"producerId: \d+", "producerId: <producer-id>", line)
    return re.sub(r"crc: \d+", "crc: <crc>", line)


def normalise(text: str, replacements: dict[str, str]) -> str:
    """The output with what differs between two brokers by nature replaced by a placeholder: the
    addresses, run prefix and paths given, ids (topic, cluster, directory, member), wall-clock
    timestamps, and runs of spaces (tables are padded to their widest cell)."""
    for old, new in sorted(replacements.items(), key=lambda item: -len(item[0])):
        text = text.replace(old, new)
    text = UUID.sub("<uuid>", text)
    text = BASE64_UUID.sub("<id>", text)
    text = EPOCH_MS.sub("<time>", text)
    text = LOG_TIME.sub("[<time>]", text)
    # each broker's own producer ids, and the checksum of a batch that carries one
    text = "\n".join(_producer_id(line) for line in text.splitlines())
    return "\n".join(re.sub(r"[ \t]+", " ", line).rstrip() for line in text.splitlines())
