"""`trafka check`: an ApiVersions round trip against a running broker, for health checks.

It reads the host and port from the same sources as `serve` (config file, TRAFKA_* variables,
flags), so a container's health check follows a changed port. Exit 0 when the broker answers with
error code 0, 1 otherwise, with the reason on stderr.
"""

from __future__ import annotations

import socket
import struct
import sys

from trafka.schema_codec.messages import ApiVersionsRequest, ApiVersionsResponse

CHECK_VERSION = 3


def api_versions_round_trip(host: str, port: int, timeout: float) -> int:
    """The number of APIs the broker advertises; raises OSError or ValueError on failure."""
    request = ApiVersionsRequest(
        version=CHECK_VERSION, client_software_name="trafka-check", client_software_version="1"
    )
    request.with_header(correlation_id=1, client_id="trafka-check")
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(bytes(request.encode(header=True, framed=True)))
        size = struct.unpack(">i", _read(sock, 4))[0]
        response = ApiVersionsResponse.decode(_read(sock, size), version=CHECK_VERSION, header=True)
    if response.header.correlation_id != 1:
        raise ValueError(f"correlation id {response.header.correlation_id}, expected 1")
    if response.error_code != 0:
        raise ValueError(f"ApiVersions error code {response.error_code}")
    return len(response.api_keys)


def _read(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            raise ValueError("the broker closed the connection")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def run_check(host: str, port: int, timeout: float) -> int:
    if host in ("", "0.0.0.0", "::"):
        host = "localhost"
    try:
        count = api_versions_round_trip(host, port, timeout)
    except (OSError, ValueError, struct.error) as exc:
        print(f"trafka check: {host}:{port} is not answering: {exc}", file=sys.stderr)
        return 1
    print(f"trafka check: {host}:{port} is up, serving {count} APIs")
    return 0
