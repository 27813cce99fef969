"""HTTP Basic authentication for the Schema Registry's routes when the console requires a login.

Confluent's Schema Registry with `authentication.method=BASIC` is what its clients expect: they send
`Authorization: Basic base64(user:password)` on every request (`basic.auth.user.info=user:password`
in SchemaRegistryClient and the serializers). The user and password are checked against the same
users as the console's login; a request without them, or with wrong ones, is answered 401 with a
`WWW-Authenticate` challenge and Confluent's error body, `{"error_code": 401, "message": "Unauthorized"}`.
Wrong credentials are answered after `connection.failed.authentication.delay.ms`, as a failed login.
The registry itself is not touched: each route's endpoint is wrapped.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence

import trio
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from .login import Endpoint
from .view import ConsoleSecurity

REGISTRY_CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
REALM = "SchemaRegistry"


def unauthorized() -> Response:
    return Response(
        json.dumps({"error_code": 401, "message": "Unauthorized"}),
        status_code=401,
        media_type=REGISTRY_CONTENT_TYPE,
        headers={"WWW-Authenticate": f'Basic realm="{REALM}"'},
    )


def basic_credentials(header: str) -> tuple[str, str] | None:
    """(user, password) of an `Authorization: Basic ...` header, or None when it is not one."""
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, sep, password = decoded.partition(":")
    return (user, password) if sep else None


def requiring_basic_auth(security: ConsoleSecurity, endpoint: Endpoint) -> Endpoint:
    async def authenticated(request: Request) -> Response:
        header = request.headers.get("authorization")
        if header is None:
            return unauthorized()
        credentials = basic_credentials(header)
        if credentials is None or not security.verify(*credentials):
            await trio.sleep(security.failed_authentication_delay_ms / 1000)
            return unauthorized()
        return await endpoint(request)

    return authenticated


def with_basic_auth(security: ConsoleSecurity, routes: Sequence[BaseRoute]) -> list[BaseRoute]:
    """The same routes, each endpoint behind Basic authentication."""
    wrapped: list[BaseRoute] = []
    for route in routes:
        if not isinstance(route, Route):
            raise TypeError(f"only plain routes can be wrapped, not {route!r}")
        wrapped.append(
            Route(
                route.path,
                requiring_basic_auth(security, route.endpoint),
                methods=sorted(route.methods or ()),
                name=route.name,
            )
        )
    return wrapped
