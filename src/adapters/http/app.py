"""The Starlette application: routes for health, metrics and the console.

Every endpoint is `async def`: Starlette runs plain functions in a worker thread, and the domain
services are not thread-safe, so nothing here may be synchronous. Static assets are read from the
package once and served from memory (no file I/O in threads either).
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from .view import BrokerView


def build_app(view: BrokerView) -> Starlette:
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

    view.metrics.watch(view)

    async def metrics(request: Request) -> Response:
        return Response(generate_latest(view.metrics.registry), media_type=CONTENT_TYPE_LATEST)

    routes = [
        Route("/metrics", metrics, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
    ]
    return Starlette(routes=routes)
