"""Apache Kafka itself, as the reference broker of the test harness and the benchmarks (ADR 63).

`ReferenceKafka` runs one real Apache Kafka node (broker and controller in one JVM, KRaft) from the
artifacts `tests/kafka/pom.xml` names: Maven resolves them from Maven Central on first use and writes
their classpath beside the pom (`.classpath-<hash of the pom>.txt`, git-ignored), so the pom's
`kafka.version` is the one place the repository takes Kafka's version from.

    with ReferenceKafka(tmp_path) as kafka:          # formats tmp_path/log, starts, waits, stops
        kafka.bootstrap                              # "127.0.0.1:PORT" (PLAINTEXT)
        kafka.listeners["SASL_PLAINTEXT"]            # "127.0.0.1:PORT" (PLAIN, SCRAM-SHA-256/512)

The node is configured as Kafka's shipped `config/server.properties` configures one combined node,
plus what a single node needs (internal topics with replication factor 1 and min ISR 1, no initial
rebalance delay); it is formatted as `kafka-storage.sh format --standalone` formats it, with a random
cluster id, at the release's default feature levels (share groups and Streams groups enabled, as on
a fresh 4.2 cluster). `existing=True` starts it on a log dir that is already there (trafka's, for the
log dir round trip) without formatting; `static_quorum=True` names the single voter in
`controller.quorum.voters`, for a log dir that does not hold the voter set. It always has a PLAINTEXT listener (ANONYMOUS, a super user
when an authorizer is set) and a SASL_PLAINTEXT one whose PLAIN users are `PLAIN_USERS`; `authorizer`
turns on Kafka's StandardAuthorizer; `properties` adds or overrides any server property.

Used from pytest (the session fixture `apache_kafka`, registered by `tests/conftest.py`) and from
`bench/` (the repository root on `sys.path`). The JVM never outlives its owner: it dies with the
process that started it (PR_SET_PDEATHSIG), and `stop()` runs at exit too.
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

HERE = Path(__file__).resolve().parent
POM = HERE / "pom.xml"
LOG4J2 = HERE / "log4j2.properties"

PLAIN_USERS = {"alice": "alice-secret", "bob": "bob-secret"}
SUPER_USERS = ("User:ANONYMOUS", "User:admin")
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

# Kafka's kafka-run-class.sh defaults (KAFKA_JVM_PERFORMANCE_OPTS), with a smaller heap than
# kafka-server-start.sh's 1 GiB floor: the test machine is shared.
JVM_OPTIONS = (
    "-Xms256m",
    "-Xmx1g",
    "-server",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-Djava.awt.headless=true",
)


# -- the artifacts ---------------------------------------------------------------------------------


def kafka_version() -> str:
    """The Apache Kafka version the pom resolves (its `kafka.version` property)."""
    text = POM.read_text()
    start = text.index("<kafka.version>") + len("<kafka.version>")
    return text[start : text.index("</kafka.version>", start)].strip()


def classpath() -> str:
    """The classpath of Kafka's artifacts, built by Maven when the pom changed since it last ran."""
    return maven_classpath(POM)


def maven_classpath(pom: Path, *inherited: Path) -> str:
    """The classpath Maven resolves for `pom` (`mvn dependency:build-classpath`), cached beside it in
    `.classpath-<hash>.txt` (git-ignored), the hash taken over `pom` and the poms it `inherited` from:
    resolved again only when one of them changed. The one way the harness asks Maven for jars (the
    reference broker here, Kafka's tools in tests/tools)."""
    folder = pom.parent
    digest = hashlib.sha256(b"".join(path.read_bytes() for path in (pom, *inherited))).hexdigest()[:16]
    cached = folder / f".classpath-{digest}.txt"
    if not cached.exists():
        partial = cached.with_suffix(f".{os.getpid()}.partial")
        result = subprocess.run(
            ["mvn", "-q", "-B", "-f", str(pom), "dependency:build-classpath", f"-Dmdep.outputFile={partial}"],
            capture_output=True,
            text=True,
            timeout=1200,
        )
        if result.returncode != 0 or not partial.exists():
            raise RuntimeError(f"mvn could not resolve the artifacts of {pom}:\n{result.stdout}\n{result.stderr}")
        for stale in folder.glob(".classpath-*.txt"):
            stale.unlink()
        partial.replace(cached)
    return cached.read_text().strip()


