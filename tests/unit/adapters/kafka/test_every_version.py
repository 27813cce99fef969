"""Every API the broker advertises answers a default request at every advertised version.

A handler that names a field the schema lacks at some version, or leaves one unset that the encoder
needs, fails here rather than in front of a client.
"""

from __future__ import annotations

import pytest
import trio

from trafka.adapters.kafka.api import NO_RESPONSE, CloseConnection, Deferred
from trafka.adapters.kafka.apis import build_registry
from trafka.adapters.kafka.request_context import ClientInfo
from trafka.adapters.kafka.wire.codec import encode_response
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters

REGISTRY = build_registry()
CASES = [
    (h.api_key, v) for _, low, high in REGISTRY.supported() for h in [REGISTRY.get(_)] for v in range(low, high + 1)
]


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=[f"{REGISTRY.get(k).name}-v{v}" for k, v in CASES])
async def test_default_request_gets_an_encodable_response(api_key, version):
    settings = load_settings(overrides={"storage": {"kind": "memory"}})
    ctx = bootstrap(settings, default_adapters(settings))
    ctx.services.catalog.create("existing", 2, 1)
    handler = REGISTRY.get(api_key)
    request = handler.request[version]()
    if api_key == 18 and version >= 3:  # empty software names are INVALID_REQUEST, answered with a v0 body
        request.client_software_name, request.client_software_version = "test", "1"
    try:
        outcome = handler.handle(ctx, request, version, ClientInfo("test", "127.0.0.1"))
    except CloseConnection:
        return
    if outcome is NO_RESPONSE:
        return
    if isinstance(outcome, Deferred):
        with trio.fail_after(5):
            outcome = await outcome.wait()
    encoded = encode_response(outcome, version, correlation_id=99)
    assert int.from_bytes(encoded[:4], "big") == len(encoded) - 4
    assert encoded[4:8] == (99).to_bytes(4, "big")  # the correlation id
    tagged = handler.response.flexible_version_q(version) and api_key != 18  # response header v1
    assert encoded[8:9] == b"\x00" or not tagged
    handler.response.decode(encoded[9 if tagged else 8 :], version=version)
