"""Side by side: the same request to Apache Kafka and to trafka, the two answers normalised and compared
field by field (error messages included). A difference is either listed in `divergences.py`, with its
reason, or fails the test.

Normalised away, because they differ between any two Kafka clusters: cluster ids, topic ids, member
ids, producer ids, hosts and ports, throttle times, timestamps, log dir paths and session ids. Lists of
structures are compared as multisets (sorted by their normalised form), since Kafka answers most of
them in hash-map order.
"""

from __future__ import annotations

import json
import re
import socket
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from . import divergences

# field name -> placeholder, for values that are each cluster's own
_OWN = {
    "cluster_id": "<cluster-id>",
    "topic_id": "<topic-id>",
    "member_id": "<member-id>",
    "leader": "<member-id>",
    "member_epoch": "<member-epoch>",
    "producer_id": "<producer-id>",
    "host": "<host>",
    "port": "<port>",
    "throttle_time_ms": "<throttle>",
    "log_dir": "<log-dir>",
    "path": "<log-dir>",
    "session_id": "<session-id>",
    "incarnation_id": "<incarnation>",
    "total_bytes": "<bytes>",
    "usable_bytes": "<bytes>",
    "size": "<bytes>",
    "finalized_features_epoch": "<metadata-offset>",
}
_ZERO_UUID = "00000000-0000-0000-0000-000000000000"
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _placeholder(key: str, value: Any) -> Any:
    if key == "finalized_features_epoch" and isinstance(value, int) and value >= 0:
        return _OWN[key]
    if key in _OWN and value not in (None, "", -1, 0, _ZERO_UUID):
        return _OWN[key]
    if "timestamp" in key and isinstance(value, int) and value > 0:
        return "<time>"
    if isinstance(value, str) and _UUID.match(value) and value != _ZERO_UUID:
        return "<uuid>"
    return value


def normalise(value: Any, key: str = "") -> Any:
    if hasattr(value, "to_dict"):
        value = value.to_dict()
    if isinstance(value, dict):
        return {k: normalise(v, k) for k, v in value.items() if k not in ("unknown_tags", "tags")}
    if isinstance(value, (list, tuple)):
        items = [normalise(item, key) for item in value]
        if items and all(isinstance(item, dict) for item in items):
            items.sort(key=lambda item: json.dumps(item, sort_keys=True, default=str))
        return items
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if hasattr(value, "hex") and type(value).__name__ == "UUID":
        value = str(value)
    return _placeholder(key, value)


@dataclass(frozen=True)
class Difference:
    path: str
    kafka: Any
    trafka: Any

    def __str__(self) -> str:
        return f"{self.path}: kafka={self.kafka!r} trafka={self.trafka!r}"


_IDENTITY = (
    "api_key",
    "name",
    "topic",
    "topic_name",
    "partition_index",
    "partition",
    "resource_name",
    "group_id",
    "transactional_id",
    "key",
    "entity_type",
    "member_id",
)


def _identity(*lists: list[Any]) -> str | None:
    """The field that tells the elements of each list of structures apart, if one does."""
    if not any(lists) or not all(isinstance(item, dict) for items in lists for item in items):
        return None
    for name in _IDENTITY:
        if all(_unique([item.get(name, "<absent>") for item in items]) for items in lists):
            return name
    return None


def _unique(values: list[Any]) -> bool:
    return "<absent>" not in values and len(set(map(str, values))) == len(values)


def differences(kafka: Any, trafka: Any, path: str = "") -> Iterator[Difference]:
    """Field by field; lists of structures matched by their identity field (`api_keys[api_key=27]`)."""
    if isinstance(kafka, dict) and isinstance(trafka, dict):
        for key in sorted(set(kafka) | set(trafka)):
            yield from differences(kafka.get(key, "<absent>"), trafka.get(key, "<absent>"), f"{path}.{key}".lstrip("."))
    elif isinstance(kafka, list) and isinstance(trafka, list):
        identity = _identity(kafka, trafka)
        if identity is not None:
            ks = {str(item[identity]): item for item in kafka}
            ts = {str(item[identity]): item for item in trafka}
            for name in sorted(set(ks) | set(ts), key=lambda n: (len(n), n)):
                sub = f"{path}[{identity}={name}]"
                yield from differences(ks.get(name, "<absent>"), ts.get(name, "<absent>"), sub)
        elif len(kafka) == len(trafka):
            for index, (k, t) in enumerate(zip(kafka, trafka, strict=True)):
                yield from differences(k, t, f"{path}[{index}]")
        else:
            yield Difference(path, kafka, trafka)
    elif kafka != trafka:
        yield Difference(path, kafka, trafka)


@dataclass
class Report:
    """What the session compared: scenarios, identical ones, and the divergences applied."""

    scenarios: list[str] = field(default_factory=list)
    identical: int = 0
    explained: dict[str, list[str]] = field(default_factory=dict)


REPORT = Report()


def compare(scenario: str, kafka: Any, trafka: Any) -> None:
    """Fail unless every difference between the two normalised answers is a listed divergence."""
    found = list(differences(normalise(kafka), normalise(trafka)))
    unexplained = [d for d in found if divergences.reason(scenario, d.path) is None]
    REPORT.scenarios.append(scenario)
    if not found:
        REPORT.identical += 1
    else:
        REPORT.explained[scenario] = [str(d) for d in found if d not in unexplained]
    assert not unexplained, f"{scenario}: unlisted divergences from Apache Kafka:\n" + "\n".join(
        f"  {d}" for d in unexplained
    )


# -- the two brokers -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    name: str
    bootstrap: str
    sasl_bootstrap: str
    log: Callable[[], str]


@dataclass(frozen=True)
class Pair:
    kafka: Node
    trafka: Node

    def each(self, run: Callable[[Node], Any]) -> tuple[Any, Any]:
        """`run` against Kafka, then against trafka."""
        return run(self.kafka), run(self.trafka)

    def raw(self, scenario: str, make_request: Callable[[], Any], response_class: Any, version: int) -> tuple[Any, Any]:
        """One request, built afresh for each broker, over a new connection; the answers compared."""

        def send(node: Node) -> Any:
            with Wire(node.bootstrap) as wire:
                return wire.request(make_request(), response_class, version)

        kafka, trafka = self.each(send)
        compare(scenario, kafka, trafka)
        return kafka, trafka


class Wire:
    """A blocking connection that sends kafka-python protocol objects (as tests/integration/wire.py)."""

    def __init__(self, bootstrap: str, timeout: float = 30.0) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.correlation_id = 0

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()

    def request(self, request: Any, response_class: Any, version: int) -> Any:
        self.correlation_id += 1
        request.with_header(correlation_id=self.correlation_id, client_id="differential")
        self.sock.sendall(bytes(request.encode(version=version, header=True, framed=True)))
        (size,) = struct.unpack(">i", self._read(4))
        frame = self._read(size)
        try:
            return response_class.decode(frame, version=version, header=True)
        except Exception:  # an answer not at the version asked (an error with a v0 body): its raw bytes
            return {"undecodable_at_version": version, "body": frame[4:].hex()}

    def closed_by_peer(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except (ConnectionResetError, BrokenPipeError):
            return True

    def _read(self, n: int) -> bytes:
        chunks = []
        while n:
            chunk = self.sock.recv(n)
            if not chunk:
                raise ConnectionError("closed by peer")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)