# -- configuration ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def server_properties(
    log_dir: Path,
    ports: Mapping[str, int],
    authorizer: bool = False,
    properties: Mapping[str, str] | None = None,
    static_quorum: bool = False,
) -> dict[str, str]:
    """Kafka's shipped `config/server.properties` for one combined node, on `ports` (by listener name),
    with what a single node needs; then the authorizer and `properties`. `static_quorum` names the
    voter in `controller.quorum.voters` (kraft.version 0) instead of finding it in the log dir, where
    `format --standalone` writes it (KIP-853)."""
    plain_jaas = (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        + " ".join(f'user_{name}="{password}"' for name, password in PLAIN_USERS.items())
        + ";"
    )
    config = {
        # Kafka's config/server.properties (KRaft, combined broker and controller)
        "process.roles": "broker,controller",
        "node.id": "1",
        **(
            {"controller.quorum.voters": f"1@127.0.0.1:{ports['CONTROLLER']}"}
            if static_quorum
            else {"controller.quorum.bootstrap.servers": f"127.0.0.1:{ports['CONTROLLER']}"}
        ),
        "listeners": ",".join(f"{name}://127.0.0.1:{port}" for name, port in ports.items()),
        "advertised.listeners": ",".join(f"{name}://127.0.0.1:{port}" for name, port in ports.items()),
        "inter.broker.listener.name": "PLAINTEXT",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
        "num.network.threads": "3",
        "num.io.threads": "8",
        "socket.send.buffer.bytes": "102400",
        "socket.receive.buffer.bytes": "102400",
        "socket.request.max.bytes": "104857600",
        "log.dirs": str(log_dir),
        "num.partitions": "1",
        "num.recovery.threads.per.data.dir": "1",
        "offsets.topic.replication.factor": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "log.retention.hours": "168",
        "log.segment.bytes": "1073741824",
        "log.retention.check.interval.ms": "300000",
        # what one node needs beyond that
        "group.initial.rebalance.delay.ms": "0",
        # streams groups' sessions short enough that a killed Kafka Streams instance's tasks move within a
        # test (the Java suite's scale-in scenario): 6 s, heartbeats every second (Kafka: 45 s and 5 s,
        # its minimums too)
        "group.streams.min.session.timeout.ms": "6000",
        "group.streams.session.timeout.ms": "6000",
        "group.streams.min.heartbeat.interval.ms": "1000",
        "group.streams.heartbeat.interval.ms": "1000",
        # one partition per coordinator topic, as trafka keeps them: every group and transactional id on
        # the same loaded partition (a fresh node loads the 50 default ones one by one, answering
        # NOT_COORDINATOR meanwhile), and tool outputs comparable with trafka's
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.num.partitions": "1",
        "share.coordinator.state.topic.num.partitions": "1",
        # the SASL listener: PLAIN users from JAAS, both SCRAMs from the metadata log
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": plain_jaas,
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": SCRAM_JAAS,
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
        # delegation tokens on (KIP-48): the tools check creates, renews and expires one over SASL
        "delegation.token.secret.key": "reference-delegation-token-secret",
    }
    if authorizer:
        config["authorizer.class.name"] = STANDARD_AUTHORIZER
        config["super.users"] = ";".join(SUPER_USERS)
    config.update(properties or {})
    return config


def write_properties(path: Path, config: Mapping[str, str]) -> None:
    def escape(value: str) -> str:
        return value.replace("\\", "\\\\").replace("\n", "\\n")

    path.write_text("".join(f"{key}={escape(value)}\n" for key, value in config.items()))


