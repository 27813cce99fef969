"""The operator commands' Kafka client: blocking sockets and trafka's schema codec (ADR 101).

Every request and response is a class `trafka.schema_codec.messages` compiles from Kafka's JSON
schemas, the same classes the broker serves with: no hand-written encoder, and no client library
between the user's `trafka topic list` and the broker (kafka-python stays the user's to pick, ADR 92).
A `Client` opens one connection per broker on first use, asks each for ApiVersions, and sends every
request at the highest version both sides know. `send` names the request by its schema ("Metadata"),
takes its fields as keywords, and returns the decoded response; `to` picks the broker: any (the
bootstrap one), a node id, the controller, or a group's coordinator (`coordinator`).

Errors: a broker that does not answer is `Unreachable`; `raise_for(code)` turns an error code into
`BrokerError` carrying Kafka's name for it (from the broker's one error vocabulary,
`trafka.domain.errors`), which `client.run_operator` prints as one line.
"""

from __future__ import annotations

import socket
import struct
import time
from typing import Any

from trafka.schema_codec.messages import compiled

CLIENT_SOFTWARE = "trafka-cli"
_SIZE = struct.Struct(">i")
_MAX_FRAME = 256 << 20


class Unreachable(Exception):
    """No broker answered (connection refused, timed out, or closed mid-answer)."""


class BrokerError(Exception):
    """An error code a broker answered with, in Kafka's words: `NAME: message`."""

    def __init__(self, code: int, detail: str | None = None) -> None:
        self.code = code
        self.name = error_name(code)
        text = f"{self.name}: {detail or error_message(code)}"
        super().__init__(text)


UNSUPPORTED_VERSION = 35
BROKER_NOT_AVAILABLE = 8
COORDINATOR_NOT_READY = (14, 15)  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE


def error_name(code: int) -> str:
    # The vocabulary is imported when an error is met: `trafka.domain` is not light, and most commands
    # meet none.
    from trafka.domain.errors import ErrorCode

    try:
        return ErrorCode.of(code).name
    except KeyError:
        return f"ERROR_{code}"


def error_message(code: int) -> str:
    from trafka.domain.errors import ErrorCode

    try:
        return ErrorCode.of(code).message
    except KeyError:
        return f"Kafka error code {code}"


def raise_for(code: int, detail: str | None = None) -> None:
    if code:
        raise BrokerError(code, detail)


def _address(text: str) -> tuple[str, int]:
    host, sep, port = text.strip().rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"bootstrap server {text!r}: expected HOST:PORT")
    return host.strip("[]") or "localhost", int(port)


class Connection:
    """One broker's socket, its API versions, and requests sent one at a time."""

    def __init__(self, address: tuple[str, int], timeout: float, client_id: str) -> None:
        self.address = address
        self._timeout = timeout
        self._client_id = client_id
        self._correlation = 0
        try:
            self._sock = socket.create_connection(address, timeout=timeout)
        except OSError as exc:
            raise Unreachable(f"{address[0]}:{address[1]}: {exc.strerror or exc}") from None
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.versions: dict[int, tuple[int, int]] = {}
        self._api_versions()

    def _api_versions(self) -> None:
        request = compiled("ApiVersionsRequest")
        answer = self.request(
            request, 3, client_software_name=CLIENT_SOFTWARE, client_software_version=_software_version()
        )
        if answer.error_code == UNSUPPORTED_VERSION:  # an older broker: v0 says what it has
            answer = self.request(request, 0)
        raise_for(answer.error_code)
        self.versions = {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}

    def version(self, cls: Any, cap: int | None = None) -> int:
        """The highest version of `cls` this broker and the codec both know (and at most `cap`)."""
        low, high = self.versions.get(cls.API_KEY, (0, -1))
        top = min(high, cls.max_version, cap if cap is not None else high)
        if top < low:
            raise BrokerError(UNSUPPORTED_VERSION, f"the broker does not serve {cls.__name__[:-7]}")
        return top

    def request(self, cls: Any, version: int, timeout: float | None = None, **fields: Any) -> Any:
        self._correlation += 1
        message = cls(version=version, **fields)
        message.with_header(self._correlation, self._client_id)
        response_cls = compiled(cls.__name__[: -len("Request")] + "Response")
        self._sock.settimeout(timeout if timeout is not None else self._timeout)
        try:
            self._sock.sendall(message.encode(version, header=True, framed=True))
            frame = self._read_frame()
        except (TimeoutError, OSError) as exc:
            self.close()
            raise Unreachable(f"{self.address[0]}:{self.address[1]}: {exc}") from None
        return response_cls.decode(frame, version, exact=False, header=True)

    def _read_exactly(self, size: int) -> bytes:
        chunks, left = [], size
        while left:
            chunk = self._sock.recv(min(left, 1 << 20))
            if not chunk:
                raise OSError("the broker closed the connection")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _read_frame(self) -> bytes:
        (size,) = _SIZE.unpack(self._read_exactly(4))
        if not 4 <= size <= _MAX_FRAME:
            raise OSError(f"a response frame of {size} bytes")
        return self._read_exactly(size)

    def close(self) -> None:
        self._sock.close()


