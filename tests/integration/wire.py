"""A minimal blocking Kafka wire client for tests that need to send exact bytes."""

from __future__ import annotations

import socket
import struct


class WireClient:
    def __init__(self, bootstrap: str, timeout: float = 10.0) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.correlation_id = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def frame(self, request, version: int) -> bytes:
        self.correlation_id += 1
        request.with_header(correlation_id=self.correlation_id, client_id="wire-test")
        return bytes(request.encode(version=version, header=True, framed=True))

    def send(self, request, version: int) -> int:
        self.send_raw(self.frame(request, version))
        return self.correlation_id

    def receive(self, response_class, version: int):
        (size,) = struct.unpack(">i", self._read_exactly(4))
        body = self._read_exactly(size)
        return response_class.decode(body, version=version, header=True)

    def request(self, request, response_class, version: int):
        self.send(request, version)
        return self.receive(response_class, version)

    def is_closed_by_peer(self) -> bool:
        """True when the broker has closed the connection (EOF or reset)."""
        try:
            return self.sock.recv(1) == b""
        except (ConnectionResetError, BrokenPipeError):
            return True

    def _read_exactly(self, n: int) -> bytes:
        chunks = []
        while n:
            chunk = self.sock.recv(n)
            if not chunk:
                raise ConnectionError("closed by peer")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)