# -- the process -----------------------------------------------------------------------------------


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the process that started it dies (Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class ReferenceKafka:
    """One Apache Kafka node in `folder`: its log dir (`folder/log` unless `log_dir` is given), its
    `server.properties` and its own log (`folder/kafka.log`)."""

    def __init__(
        self,
        folder: Path,
        *,
        log_dir: Path | None = None,
        existing: bool = False,
        authorizer: bool = False,
        properties: Mapping[str, str] | None = None,
        cluster_id: str | None = None,
        static_quorum: bool = False,
        ports: Mapping[str, int] | None = None,
    ) -> None:
        self.folder = Path(folder)
        self.log_dir = Path(log_dir) if log_dir is not None else self.folder / "log"
        self.existing = existing
        self.authorizer = authorizer
        self.extra = dict(properties or {})
        self.static_quorum = static_quorum
        self.cluster_id = cluster_id or _random_cluster_id()
        self.fixed_ports = dict(ports or {})  # by listener name; the others get free ports
        self.listeners: dict[str, str] = {}
        self.startup_seconds = 0.0
        self.process: subprocess.Popen[bytes] | None = None
        self._classpath = ""

    @property
    def bootstrap(self) -> str:
        return self.listeners["PLAINTEXT"]

    @property
    def properties_path(self) -> Path:
        return self.folder / "server.properties"

    @property
    def log_path(self) -> Path:
        return self.folder / "kafka.log"

    def _java(self, main: str, *args: str, log: bool = True) -> list[str]:
        options = [*JVM_OPTIONS, f"-Dlog4j2.configurationFile={LOG4J2}", f"-Dkafka.logs.dir={self.folder}"]
        if not log:
            options = ["-Xmx256m", "-Dlog4j2.level=warn"]
        return ["java", *options, "-cp", self._classpath, main, *args]

    def start(self, timeout: float = 120.0) -> ReferenceKafka:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._classpath = classpath()
        began = time.monotonic()
        ports = {
            name: self.fixed_ports.get(name) or free_port() for name in ("PLAINTEXT", "CONTROLLER", "SASL_PLAINTEXT")
        }
        config = server_properties(self.log_dir, ports, self.authorizer, self.extra, self.static_quorum)
        write_properties(self.properties_path, config)
        if not self.existing:
            self.format()
        self.listeners = {name: f"127.0.0.1:{port}" for name, port in ports.items() if name != "CONTROLLER"}
        with open(self.log_path, "ab") as out:
            self.process = subprocess.Popen(
                self._java("kafka.Kafka", str(self.properties_path)),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        atexit.register(self.stop)
        try:
            self._wait_until_serving(began + timeout)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - began
        (self.folder / "reference.json").write_text(
            json.dumps({"listeners": self.listeners, "cluster_id": self.cluster_id, "log_dir": str(self.log_dir)})
        )
        return self

    @classmethod
    def attach(cls, folder: Path) -> ReferenceKafka:
        """A node another process started in `folder` (its `reference.json`); `stop()` leaves it running."""
        described = json.loads((folder / "reference.json").read_text())
        kafka = cls(folder, log_dir=Path(described["log_dir"]), cluster_id=described["cluster_id"], authorizer=True)
        kafka.listeners = described["listeners"]
        return kafka

    def format(self) -> None:
        """`kafka-storage.sh format --standalone`: a new single-voter log dir with a random cluster id."""
        result = subprocess.run(
            self._java(
                "kafka.tools.StorageTool",
                "format",
                "--standalone",
                "--cluster-id",
                self.cluster_id,
                "--config",
                str(self.properties_path),
                log=False,
            ),
            capture_output=True,
            text=True,
            timeout=120,
        )
        if result.returncode != 0:
            raise RuntimeError(f"kafka-storage format failed:\n{result.stdout}\n{result.stderr}")

    def _wait_until_serving(self, deadline: float) -> None:
        """Until the PLAINTEXT listener answers ApiVersions and Metadata lists this node."""
        error: Exception | None = None
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"Apache Kafka exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                if probe(self.bootstrap):
                    return
            except OSError as exc:
                error = exc
            time.sleep(0.2)
        raise RuntimeError(f"Apache Kafka did not serve in time ({error}):\n{self.log_tail()}")

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM (Kafka's controlled shutdown), then SIGKILL after `timeout`; the exit status."""
        process = self.process
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        atexit.unregister(self.stop)
        return process.returncode

    def log_tail(self, lines: int = 60) -> str:
        """The last lines of the JVM's output and of Kafka's server.log."""
        tails = []
        for path in (self.log_path, self.folder / "server.log"):
            try:
                tails.append(f"--- {path.name}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:]))
            except OSError:
                pass
        return "\n".join(tails)

    def __enter__(self) -> ReferenceKafka:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _random_cluster_id() -> str:
    """A random cluster id as `kafka-storage.sh random-uuid` prints it (a base64url UUID that does not start
    with `-`: `kafka-storage format --cluster-id -x...` reads it as an option and fails, one format in 64)."""
    import base64

    from trafka.domain.topics import kafka_random_uuid

    return base64.urlsafe_b64encode(kafka_random_uuid(uuid.uuid4).bytes).decode().rstrip("=")


def probe(bootstrap: str, timeout: float = 5.0) -> bool:
    """True once `bootstrap` answers ApiVersions and its Metadata lists a broker."""
    from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse

    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        versions = _roundtrip(sock, ApiVersionsRequest[0](), ApiVersionsResponse, 0, 1)
        if versions.error_code != 0:
            return False
        metadata = _roundtrip(sock, MetadataRequest[1](topics=[]), MetadataResponse, 1, 2)
        return bool(metadata.brokers)


def _roundtrip(sock: socket.socket, request, response_class, version: int, correlation_id: int):
    request.with_header(correlation_id=correlation_id, client_id="trafka-reference-probe")
    sock.sendall(bytes(request.encode(version=version, header=True, framed=True)))
    (size,) = struct.unpack(">i", _read(sock, 4))
    return response_class.decode(_read(sock, size), version=version, header=True)


def _read(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            raise ConnectionError("closed by peer")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


if __name__ == "__main__":  # python tests/kafka/reference.py DIR: start one, print its address, wait
    import tempfile

    with ReferenceKafka(Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()), authorizer=True) as kafka:
        print(f"Apache Kafka {kafka_version()} on {kafka.bootstrap} in {kafka.startup_seconds:.1f}s", flush=True)
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
