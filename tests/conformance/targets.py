"""The brokers a suite runs against: Apache Kafka 4.2 (the reference) and trafka, default or pinned.

Both get the suite's server properties in Kafka's words: Apache Kafka through `tests/kafka`'s
`ReferenceKafka` (its pom pins the release), trafka as `trafka serve server.properties` with the
filesystem store and every other setting at its default. A pinned trafka is the same plus
`--kafka-version` (ADR 43). SCRAM users are added as each broker's operators would: Kafka's through
AlterUserScramCredentials, trafka's with `trafka user add` before it starts (a pinned release may
predate that API).
"""

from __future__ import annotations

import contextlib
import json
import pathlib
import subprocess
import sys
import time
from collections.abc import Iterator

import attrs

from .suites import Endpoints, Suite

KAFKA = "kafka"
TRAFKA = "trafka"
# The releases franz-go's CI pins its kfake to (integration-test-kfake's matrix).
KFAKE_PINS = ("0.11", "1.1", "2.8", "3.9", "4.1")


@attrs.frozen
class Target:
    name: str  # "kafka", "trafka", "trafka-2.8"
    kafka_version: str  # the release the suite is told it talks to (kafka-go's KAFKA_VERSION)
    pin: str | None = None  # trafka's `--kafka-version`

    @property
    def is_kafka(self) -> bool:
        return self.name == KAFKA


def target(name: str) -> Target:
    """ "kafka", "trafka" or "trafka-<release>"."""
    if name == KAFKA:
        from tests.kafka.reference import kafka_version

        return Target(KAFKA, kafka_version())
    if name == TRAFKA:
        from tests.kafka.reference import kafka_version

        return Target(TRAFKA, kafka_version())
    if name.startswith(TRAFKA + "-"):
        release = name.removeprefix(TRAFKA + "-")
        return Target(name, release + ".0", pin=release)
    raise ValueError(f"unknown target {name!r}: kafka, trafka or trafka-<release>")


@contextlib.contextmanager
def running(target: Target, suite: Suite, folder: pathlib.Path) -> Iterator[Endpoints]:
    folder.mkdir(parents=True, exist_ok=True)
    if target.is_kafka:
        with _kafka(suite, folder) as endpoints:
            yield endpoints
    else:
        with _trafka(target, suite, folder) as endpoints:
            yield endpoints


@contextlib.contextmanager
def _kafka(suite: Suite, folder: pathlib.Path) -> Iterator[Endpoints]:
    from tests.kafka.reference import ReferenceKafka

    ports: dict[str, int] = {}
    properties = dict(suite.properties)
    if suite.fixed_ports:
        ports = {"PLAINTEXT": suite.fixed_ports[0], "SASL_PLAINTEXT": suite.fixed_ports[1], "CONTROLLER": 9094}
        if "advertised.listeners" in properties:  # Kafka's combined node advertises its controller too
            properties["advertised.listeners"] += ",CONTROLLER://localhost:9094"
    with ReferenceKafka(folder, properties=properties, ports=ports) as kafka:
        _add_scram_users_by_api(kafka.bootstrap, suite)
        yield Endpoints(kafka.bootstrap, kafka.listeners["SASL_PLAINTEXT"])


def _add_scram_users_by_api(bootstrap: str, suite: Suite) -> None:
    if not suite.scram_users:
        return
    from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for user, mechanism, password in suite.scram_users:  # Kafka refuses one user twice in a request
        info = ScramCredentialInfo(getattr(ScramMechanism, mechanism.replace("-", "_")), 4096)
        upsert = UserScramCredentialUpsertion(user, info, password.encode())
        for future in admin.alter_user_scram_credentials([upsert]).values():
            future.result(timeout=60)


@contextlib.contextmanager
def _trafka(target: Target, suite: Suite, folder: pathlib.Path) -> Iterator[Endpoints]:
    data_dir = folder / "data"
    for user, mechanism, password in suite.scram_users:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "trafka",
                "user",
                "add",
                user,
                "--mechanism",
                mechanism,
                "--data-dir",
                str(data_dir),
            ],
            input=password + "\n",
            text=True,
            check=True,
            capture_output=True,
        )
    plaintext, sasl = suite.fixed_ports or (0, 0)
    properties = {
        **suite.properties,
        "listeners": f"PLAINTEXT://127.0.0.1:{plaintext},SASL_PLAINTEXT://127.0.0.1:{sasl}",
    }
    config = folder / "server.properties"
    config.write_text("".join(f"{key}={value}\n" for key, value in properties.items()))
    ready = folder / "ready.json"
    command = [sys.executable, "-m", "trafka", "serve", str(config), "--data-dir", str(data_dir)]
    command += ["--ready-file", str(ready)]
    if target.pin:
        command += ["--kafka-version", target.pin]
    with open(folder / "trafka.log", "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while not ready.exists():
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("trafka did not start:\n" + (folder / "trafka.log").read_text()[-3000:])
                time.sleep(0.05)
            listeners = json.loads(ready.read_text())["listeners"]
            yield Endpoints(listeners["PLAINTEXT"]["advertised"], listeners["SASL_PLAINTEXT"]["advertised"])
        finally:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