def _software_version() -> str:
    from trafka._version import __version__

    return __version__


class Client:
    """Connections to a cluster's brokers, opened on first use and closed by `close`."""

    def __init__(self, bootstrap: str, timeout: float, client_id: str = CLIENT_SOFTWARE) -> None:
        self.bootstrap = [_address(part) for part in bootstrap.split(",") if part.strip()]
        if not self.bootstrap:
            raise ValueError("no bootstrap server given")
        self.timeout = timeout
        self.client_id = client_id
        self._connections: dict[int | None, Connection] = {}
        self.brokers: dict[int, tuple[str, int]] = {}
        self.controller_id = -1
        self.cluster_id: str | None = None

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()

    def connection(self, node: int | None = None) -> Connection:
        """The bootstrap broker's connection (None) or node `node`'s."""
        found = self._connections.get(node)
        if found is not None:
            return found
        if node is None:
            problem: Exception = Unreachable("no bootstrap server")
            deadline = time.monotonic() + self.timeout
            for address in self.bootstrap:
                try:
                    found = Connection(address, max(deadline - time.monotonic(), 0.1), self.client_id)
                    break
                except Unreachable as exc:
                    problem = exc
            if found is None:
                raise problem
        else:
            if node not in self.brokers:
                self.metadata([])
            if node not in self.brokers:
                raise BrokerError(BROKER_NOT_AVAILABLE, f"no broker {node} in the cluster's metadata")
            found = Connection(self.brokers[node], self.timeout, self.client_id)
        self._connections[node] = found
        return found

    def send(
        self, name: str, to: int | None = None, cap: int | None = None, wait: float | None = None, **fields: Any
    ) -> Any:
        """Request `name` (e.g. "Metadata") with `fields`, to node `to` (None: the bootstrap broker), at
        most at version `cap`; `wait` seconds for the answer (default: the client's timeout)."""
        cls = compiled(name + "Request")
        connection = self.connection(to)
        return connection.request(cls, connection.version(cls, cap), wait, **fields)

    def metadata(self, topics: list[str] | None, auto_create: bool = False) -> Any:
        """Metadata for `topics` (None: every topic; []: none, only the brokers); remembers the brokers."""
        Topic = compiled("MetadataRequest").MetadataRequestTopic
        wanted = None if topics is None else [Topic(name=t) for t in topics]
        answer = self.send(
            "Metadata",
            topics=wanted,
            allow_auto_topic_creation=auto_create,
            include_cluster_authorized_operations=False,
            include_topic_authorized_operations=False,
        )
        self.brokers = {b.node_id: (b.host, b.port) for b in answer.brokers}
        self.controller_id = answer.controller_id
        self.cluster_id = answer.cluster_id
        return answer

    def coordinator(self, group_id: str, key_type: int = 0) -> int:
        """The node that coordinates group `group_id` (key type 0) or a transactional id (1)."""
        connection = self.connection(None)
        cls = compiled("FindCoordinatorRequest")
        version = connection.version(cls)
        deadline = time.monotonic() + self.timeout
        while True:
            if version >= 4:
                answer = connection.request(cls, version, key_type=key_type, coordinator_keys=[group_id])
                (found,) = answer.coordinators
            else:
                found = connection.request(cls, version, key=group_id, key_type=key_type)
            # Kafka answers "not available" while it creates or loads `__consumer_offsets`: asked again
            if found.error_code not in COORDINATOR_NOT_READY or time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        raise_for(found.error_code, found.error_message)
        self.brokers[found.node_id] = (found.host, found.port)
        return int(found.node_id)
