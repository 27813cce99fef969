"""The console's pieces against an in-process broker on the in-memory adapter: rendering, history,
actions, and the pages and forms over real HTTP (the browser tests drive the same pages in Chromium)."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request

import pytest
import trio

from tests.batches import make_batch
from trafka.adapters.http import run_listener
from trafka.adapters.http.actions import ConsoleError, plan_reset, reset_offsets
from trafka.adapters.http.charts import Series, line_chart
from trafka.adapters.http.history import LAG_WINDOW_MS, THROUGHPUT_WINDOW_MS, History
from trafka.adapters.http.message_browser import browse, render
from trafka.adapters.http.metrics import BrokerMetrics
from trafka.adapters.http.pages import decode_assignment
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.app.wiring.http import observe_broker
from trafka.domain.errors import ErrorCode
from trafka.domain.groups.group_metadata import CommittedOffset
from trafka.domain.groups.offsets import CommitRequest
from trafka.domain.groups.state import GroupState
from trafka.domain.topics import TopicPartition

T0 = 1_700_000_000_000


def test_values_render_as_json_text_or_hex():
    assert render(None).kind == "null"
    value = render(b'{"a": [1, 2]}')
    assert value.kind == "json" and value.json == '{\n  "a": [\n    1,\n    2\n  ]\n}' and value.auto == value.json
    assert render(b"plain words").kind == "text"
    assert render(b"{not json").kind == "text"
    binary = render(b"\x00\xff\x10")
    assert binary.kind == "hex" and binary.auto == "00 ff 10" and binary.text is None


def test_history_keeps_an_hour_of_lag_and_15_minutes_of_throughput():
    metrics = BrokerMetrics()
    lag = {"g": 5}
    history = History(metrics, lambda: dict(lag))
    history.sample(T0)
    metrics.partition_produced("t", ErrorCode.NONE, 10, 1000)
    history.sample(T0 + 5000)
    [rate] = history.rates()
    assert (rate.at_ms, rate.records, rate.bytes_in) == (T0 + 5000, 2.0, 200.0)
    metrics.partition_fetched("t", ErrorCode.NONE, 500)
    live = history.rates(T0 + 6000)[-1]
    assert (live.at_ms, live.records, live.bytes_out) == (T0 + 6000, 0.0, 500.0)
    history.sample(T0 + THROUGHPUT_WINDOW_MS + 5001)
    assert [t for t, _ in history.totals] == [T0 + THROUGHPUT_WINDOW_MS + 5001]
    assert len(history.lag["g"]) == 3
    del lag["g"]
    history.sample(T0 + LAG_WINDOW_MS + 6000)
    assert list(history.lag["g"]) == [(T0 + THROUGHPUT_WINDOW_MS + 5001, 5)]
    history.sample(T0 + 2 * LAG_WINDOW_MS + 6000)
    assert "g" not in history.lag


def test_charts_escape_labels_and_need_two_points():
    assert "Not enough samples" in line_chart([Series("x", [(0, 1)])])
    assert "Not enough samples" in line_chart([Series("x", [(0, 1)]), Series("y", [(5, 1)])])
    svg = line_chart([Series("<script>", [(0, 1), (1000, 3)])])
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "<polyline" in svg


def test_assignments_decode_as_consumer_protocol_or_not_at_all():
    data = bytes.fromhex("00000000000100017400000002000000000000000100000000")
    assert decode_assignment(data) == (TopicPartition("t", 0), TopicPartition("t", 1))
    assert decode_assignment(b"\x00\x00\xff") == ()
    assert decode_assignment(b"") == ()


@pytest.fixture
def broker():
    settings = load_settings(None, {}, {"storage": {"kind": "memory"}, "http": {"port": 0}})
    ctx = bootstrap(settings, default_adapters(settings))
    view = observe_broker(settings, ctx, ctx.services.clock_ms())
    return ctx, view


def produce(ctx, tp: TopicPartition, records) -> None:
    result = ctx.services.replicas.produce(tp, make_batch(records), ctx.services.clock_ms())
    assert result.error == 0, result


def test_browse_skips_control_batches_and_starts_inside_a_batch(broker):
    ctx, view = broker
    ctx.services.catalog.create("b", 1)
    tp = TopicPartition("b", 0)
    produce(ctx, tp, [(T0 + i, b"k%d" % i, b"v%d" % i) for i in range(5)])
    assert ctx.services.replicas.write_marker(tp, 7, 0, True, T0) == 0
    produce(ctx, tp, [(T0 + 9, None, b"after")])
    records = browse(view.replicas.fetch, tp, 3, 10)
    assert [(r.offset, r.key.auto, r.value.auto) for r in records] == [
        (3, "k3", "v3"),
        (4, "k4", "v4"),
        (6, "null", "after"),
    ]
    assert [r.offset for r in browse(view.replicas.fetch, tp, 0, 2)] == [0, 1]


def test_a_reset_is_planned_for_an_empty_group_only(broker):
    ctx, view = broker
    ctx.services.catalog.create("r", 2)
    for p in (0, 1):
        produce(ctx, TopicPartition("r", p), [(T0 + 1000 * i, None, b"x") for i in range(10)])
    offsets = tuple((TopicPartition("r", p), CommittedOffset(2)) for p in (0, 1))
    assert set(view.offsets.commit(CommitRequest("g", "", -1, None, offsets), T0).values()) == {0}
    plan = plan_reset(view, "g", "timestamp", T0 + 4500)
    assert [(r.tp.partition, r.current, r.target) for r in plan] == [(0, 2, 5), (1, 2, 5)]
    assert [r.target for r in plan_reset(view, "g", "timestamp", T0 + 60_000)] == [10, 10]
    assert [r.target for r in plan_reset(view, "g", "latest", None)] == [10, 10]
    reset_offsets(view, "g", plan_reset(view, "g", "earliest", None))
    assert {tp.partition: c.offset for tp, c in view.offsets.fetch("g", None).items()} == {0: 0, 1: 0}
    with pytest.raises(ConsoleError, match="Give a timestamp"):
        plan_reset(view, "g", "timestamp", None)
    with pytest.raises(ConsoleError, match="does not exist"):
        plan_reset(view, "nobody", "earliest", None)
    view.coordinator.group("g").state = GroupState.STABLE  # as if a consumer had joined
    with pytest.raises(ConsoleError, match="inactive, but the current state is Stable"):
        plan_reset(view, "g", "earliest", None)


def _http(url: str, form: dict | None = None) -> tuple[int, str]:
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    try:
        with urllib.request.urlopen(url, data=data, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


async def test_pages_and_forms_over_http(broker):
    ctx, view = broker
    ctx.services.catalog.create("orders", 1)
    produce(ctx, TopicPartition("orders", 0), [(T0, b"order-1", json.dumps({"qty": 3}).encode())])
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        host, port = await nursery.start(run_listener, view, "127.0.0.1", 0, stop)
        base = f"http://{host}:{port}"

        async def call(path: str, form: dict | None = None) -> tuple[int, str]:
            return await trio.to_thread.run_sync(_http, base + path, form)

        status, html = await call("/")
        assert status == 200 and 'data-topic="orders"' in html
        csrf = re.search(r'name="csrf" value="([^"]+)"', html).group(1)
        status, html = await call("/topics/orders")
        assert status == 200 and "order-1" in html and "&#34;qty&#34;: 3" in html
        assert (await call("/topics/orders?partition=9"))[1].count("Partition 9 does not exist") == 1
        assert (await call("/topics/orders?mode=timestamp&position=yesterday"))[0] == 200
        assert (await call("/topics", {"name": "x", "csrf": "forged"}))[0] == 403
        assert ctx.services.catalog.get("x") is None
        status, html = await call("/topics", {"name": "bad name!", "csrf": csrf})
        assert status == 400 and "topic name is invalid" in html.lower()  # Kafka's words (Topic.validate)
        status, html = await call(
            "/topics", {"name": "made", "partitions": "2", "csrf": csrf, "configs": "retention.ms=60000"}
        )
        assert status == 200 and ctx.services.catalog.get("made").partition_count == 2
        assert ctx.services.catalog.get("made").configs == {"retention.ms": "60000"}
        status, html = await call("/topics/made/delete")
        assert status == 200 and "cannot be undone" in html and ctx.services.catalog.get("made") is not None
        assert (await call("/topics/made/delete", {"csrf": "forged"}))[0] == 403
        status, html = await call("/topics/made/delete", {"csrf": csrf})
        assert status == 200 and ctx.services.catalog.get("made") is None and 'data-topic="made"' not in html
        for path in ("/groups", "/broker", "/static/console.css", "/metrics"):
            assert (await call(path))[0] == 200, path
        assert (await call("/static/nothing.js"))[0] == 404
        # Bad input: a clear page, nothing changed, the broker goes on.
        assert (await call("/topics/orders?partition=one"))[0] == 400
        assert (await call("/topics/orders?limit=-5"))[0] == 200  # clamped to 1..500
        status, html = await call("/topics", {"name": "big", "csrf": csrf, "configs": "x" * 70_000})
        assert status == 403 and ctx.services.catalog.get("big") is None
        status, html = await call("/topics", {"name": "cfg", "csrf": csrf, "configs": "no equals sign"})
        assert status == 400 and "name=value" in html and ctx.services.catalog.get("cfg") is None
        status, html = await call("/topics", {"name": "cfg", "csrf": csrf, "configs": "retention.ms=soon"})
        assert status == 400 and ctx.services.catalog.get("cfg") is None
        status, html = await call("/groups/reset", {"csrf": csrf, "group": "ghost", "target": "earliest"})
        assert status == 404
        status, html = await call("/topics/__consumer_offsets/delete", {"csrf": csrf})
        assert status in (400, 404)
        assert (await call("/healthz"))[0] == 200
        assert (await call("/groups/ghost"))[0] == 404
        stop.set()
