"""The web console's routes: server-rendered pages (Jinja2 templates shipped in the package) and the
POST actions behind them.

Every state-changing request is a POST carrying the console's CSRF token (a secret of the session, or
of the process when the console is open, written only into the console's own pages, so another site
cannot forge one). Each page and action asks the request's `Access` first (access.py): a denied page
is a 403 page saying so, a denied action changes nothing. Deleting a topic and resetting offsets go
through a confirmation page first. Handlers are `async def` and run on the broker's Trio thread (see
app.py).
"""

from __future__ import annotations

import datetime
import secrets
from collections.abc import Callable
from functools import partial
from urllib.parse import parse_qs, quote

import jinja2
import trio
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from trafka.domain.configs import ConfigEntry, ConfigSource
from trafka.domain.security.acls import CLUSTER_NAME, AclOperation, ResourceType
from trafka.domain.topics import TopicPartition

from . import actions, pages
from .access import Access
from .charts import Series, line_chart
from .history import History
from .login import csrf_of
from .message_browser import browse_off_the_loop
from .view import BrokerInfo, BrokerView

MAX_FORM_BYTES = 64 * 1024
MAX_PAGE_RECORDS = 500
DEFAULT_PAGE_RECORDS = 50


def _ts(ms: int) -> str:
    if ms is None or ms < 0:
        return "–"
    moment = datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{ms % 1000:03d} UTC"


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def _duration(ms: int) -> str:
    if ms < 0:
        return "forever"
    seconds = ms // 1000
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size} {unit}"
    return f"{seconds} s" if seconds else f"{ms} ms"


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(__package__, "templates"),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
    )
    env.filters.update(ts=_ts, size=_size, duration=_duration, q=lambda s: quote(str(s), safe=""))
    return env


def access_of(request: Request) -> Access:
    return request.state.access


def renderer(view: BrokerView) -> Callable[..., HTMLResponse]:
    """`page(request, template, status_code=200, **values)`: a template rendered for this request's user."""
    env = _environment()

    def page(
        request: Request, template: str, status_code: int = 200, info: BrokerInfo | None = None, **values
    ) -> HTMLResponse:
        info = view.info() if info is None else info  # given when rendering in a worker thread
        html = env.get_template(template).render(
            csrf=csrf_of(request), user=access_of(request).user, broker=info, **values
        )
        return HTMLResponse(html, status_code=status_code)

    return page


