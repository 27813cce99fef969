"""The Starlette application: health, metrics, the console and its static assets.

Every endpoint is `async def`: Starlette runs plain functions in a worker thread, and the domain
services are not thread-safe, so nothing here may be synchronous. Static assets are read from the
package once and served from memory (no file I/O in threads either).
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Sequence

import trio
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from trafka.domain.security.passwords import UserCheck

from .basic_auth import basic_user, with_basic_auth
from .console import console_routes, renderer
from .guard import HttpGuard
from .history import History, total_lag_by_group
from .login import LOGIN_PATHS, MAX_LOGIN_FORM_BYTES, SESSION_COOKIE, Login
from .metrics import render_pushed
from .passwords import PasswordGate
from .view import BrokerView, HttpOptions

STATIC_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}


def _static_assets() -> dict[str, tuple[bytes, str]]:
    folder = importlib.resources.files(__package__) / "static"
    return {
        entry.name: (entry.read_bytes(), STATIC_TYPES[suffix])
        for entry in folder.iterdir()
        if (suffix := "." + entry.name.rsplit(".", 1)[-1]) in STATIC_TYPES
    }


def build_app(
    view: BrokerView,
    history: History | None = None,
    extra_routes: Sequence[BaseRoute] = (),
    options: HttpOptions = HttpOptions(),
) -> Starlette:
    """The application; `history` feeds the charts (a fresh, unsampled one if not given);
    `extra_routes` are other adapters' (the Schema Registry's), served beside the console's;
    `options` the listener's own settings (allowed hosts, body limits)."""
    if history is None:
        history = new_history(view)
    view.metrics.watch(view, view.quotas, view.clock_ms, view.telemetry)
    assets = _static_assets()
    gate = PasswordGate(view.security.prepare if view.security else _nobody, view.clock_ms)

    async def healthz(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok\n")

    async def readyz(request: Request) -> JSONResponse:
        r = view.readiness
        body = {
            "ready": r.ready,
            "log_dir_recovered": r.log_dir_recovered,
            "listeners_accepting": r.listeners_accepting,
            "shutting_down": r.shutting_down,
        }
        return JSONResponse(body, status_code=200 if r.ready else 503)

    rendering = trio.CapacityLimiter(1)  # one scrape's pushed metrics rendered at a time, off the loop

    async def metrics(request: Request) -> Response:
        if options.metrics_authentication and view.security is not None and login.session_of(request) is None:
            # http.metrics_authentication: the console's login, or HTTP Basic as Prometheus' basic_auth sends it
            user = await basic_user(view.security, gate, request)
            if isinstance(user, Response):
                return user
        body = generate_latest(view.metrics.registry)
        pushed = view.metrics.pushed_snapshot()  # clients' pushed metrics: copied here, rendered off the loop
        if pushed:
            body += await trio.to_thread.run_sync(render_pushed, pushed, limiter=rendering)
        return Response(body, media_type=CONTENT_TYPE_LATEST)

    async def static(request: Request) -> Response:
        found = assets.get(request.path_params["name"])
        if found is None:
            return PlainTextResponse("not found\n", status_code=404)
        body, media_type = found
        return Response(body, media_type=media_type, headers={"Cache-Control": "max-age=300"})

    login = Login(view.security, view.clock_ms, gate)
    console = [
        Route(route.path, login.guard(route.endpoint), methods=sorted(route.methods or ()), name=route.name)
        for route in console_routes(view, history)
    ]
    routes = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        Route("/static/{name}", static, methods=["GET"]),
        *login.routes(renderer(view)),
        *console,
        *(extra_routes if view.security is None else with_basic_auth(view.security, gate, extra_routes)),
    ]

    def body_limit(path: str) -> int:
        return MAX_LOGIN_FORM_BYTES if path in LOGIN_PATHS else options.max_request_bytes

    middleware = [Middleware(HttpGuard, allowed_hosts=options.allowed_hosts, body_limit=body_limit)]
    if view.security is not None:
        middleware.append(
            Middleware(
                SessionMiddleware,
                secret_key=view.security.session_secret,
                session_cookie=SESSION_COOKIE,
                max_age=max(view.security.session_lifetime_ms // 1000, 1),
                same_site="strict",
            )
        )
    return Starlette(routes=routes, middleware=middleware)


def _nobody(user: str) -> UserCheck:
    return UserCheck(user, (), (), ())


def new_history(view: BrokerView) -> History:
    return History(view.metrics, lambda: total_lag_by_group(view))
