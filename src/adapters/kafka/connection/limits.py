"""The bounds the Trio server keeps: request and response sizes, requests in flight per connection,
the shutdown grace period, and the connection limits (admission.py)."""

from __future__ import annotations

import attrs

from .admission import ConnectionLimits


@attrs.frozen
class ServerLimits:
    max_request_bytes: int = 100 * 1024 * 1024
    max_inflight_requests: int = 32
    max_queued_response_bytes: int = 64 * 1024 * 1024
    shutdown_grace_seconds: float = 10.0
    connections: ConnectionLimits = ConnectionLimits()