def console_routes(view: BrokerView, history: History) -> list[Route]:
    """The pages and actions; each expects `request.state.access` and `.csrf`, set by `Login.guard`."""
    page = renderer(view)

    def denied(request: Request, what: str) -> HTMLResponse:
        user = access_of(request).user
        return page(
            request, "message.html", 403, title="Not authorized", message=f"User:{user} is not authorized to {what}."
        )

    async def form_of(request: Request) -> dict[str, str] | None:
        """The POSTed form, or None when it is too large or its CSRF token is wrong."""
        body = await request.body()
        if len(body) > MAX_FORM_BYTES:
            return None
        form = {k: v[-1] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
        if not secrets.compare_digest(form.get("csrf", ""), csrf_of(request)):
            return None
        return form

    def forbidden(request: Request) -> HTMLResponse:
        return page(
            request,
            "message.html",
            403,
            title="Forbidden",
            message="The form is stale or did not come from this console: reload the page and try again.",
        )

    def topic_rows(request: Request) -> list[pages.TopicRow]:
        """The topics the user may describe, as Metadata lists them."""
        access = access_of(request)
        return [row for row in pages.topic_rows(view) if access.describes_topic(row.name)]

    async def topics(request: Request) -> Response:
        return page(request, "topics.html", rows=topic_rows(request), error=None, form={})

    async def create_topic(request: Request) -> Response:
        form = await form_of(request)
        if form is None:
            return forbidden(request)
        name = form.get("name", "").strip()
        if not access_of(request).may_create_topic(name):
            return denied(request, f"create the topic '{name}'")
        try:
            partitions = int(form.get("partitions") or "-1")
            configs = dict(line.split("=", 1) for line in form.get("configs", "").splitlines() if line.strip())
            actions.create_topic(view, name, partitions, {k.strip(): v.strip() for k, v in configs.items()})
        except ValueError:
            return page(
                request,
                "topics.html",
                400,
                rows=topic_rows(request),
                form=form,
                error="Partitions is a number and each config line is name=value.",
            )
        except actions.ConsoleError as error:
            return page(request, "topics.html", 400, rows=topic_rows(request), error=str(error), form=form)
        return RedirectResponse(f"/topics/{quote(name, safe='')}", status_code=303)

    async def topic(request: Request) -> Response:
        name = request.path_params["name"]
        access = access_of(request)
        if not access.describes_topic(name):
            return denied(request, f"describe the topic '{name}'")
        found = view.catalog.get(name)
        if found is None:
            return page(
                request, "message.html", 404, title="No such topic", message=f"The topic '{name}' does not exist."
            )
        row = pages.topic_row(view, found)
        query = request.query_params
        try:
            partition = int(query.get("partition", "0"))
            limit = min(max(int(query.get("limit", DEFAULT_PAGE_RECORDS)), 1), MAX_PAGE_RECORDS)
            mode = query.get("mode", "latest")
            position = query.get("position", "")
        except ValueError:
            return page(request, "message.html", 400, title="Bad request", message="partition and limit are numbers.")
        tp = TopicPartition(name, partition)
        marks = view.replicas.watermarks(tp)
        error = None
        records = []
        start = 0
        may_read = access.allows(AclOperation.READ, ResourceType.TOPIC, name)
        if marks is None:
            error = f"Partition {partition} does not exist."
        elif may_read:
            start, error = _start_offset(view, tp, marks, mode, position, limit)
            if error is None:
                records = await browse_off_the_loop(view, tp, start, limit)
        # A page of records can be megabytes of HTML: rendered in a worker thread, from values read here
        # (the topic's name, id and flag are immutable; the rest are snapshots).
        values = {
            "topic": found,
            "row": row,
            "records": records,
            "may_read": may_read,
            "configs": pages.topic_configs(found)
            if access.allows(AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, name)
            else None,
            "may_delete": access.allows(AclOperation.DELETE, ResourceType.TOPIC, name),
            "partition": partition,
            "limit": limit,
            "mode": mode,
            "position": position,
            "start": start,
            "marks": marks,
            "error": error,
        }
        return await trio.to_thread.run_sync(partial(page, request, "topic.html", info=view.info(), **values))

    async def confirm_delete(request: Request) -> Response:
        name = request.path_params["name"]
        if not access_of(request).allows(AclOperation.DELETE, ResourceType.TOPIC, name):
            return denied(request, f"delete the topic '{name}'")
        topic = view.catalog.get(name)
        if topic is None:
            return page(
                request, "message.html", 404, title="No such topic", message=f"The topic '{name}' does not exist."
            )
        return page(request, "confirm_delete.html", name=name, row=pages.topic_row(view, topic))

    async def delete_topic(request: Request) -> Response:
        form = await form_of(request)
        if form is None:
            return forbidden(request)
        name = request.path_params["name"]
        if not access_of(request).allows(AclOperation.DELETE, ResourceType.TOPIC, name):
            return denied(request, f"delete the topic '{name}'")
        try:
            actions.delete_topic(view, name)
        except actions.ConsoleError as error:
            return page(request, "message.html", 400, title="Not deleted", message=str(error))
        return RedirectResponse("/?deleted=" + quote(name, safe=""), status_code=303)

    async def groups(request: Request) -> Response:
        access = access_of(request)
        rows = [
            access.visible_group(row)
            for row in pages.group_rows(view)
            if access.allows(AclOperation.DESCRIBE, ResourceType.GROUP, row.group_id)
        ]
        return page(request, "groups.html", rows=rows)

    def described_group(request: Request, group_id: str) -> Response | tuple[pages.GroupRow, str]:
        """The group as the user may see it and its lag chart, or the page saying why not."""
        access = access_of(request)
        if not access.allows(AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
            return denied(request, f"describe the group '{group_id}'")
        row = pages.group_row(view, group_id)
        if row is None:
            return page(
                request, "message.html", 404, title="No such group", message=f"Group {group_id} does not exist."
            )
        visible = access.visible_group(row)
        return visible, lag_chart(visible, with_history=visible == row)

    def group_configs(request: Request, group_id: str) -> list[ConfigEntry] | None:
        """The GROUP config resource's entries, overrides first; None without DESCRIBE_CONFIGS on it."""
        if not access_of(request).allows(AclOperation.DESCRIBE_CONFIGS, ResourceType.GROUP, group_id):
            return None
        entries = view.group_configs(group_id)
        return sorted(entries, key=lambda e: (e.source is not ConfigSource.GROUP_CONFIG, e.name))

    async def group(request: Request) -> Response:
        found = described_group(request, request.path_params["group_id"])
        if isinstance(found, Response):
            return found
        row, chart = found
        return page(
            request,
            "group.html",
            group=row,
            chart=chart,
            plan=None,
            error=None,
            target="earliest",
            timestamp="",
            configs=group_configs(request, row.group_id),
        )

    def lag_chart(row: pages.GroupRow, with_history: bool) -> str:
        """The sampled history (of the whole group's lag: kept from a user who may not see every topic),
        ending with the lag as it is now."""
        sampled = history.lag.get(row.group_id, ()) if with_history else ()
        points = [*sampled, (view.clock_ms(), row.total_lag)]
        return line_chart([Series(f"total lag of {row.group_id}", points)], " records")

    async def reset(request: Request) -> Response:
        form = await form_of(request)
        if form is None:
            return forbidden(request)
        group_id = form.get("group", "")
        found = described_group(request, group_id)
        if isinstance(found, Response):
            return found
        row, chart = found
        target, timestamp = form.get("target", ""), form.get("timestamp", "").strip()
        try:
            plan = actions.plan_reset(view, group_id, target, _parse_time(timestamp) if timestamp else None)
            if not access_of(request).may_reset(group_id, {r.tp.topic for r in plan}):
                return denied(
                    request, f"reset the offsets of the group '{group_id}' (READ on it and on each of its topics)"
                )
            if form.get("confirm") == "yes":
                actions.reset_offsets(view, group_id, plan)
                return RedirectResponse(f"/groups/{quote(group_id, safe='')}", status_code=303)
        except (actions.ConsoleError, ValueError) as error:
            return page(
                request,
                "group.html",
                400,
                configs=group_configs(request, group_id),
                group=row,
                chart=chart,
                plan=None,
                error=str(error),
                target=target,
                timestamp=timestamp,
            )
        return page(
            request,
            "group.html",
            group=row,
            chart=chart,
            plan=plan,
            error=None,
            target=target,
            timestamp=timestamp,
            configs=group_configs(request, group_id),
        )

    async def delete_group(request: Request) -> Response:
        """DeleteGroups from the console: a classic, consumer or share group, while Empty. Asked once
        more before it is done (`confirm=yes`)."""
        form = await form_of(request)
        if form is None:
            return forbidden(request)
        group_id = form.get("group", "")
        found = described_group(request, group_id)
        if isinstance(found, Response):
            return found
        row, chart = found
        if not access_of(request).allows(AclOperation.DELETE, ResourceType.GROUP, group_id):
            return denied(request, f"delete the group '{group_id}'")
        values = {
            "group": row,
            "chart": chart,
            "plan": None,
            "target": "earliest",
            "timestamp": "",
            "configs": group_configs(request, group_id),
        }
        if form.get("confirm") != "yes":
            return page(request, "group.html", error=None, deleting=True, **values)
        try:
            actions.delete_group(view, group_id)
        except actions.ConsoleError as error:
            return page(request, "group.html", 400, error=str(error), **values)
        return RedirectResponse("/groups?deleted=" + quote(group_id, safe=""), status_code=303)

    async def broker(request: Request) -> Response:
        if not access_of(request).allows(AclOperation.DESCRIBE_CONFIGS, ResourceType.CLUSTER, CLUSTER_NAME):
            return denied(request, "describe the broker's configs")
        rates = history.rates(view.clock_ms())
        records = line_chart([Series("records in /s", [(r.at_ms, r.records) for r in rates])], "/s")
        traffic = line_chart(
            [
                Series("bytes in /s", [(r.at_ms, r.bytes_in) for r in rates]),
                Series("bytes out /s", [(r.at_ms, r.bytes_out) for r in rates], "s1"),
            ],
            " B/s",
        )
        info = view.info()
        uptime_s = max(view.clock_ms() - info.started_ms, 0) // 1000
        return page(
            request,
            "broker.html",
            quotas=pages.quota_rows(view),
            quota_usage=pages.quota_usage_rows(view),
            uptime=f"{uptime_s // 3600}h {uptime_s % 3600 // 60}m {uptime_s % 60}s",
            records_chart=records,
            bytes_chart=traffic,
            http_url=f"{request.url.scheme}://{request.url.netloc}",
        )

    return [
        Route("/", topics, methods=["GET"]),
        Route("/topics", create_topic, methods=["POST"]),
        Route("/topics/{name}", topic, methods=["GET"]),
        Route("/topics/{name}/delete", confirm_delete, methods=["GET"]),
        Route("/topics/{name}/delete", delete_topic, methods=["POST"]),
        Route("/groups", groups, methods=["GET"]),
        Route("/groups/reset", reset, methods=["POST"]),
        Route("/groups/delete", delete_group, methods=["POST"]),
        Route("/groups/{group_id:path}", group, methods=["GET"]),
        Route("/broker", broker, methods=["GET"]),
    ]


def _parse_time(text: str) -> int:
    """Milliseconds since the epoch, or an ISO 8601 time (UTC unless it names a zone)."""
    if text.lstrip("-").isdigit():
        return int(text)
    moment = datetime.datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return int(moment.timestamp() * 1000)


def _start_offset(
    view: BrokerView, tp: TopicPartition, marks: tuple[int, int], mode: str, position: str, limit: int
) -> tuple[int, str | None]:
    start, end = marks
    try:
        if mode == "offset":
            offset = int(position or start)
            return min(max(offset, start), end), None
        if mode == "timestamp":
            found = view.replicas.list_offset(tp, _parse_time(position))
            return (end if found.offset < 0 else found.offset), None
    except ValueError:
        return start, f"Not an offset or a time: {position!r}."
    return max(start, end - limit), None
