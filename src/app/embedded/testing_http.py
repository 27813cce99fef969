"""`/testing/...` on the HTTP listener: the embedded broker's test controls for suites in other languages.

`trafka serve --memory --port 0 --http-port 0 --testing --ready-file F` (add `--brokers 3`,
`--kafka-version 2.8`, `--clock manual` as needed); the ready file names the HTTP address. JSON in and
out; an impossible request is a 400 with {"error": ...}; a POST or DELETE without the content type
`application/json` is a 415 (a cross-site form or `text/plain` POST cannot reach the controls). Off
unless `--testing` (`http.testing`):
these stop brokers and refuse requests on demand.

    POST   /testing/advance                {"seconds": 46}                 -> {"now_ms": ...}
    POST   /testing/intercept              {"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER",
                                            "times": 2}  (or "delay": 1.5, or "drop": true)
                                                                             -> {"id": 1}
    GET    /testing/intercept/{id}                                          -> {"calls": 2, "remaining": 0}
    DELETE /testing/intercept/{id}
    GET    /testing/cluster                                                 -> {"nodes": {...}, "live": [...]}
    POST   /testing/brokers/{node}/stop   and   /testing/brokers/{node}/start
    POST   /testing/move-leader            {"topic": "t", "partition": 0, "to": 2} -> {"leader_epoch": 1}
    POST   /testing/move-coordinator       {"group": "g", "to": 2}
    GET    /testing/records/{topic}                                         -> [{"partition", "offset", "key", "value"}]
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .intercepting import Interception, delay, drop, respond
from .running import BrokerError, RunningBroker

Endpoint = Callable[[Request], Awaitable[Response]]


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("utf-8", "replace")


def _json_content(request: Request) -> bool:
    return request.headers.get("content-type", "").split(";")[0].strip().lower() == "application/json"


def testing_routes(running: RunningBroker) -> list[Route]:
    interceptions: dict[int, Interception] = {}
    ids = itertools.count(1)

    def guarded(handle: Callable[[Request], Awaitable[Any]]) -> Endpoint:
        async def endpoint(request: Request) -> Response:
            if request.method != "GET" and not _json_content(request):
                # A web page may POST text/plain anywhere without asking (no CORS preflight); a JSON
                # content type needs a preflight this listener never grants (issue 42 #8).
                return JSONResponse({"error": "the content type must be application/json"}, status_code=415)
            try:
                result = await handle(request)
            except (BrokerError, ValueError, KeyError, TypeError) as exc:
                return JSONResponse({"error": str(exc)}, status_code=400)
            return JSONResponse(result if result is not None else {})

        return endpoint

    async def body(request: Request) -> dict[str, Any]:
        try:
            found = await request.json()
        except ValueError:
            raise ValueError("the body must be a JSON object") from None
        if not isinstance(found, dict):
            raise ValueError("the body must be a JSON object")
        return found

    async def advance(request: Request) -> Any:
        return {"now_ms": await running.advance(float((await body(request))["seconds"]))}

    async def intercept(request: Request) -> Any:
        asked = await body(request)
        if "error" in asked:
            verdict: Any = respond(error=asked["error"])
        elif asked.get("drop"):
            verdict = drop()
        elif "delay" in asked:
            verdict = delay(float(asked["delay"]))
        else:
            raise ValueError('intercept takes "error", "delay" or "drop"')
        times = asked.get("times")
        handle = running.intercept(asked["api"], lambda _: verdict, None if times is None else int(times))
        number = next(ids)
        interceptions[number] = handle
        return {"id": number}

    def interception(request: Request) -> Interception:
        number = int(request.path_params["id"])
        if number not in interceptions:
            raise KeyError(f"no interception {number}")
        return interceptions[number]

    async def describe_interception(request: Request) -> Any:
        handle = interception(request)
        return {"calls": len(handle.calls), "remaining": handle.remaining, "active": handle.active}

    async def remove_interception(request: Request) -> Any:
        interception(request).remove()
        return {}

    async def cluster(request: Request) -> Any:
        return {"nodes": {str(k): v for k, v in running.nodes().items()}, "live": running.live_nodes()}

    async def stop_broker(request: Request) -> Any:
        running.stop_broker(int(request.path_params["node"]))

    async def start_broker(request: Request) -> Any:
        running.start_broker(int(request.path_params["node"]))

    async def move_leader(request: Request) -> Any:
        asked = await body(request)
        return {"leader_epoch": running.move_leader(asked["topic"], int(asked["partition"]), int(asked["to"]))}

    async def move_coordinator(request: Request) -> Any:
        asked = await body(request)
        running.move_coordinator(asked["group"], int(asked["to"]))

    async def records(request: Request) -> Any:
        return [
            {"partition": r.partition, "offset": r.offset, "key": _text(r.key), "value": _text(r.value)}
            for r in running.records(request.path_params["topic"])
        ]

    return [
        Route("/testing/advance", guarded(advance), methods=["POST"]),
        Route("/testing/intercept", guarded(intercept), methods=["POST"]),
        Route("/testing/intercept/{id:int}", guarded(describe_interception), methods=["GET"]),
        Route("/testing/intercept/{id:int}", guarded(remove_interception), methods=["DELETE"]),
        Route("/testing/cluster", guarded(cluster), methods=["GET"]),
        Route("/testing/brokers/{node:int}/stop", guarded(stop_broker), methods=["POST"]),
        Route("/testing/brokers/{node:int}/start", guarded(start_broker), methods=["POST"]),
        Route("/testing/move-leader", guarded(move_leader), methods=["POST"]),
        Route("/testing/move-coordinator", guarded(move_coordinator), methods=["POST"]),
        Route("/testing/records/{topic}", guarded(records), methods=["GET"]),
    ]
